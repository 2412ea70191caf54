#include "policy/report/summary.h"

#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

namespace duet {

int best_non_oracle(const std::vector<SimResult>& rows) {
  int best = -1;
  for (size_t i = 0; i < rows.size(); ++i)
    if (!rows[i].oracle && (best < 0 || rows[i].avg_jct_s < rows[best].avg_jct_s)) best = static_cast<int>(i);
  return best;
}

static std::ofstream open_out(const std::string& path) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw std::runtime_error("cannot write " + path);
  return f;
}

void write_summary_md(const std::string& path, const EvalMeta& m, const std::vector<SimResult>& rows) {
  std::ofstream f = open_out(path);
  if (m.measured) {
    f << "# duet report\n\n";
    f << fmt::format("Measured on a Slurm cluster (sacct): `{}` ({} jobs{}), nodes `{}` ({} GPUs).\n\n", m.trace,
                     m.jobs, m.dropped ? fmt::format(", {} not started or not ended", m.dropped) : "", m.cluster,
                     m.total_gpus);
  } else {
    f << "# duet eval\n\n";
    f << fmt::format("Trace `{}` ({} jobs{}), cluster `{}` ({} GPUs), seed {}, {} model.\n\n", m.trace, m.jobs,
                     m.dropped ? fmt::format(", {} oversized left out", m.dropped) : "", m.cluster, m.total_gpus,
                     m.seed, m.ideal ? "ideal (no speed effects)" : "heterogeneous performance");
  }
  f << "Times in hours. *oracle* rows see true durations: a reference bound, not a competitor. "
       "**best** = lowest mean JCT among non-oracle policies.\n\n";
  f << "| ordering | placement | mean JCT | p50 | p95 | p99 | mean queue | max wait | makespan | GPU util | "
       "fees USD | energy kWh | preemptions | |\n";
  f << "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
  const int best = best_non_oracle(rows);
  auto h = [](double s) { return fmt::format("{:.2f}", s / 3600.0); };
  for (size_t i = 0; i < rows.size(); ++i) {
    const SimResult& r = rows[i];
    f << fmt::format("| {}{} | {} | {} | {} | {} | {} | {} | {} | {} | {:.3f} | {:.0f} | {:.0f} | {} | {} |\n",
                     r.ordering, r.oracle ? " *oracle*" : "", r.placement, h(r.avg_jct_s), h(r.p50_jct_s),
                     h(r.p95_jct_s), h(r.p99_jct_s), h(r.avg_queue_s), h(r.max_wait_s), h(r.makespan_s), r.gpu_util,
                     r.fees_usd, r.energy_kwh, r.preemptions, static_cast<int>(i) == best ? "**best**" : "");
  }
  f << "\nPlots: `jct_cdf.png`, `queue.png`, `gpu_util.png`. Per-vc mean JCT: `summary.json`.\n";
}

void write_summary_json(const std::string& path, const EvalMeta& m, const std::vector<SimResult>& rows) {
  nlohmann::ordered_json j;
  j["source"] = m.measured ? "sacct" : "simulation";
  j["trace"] = m.trace;
  j["cluster"] = m.cluster;
  j["seed"] = m.seed;
  j["ideal"] = m.ideal;
  j["jobs"] = m.jobs;
  j["dropped_jobs"] = m.dropped;
  j["total_gpus"] = m.total_gpus;
  int best = best_non_oracle(rows);
  j["best"] = best >= 0 ? rows[best].ordering + "/" + rows[best].placement : "";
  j["results"] = nlohmann::ordered_json::array();
  for (const auto& r : rows) j["results"].push_back(to_json(r, false));
  open_out(path) << j.dump(2) << "\n";
}

}  // namespace duet
