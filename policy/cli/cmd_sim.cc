// duet sim: one simulation, a summary on stdout (text or --json).
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "policy/cli/commands.h"
#include "policy/cli/common.h"
#include "policy/sim/simulator.h"

namespace duet::cli {
namespace {

struct SimArgs {
  Inputs in;
  std::string order = "fifo", place = "first-fit";
  bool json = false;
};

void print_text(const SimResult& r, int64_t dropped) {
  std::cout << fmt::format("ordering     {}{}\nplacement    {}\njobs         {}{}\n", r.ordering,
                           r.oracle ? " (oracle)" : "", r.placement, r.jobs,
                           dropped ? fmt::format(" ({} dropped as oversized)", dropped) : "");
  std::cout << fmt::format("JCT s        mean {:.1f}  p50 {:.1f}  p95 {:.1f}  p99 {:.1f}\n", r.avg_jct_s, r.p50_jct_s,
                           r.p95_jct_s, r.p99_jct_s);
  std::cout << fmt::format("queue s      mean {:.1f}  max {:.1f}\nmakespan s   {:.1f}\n", r.avg_queue_s, r.max_wait_s,
                           r.makespan_s);
  std::cout << fmt::format("GPU util     {:.4f}\nfees USD     {:.2f}\nenergy kWh   {:.2f}\npreemptions  {}\n",
                           r.gpu_util, r.fees_usd, r.energy_kwh, r.preemptions);
  std::cout << fmt::format("events       {}  ({:.3f} s, {:.0f} events/s)\n", r.events, r.wall_s,
                           r.wall_s > 0 ? r.events / r.wall_s : 0.0);
}

}  // namespace

void setup_sim(CLI::App* app) {
  auto args = std::make_shared<SimArgs>();
  args->in.add_options(*app);
  app->add_option("--order", args->order, "ordering policy: " + fmt::format("{}", fmt::join(ordering_names(), ", ")))
      ->capture_default_str();
  app->add_option("--place", args->place, "placement policy: " + fmt::format("{}", fmt::join(placement_names(), ", ")))
      ->capture_default_str();
  app->add_flag("--json", args->json, "print one JSON object (deterministic for a seed except wall_s, events_per_s)");
  app->callback([args] {
    PolicyContext ctx = policy_context(args->in);
    make_ordering(args->order, ctx);  // unknown names fail before the inputs are read
    make_placement(args->place, ctx);
    auto l = load(args->in);
    ctx.throughputs = &l->table;
    auto ordering = make_ordering(args->order, ctx);
    auto placement = make_placement(args->place, ctx);
    SimOptions o;
    o.model.seed = args->in.seed;
    o.model.ideal = args->in.ideal;
    o.period_s = args->in.period;
    o.model.restart_overhead_s = args->in.restart_overhead;
    o.preempt_limits = args->in.preempt_limits;
    o.drop_oversized = args->in.drop_oversized;
    o.progress = progress_bar("duet sim");
    Simulator sim(l->trace, l->cluster, l->table, &l->prices, o);
    sim.set_policies(ordering.get(), placement.get());
    SimResult r = sim.run();
    progress_done();
    if (args->json) {
      auto j = to_json(r, true);
      j["dropped_jobs"] = sim.dropped_jobs();
      std::cout << j.dump() << "\n";
    } else {
      print_text(r, sim.dropped_jobs());
    }
  });
}

}  // namespace duet::cli
