#include "policy/sim/metrics.h"

#include <cmath>

namespace duet {

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  double rank = std::ceil(p / 100.0 * static_cast<double>(sorted.size()));
  size_t i = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  if (i >= sorted.size()) i = sorted.size() - 1;
  return sorted[i];
}

nlohmann::ordered_json to_json(const SimResult& r, bool with_wall) {
  nlohmann::ordered_json j;
  j["ordering"] = r.ordering;
  j["placement"] = r.placement;
  j["oracle"] = r.oracle;
  j["ideal"] = r.ideal;
  j["seed"] = r.seed;
  j["total_gpus"] = r.total_gpus;
  j["jobs"] = r.jobs;
  j["avg_jct_s"] = r.avg_jct_s;
  j["p50_jct_s"] = r.p50_jct_s;
  j["p95_jct_s"] = r.p95_jct_s;
  j["p99_jct_s"] = r.p99_jct_s;
  j["avg_queue_s"] = r.avg_queue_s;
  j["max_wait_s"] = r.max_wait_s;
  j["makespan_s"] = r.makespan_s;
  j["fees_usd"] = r.fees_usd;
  j["energy_kwh"] = r.energy_kwh;
  j["gpu_util"] = r.gpu_util;
  j["busy_gpu_s"] = r.busy_gpu_s;
  j["preemptions"] = r.preemptions;
  j["events"] = r.events;
  nlohmann::ordered_json vc = nlohmann::ordered_json::object();
  for (const auto& [k, v] : r.vc_avg_jct_s) vc[k] = v;
  j["vc_avg_jct_s"] = vc;
  if (with_wall) {
    j["wall_s"] = r.wall_s;
    j["events_per_s"] = r.wall_s > 0 ? static_cast<double>(r.events) / r.wall_s : 0.0;
  }
  return j;
}

}  // namespace duet
