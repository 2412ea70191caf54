// duet convert sacct | slurm-nodes: a Slurm site's own history and nodes as a
// duet-trace(5) and a duet-cluster(5), so `duet eval` can predict what duet
// would do there (replay/sacct_trace.h, replay/slurm_nodes.h).
#include <cstdlib>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "tools/duet/common.h"
#include "tools/duet/convert.h"
#include "policy/io/cluster.h"
#include "policy/io/csv.h"
#include "policy/io/data_files.h"
#include "policy/io/trace.h"
#include "policy/model/gavel.h"
#include "policy/model/throughput.h"
#include "replay/sacct_trace.h"
#include "replay/slurm_nodes.h"

namespace duet::cli {
namespace {

// IN or standard input ("-"), with the name messages use.
struct Input {
  std::unique_ptr<std::istream> file;
  std::istream* in = &std::cin;
  std::string name = "stdin";
  explicit Input(const std::string& path) {
    if (path.empty() || path == "-") return;
    file = CsvReader::open(path);
    in = file.get();
    name = path;
  }
};

struct SacctArgs {
  std::string in = "-", out, speeds, vc = "account";
  std::vector<std::string> partitions;
};

struct NodesArgs {
  std::string in = "-", out, speeds, speeds_out, throughputs;
  std::vector<std::string> type_speeds;
};

// "A100=2.2" -> {"A100", 2.2}
std::map<std::string, double> parse_type_speeds(const std::vector<std::string>& items) {
  std::map<std::string, double> out;
  for (const std::string& s : items) {
    size_t eq = s.find('=');
    char* end = nullptr;
    double v = eq == std::string::npos ? 0 : std::strtod(s.c_str() + eq + 1, &end);
    if (eq == std::string::npos || eq == 0 || eq + 1 == s.size() || *end || !(v >= 0.001 && v <= 1000))
      throw std::invalid_argument("--type-speed: expected TYPE=SPEED with SPEED from 0.001 to 1000, got '" + s + "'");
    std::string t = s.substr(0, eq);
    for (char& c : t) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    out[t] = v;
  }
  return out;
}

// Each GPU type of Gavel's table (upper case) -> what is known of it
// relative to a V100; empty, with a note, when the table is not found.
std::map<std::string, double> gavel_type_speeds(const std::string& given) {
  const std::string path = given.empty() ? find_data("data/gavel/simulation_throughputs.json") : given;
  if (path.empty()) {
    std::cerr << "duet convert slurm-nodes: Gavel's table not found (--throughputs, DUET_DATA_DIR): node speeds "
                 "from GPU types left out\n";
    return {};
  }
  const ThroughputTable table = read_gavel(path);
  std::map<std::string, double> out;
  for (int g = 0; g < static_cast<int>(table.gpu_types().size()); ++g) {
    std::string t = table.gpu_types()[static_cast<size_t>(g)];
    for (char& c : t) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    out[t] = gpu_type_mean_speed(table, g);
  }
  return out;
}

}  // namespace

void setup_convert_slurm(CLI::App* app) {
  auto sa = std::make_shared<SacctArgs>();
  CLI::App* sacct = app->add_subcommand(
      "sacct",
      "a Slurm site's history (sacct -a -X -D -P --format=JobIDRaw,JobID,User,Account,Partition,Submit,Start,End,"
      "State,AllocTRES,ReqTRES,NodeList) -> duet-trace(5)");
  sacct->add_option("IN", sa->in, "sacct --parsable2 output ('-' = stdin)")->capture_default_str();
  sacct->add_option("-o,--output", sa->out, "output trace CSV ('-' = stdout)")->required();
  sacct->add_option("--node-speeds", sa->speeds,
                    "CSV with columns node,speed (throughput relative to a V100, as duet-emujob --known-speeds "
                    "writes): run times are multiplied by the slowest node's speed");
  sacct->add_option("--partition", sa->partitions, "keep only jobs of these partitions (comma list)")->delimiter(',');
  sacct->add_option("--vc", sa->vc, "what the trace's vc column holds: account or partition")
      ->capture_default_str()
      ->check(CLI::IsMember({"account", "partition"}));
  sacct->callback([sa] {
    replay::SacctTraceOptions opt;
    if (!sa->speeds.empty()) opt.speeds = replay::read_node_speeds(sa->speeds);
    opt.partitions = sa->partitions;
    opt.vc_from_partition = sa->vc == "partition";
    Input in(sa->in);
    replay::SacctRows rows = replay::parse_sacct_allocations(*in.in, in.name);
    replay::SacctTraceCounts c;
    c.steps = rows.steps;
    Trace t = replay::trace_from_sacct(rows.jobs, in.name, opt, c);
    write_to(sa->out, [&](std::ostream& o) { write_trace(o, t); });
    std::cerr << fmt::format(
        "duet convert sacct: {} GPU jobs{}{}; left out: {} job steps, {} never ran, {} not finished, {} CPU-only{}\n",
        t.jobs.size(), opt.speeds.empty() ? " (run times as measured: no --node-speeds)" : "",
        c.requeued ? fmt::format(" ({} requeued: their runs are one job)", c.requeued) : "", c.steps, c.never_ran,
        c.not_finished, c.cpu_only,
        opt.partitions.empty() ? "" : fmt::format(", {} in other partitions", c.other_partition));
  });

  auto na = std::make_shared<NodesArgs>();
  CLI::App* nodes = app->add_subcommand(
      "slurm-nodes", "a Slurm cluster's nodes (scontrol show nodes --oneliner) -> duet-cluster(5) and node speeds");
  nodes->add_option("IN", na->in, "scontrol show nodes --oneliner output ('-' = stdin)")->capture_default_str();
  nodes->add_option("-o,--output", na->out, "output cluster CSV ('-' = stdout)")->required();
  nodes->add_option("--node-speeds", na->speeds,
                    "known speeds: CSV with columns node,speed (before any speed_X node feature)");
  nodes->add_option("--speeds-out", na->speeds_out,
                    "also write node,gpu_type,num_gpus,speed (for duet convert sacct --node-speeds)");
  nodes
      ->add_option("--type-speed", na->type_speeds,
                   "the cluster's speed column for a GPU type, relative to a V100 (TYPE=SPEED, comma list; "
                   "required for types Gavel's table lacks)")
      ->delimiter(',');
  nodes->add_option("--throughputs", na->throughputs,
                    "Gavel throughput JSON for the speeds of nodes no --node-speeds or speed_X feature gives: their "
                    "GPU type's mean over job types (default: the installed data/gavel copy)");
  nodes->callback([na] {
    replay::SlurmNodesOptions opt;
    if (!na->speeds.empty()) opt.speeds = replay::read_node_speeds(na->speeds);
    opt.type_speeds = parse_type_speeds(na->type_speeds);
    opt.type_mean_speeds = gavel_type_speeds(na->throughputs);
    Input in(na->in);
    auto parsed = replay::parse_scontrol_nodes(*in.in, in.name);
    replay::SlurmNodesResult r = replay::cluster_from_slurm_nodes(parsed, in.name, opt);
    write_to(na->out, [&](std::ostream& o) { write_cluster(o, r.cluster); });
    if (!na->speeds_out.empty()) write_to(na->speeds_out, [&](std::ostream& o) { replay::write_node_speeds(o, r); });
    const size_t typical = r.speeds.size() - r.speeds_given - r.speeds_from_features - r.speeds_from_types;
    std::cerr << fmt::format(
        "duet convert slurm-nodes: {} GPU machines, {} GPUs ({} CPUs, {} GiB memory); {} CPU-only nodes left out; "
        "speeds: {} from --node-speeds, {} from speed_X features, {} from GPU types, {} typical (1)\n",
        r.cluster.machines.size(), r.cluster.total_gpus(), r.cpus, r.memory_mb / 1024, r.cpu_only, r.speeds_given,
        r.speeds_from_features, r.speeds_from_types, typical);
    // what an admin adds for the nodes left at 1
    if (typical > 0) {
      std::string types;
      for (const std::string& t : r.unknown_types) types += (types.empty() ? "" : ", ") + t;
      std::cerr << "duet convert slurm-nodes: " << typical << " node(s) at speed 1: GPU type(s) " << types
                << " not in Gavel's table; give --type-speed TYPE=SPEED (relative to a V100), a speed_X node "
                   "feature, or their rows in --node-speeds\n";
    }
  });
}

}  // namespace duet::cli
