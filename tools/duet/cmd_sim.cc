// duet sim: one simulation, a summary on stdout (text or --json).
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "tools/duet/commands.h"
#include "tools/duet/common.h"
#include "policy/sim/job_log.h"
#include "policy/sim/simulator.h"

namespace duet::cli {
namespace {

struct SimArgs {
  Inputs in;
  std::string order = "fifo", place = "first-fit";
  bool json = false;
  std::string jobs_out;
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
  app->add_option("--jobs-out", args->jobs_out,
                  "write one CSV row per job (start, finish, queueing, preemptions, machines) to this file");
  app->callback([args] {
    PolicyContext ctx = policy_context(args->in);
    make_ordering(args->order, ctx);  // unknown names fail before the inputs are read
    make_placement(args->place, ctx);
    auto l = load(args->in);
    int64_t dropped = 0;
    JobLog log(l->cluster);
    SimResult r = run_pair(l->trace, l->cluster, l->table, &l->prices, args->order, args->place, ctx,
                           run_options(args->in, "duet sim"), &dropped, args->jobs_out.empty() ? nullptr : &log);
    if (!args->jobs_out.empty()) write_to(args->jobs_out, [&](std::ostream& o) { log.write_csv(o); });
    if (args->json) {
      auto j = to_json(r, true);
      j["dropped_jobs"] = dropped;
      std::cout << j.dump() << "\n";
    } else {
      print_text(r, dropped);
    }
  });
}

}  // namespace duet::cli
