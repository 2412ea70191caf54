// duet bench: simulator speed on the full Philly trace and PAI cluster (or the
// given ones), at 1x and the trace repeated k times, to show linear cost.
#include <sys/resource.h>

#include <iostream>

#include <fmt/format.h>

#include "tools/duet/commands.h"
#include "tools/duet/common.h"
#include "policy/io/cluster.h"
#include "policy/model/gavel.h"
#include "policy/io/pai.h"
#include "policy/io/philly.h"
#include "policy/sim/simulator.h"

namespace duet::cli {
namespace {

struct BenchArgs {
  std::string trace, cluster, order = "fifo", place = "first-fit", throughputs;
  std::vector<int> repeat{1, 10};
  bool ideal = false, json = false;
  uint64_t seed = 1;
};

// The trace k times back to back (submits shifted by the span, ids renumbered).
Trace repeated(const Trace& t, int k) {
  Trace r;
  r.source = t.source;
  double span = 0;
  int64_t max_id = 0;
  for (const auto& j : t.jobs) span = std::max(span, j.submit), max_id = std::max(max_id, j.id);
  r.jobs.reserve(t.jobs.size() * k);
  for (int i = 0; i < k; ++i)
    for (JobSpec j : t.jobs) {
      j.submit += i * (span + 1);
      j.id += i * (max_id + 1);
      r.jobs.push_back(std::move(j));
    }
  return r;
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;
}

}  // namespace

void setup_bench(CLI::App* app) {
  auto a = std::make_shared<BenchArgs>();
  app->add_option("--trace", a->trace, "duet trace CSV (default: the shipped Philly trace, converted)");
  app->add_option("--cluster", a->cluster, "duet cluster CSV (default: the shipped PAI machines, converted)");
  app->add_option("--order", a->order, "ordering policy")->capture_default_str();
  app->add_option("--place", a->place, "placement policy")->capture_default_str();
  app->add_option("--repeat", a->repeat, "trace repetitions to time")->capture_default_str()->delimiter(',');
  app->add_option("--seed", a->seed, "seed")->capture_default_str();
  app->add_option("--throughputs", a->throughputs, "Gavel throughput JSON");
  app->add_flag("--ideal", a->ideal, "ideal mode (no speed effects)");
  app->add_flag("--json", a->json, "one JSON object per repetition count");
  app->callback([a] {
    std::string tp = a->throughputs.empty() ? find_data("data/gavel/simulation_throughputs.json") : a->throughputs;
    if (tp.empty()) throw std::runtime_error("cannot find the Gavel throughput table; give --throughputs");
    ThroughputTable table = read_gavel(tp);
    Trace base;
    if (a->trace.empty()) {
      std::string p = find_data("data/philly/philly.csv");
      if (p.empty()) throw std::runtime_error("cannot find data/philly/philly.csv; give --trace");
      base = read_philly(p);
    } else {
      base = read_trace(a->trace);
    }
    ClusterSpec spec;
    if (a->cluster.empty()) {
      std::string p = find_data("data/pai/pai_machine_spec.csv");
      if (p.empty()) throw std::runtime_error("cannot find data/pai/pai_machine_spec.csv; give --cluster");
      spec = read_pai(p).cluster;
    } else {
      spec = read_cluster(a->cluster);
    }
    ClusterModel cluster = build_cluster(spec, table);
    if (!a->json)
      std::cout << fmt::format("{} + {}, {} model, {} GPUs on {} machines\n", a->order, a->place,
                               a->ideal ? "ideal" : "full", cluster.total_gpus, cluster.machines.size())
                << "repeat       jobs      events   wall s    events/s   us/job  peak RSS MiB\n";
    for (int k : a->repeat) {
      if (k < 1) throw std::invalid_argument("--repeat: counts must be >= 1");
      Trace t = repeated(base, k);
      PolicyContext ctx;
      ctx.seed = a->seed;
      ctx.throughputs = &table;
      auto ordering = make_ordering(a->order, ctx);
      auto placement = make_placement(a->place, ctx);
      SimOptions o;
      o.model.seed = a->seed;
      o.model.ideal = a->ideal;
      o.drop_oversized = true;
      Simulator sim(t, cluster, table, nullptr, o);
      sim.set_policies(ordering.get(), placement.get());
      SimResult r = sim.run();
      const double eps = r.wall_s > 0 ? r.events / r.wall_s : 0;
      if (a->json) {
        nlohmann::ordered_json j;
        j["repeat"] = k;
        j["jobs"] = r.jobs;
        j["events"] = r.events;
        j["wall_s"] = r.wall_s;
        j["events_per_s"] = eps;
        j["peak_rss_mib"] = peak_rss_mib();
        std::cout << j.dump() << "\n";
      } else {
        std::cout << fmt::format("{:>6} {:>10} {:>11} {:>8.3f} {:>11.0f} {:>8.2f} {:>13.1f}\n", k, r.jobs, r.events,
                                 r.wall_s, eps, r.jobs ? 1e6 * r.wall_s / r.jobs : 0.0, peak_rss_mib());
      }
    }
  });
}

}  // namespace duet::cli
