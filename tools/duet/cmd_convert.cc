// duet convert philly|pai IN -o OUT: real data into duet's trace/cluster CSVs
// (sacct and slurm-nodes: cmd_convert_slurm.cc).
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "tools/duet/commands.h"
#include "tools/duet/common.h"
#include "tools/duet/convert.h"
#include "policy/io/pai.h"
#include "policy/io/philly.h"

namespace duet::cli {
namespace {

struct ConvertArgs {
  std::string in, out, from, to;
  double fraction = 1;
  uint64_t seed = 1;
};

// "YYYY-MM-DD" or "YYYY-MM-DD HH:MM:SS" (UTC) -> seconds since 1970.
int64_t parse_when(const std::string& opt, const std::string& v) {
  int64_t t = 0;
  if (parse_timestamp(v.size() == 10 ? v + " 00:00:00" : v, t)) return t;
  throw std::invalid_argument(opt + ": expected 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS', got '" + v + "'");
}

}  // namespace

void setup_convert(CLI::App* app) {
  app->require_subcommand(1);
  auto pa = std::make_shared<ConvertArgs>();
  CLI::App* philly =
      app->add_subcommand("philly", "Philly jobs CSV (timestamp,duration,num_gpus,gpu_time,cluster) -> duet-trace(5)");
  philly->add_option("IN", pa->in, "Philly CSV")->required();
  philly->add_option("-o,--output", pa->out, "output trace CSV ('-' = stdout)")->required();
  philly->add_option("--from", pa->from,
                     "keep jobs submitted at or after this UTC time (YYYY-MM-DD[ HH:MM:SS]); submit counts from it");
  philly->add_option("--to", pa->to, "keep jobs submitted before this UTC time (YYYY-MM-DD[ HH:MM:SS])");
  philly->callback([pa] {
    TimeWindow w;
    if (!pa->from.empty()) w.from = parse_when("--from", pa->from);
    if (!pa->to.empty()) w.to = parse_when("--to", pa->to);
    if (w.from >= w.to) throw std::invalid_argument("--from must be before --to");
    Trace t = read_philly(pa->in, w);
    write_to(pa->out, [&](std::ostream& o) { write_trace(o, t); });
    std::cerr << fmt::format("duet convert philly: {} jobs\n", t.jobs.size());
  });
  auto ca = std::make_shared<ConvertArgs>();
  CLI::App* pai = app->add_subcommand("pai", "PAI pai_machine_spec.csv (no header) -> duet-cluster(5)");
  pai->add_option("IN", ca->in, "PAI machine spec CSV")->required();
  pai->add_option("-o,--output", ca->out, "output cluster CSV ('-' = stdout)")->required();
  pai->add_option("--fraction", ca->fraction, "keep this fraction of each GPU type's machines (seeded sample)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  pai->add_option("--seed", ca->seed, "seed of the sample")->capture_default_str();
  pai->callback([ca] {
    PaiResult r = read_pai(ca->in);
    if (ca->fraction <= 0) throw std::invalid_argument("--fraction must be > 0");
    if (ca->fraction < 1) r.cluster = sample_cluster(r.cluster, ca->fraction, ca->seed);
    write_to(ca->out, [&](std::ostream& o) { write_cluster(o, r.cluster); });
    std::cerr << fmt::format("duet convert pai: {} GPU machines, {} GPUs; {} CPU-only machines left out\n",
                             r.cluster.machines.size(), r.cluster.total_gpus(), r.cpu_only_machines);
  });
  setup_convert_slurm(app);
}

}  // namespace duet::cli
