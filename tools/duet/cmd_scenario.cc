// duet scenario generate|list: a workload and a cluster drawn from a seed and
// a spec (duet-scenario(1)); duet sim and duet eval read them as any trace
// and cluster.
#include <iostream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tools/duet/commands.h"
#include "tools/duet/common.h"
#include "policy/io/pai.h"
#include "policy/io/philly.h"
#include "policy/model/gavel.h"
#include "policy/scenario/scenario.h"

namespace duet::cli {
namespace {

struct GenerateArgs {
  uint64_t seed = 1;
  std::string spec, family, workload, trace_out, cluster_out, spec_out, throughputs;
  std::vector<std::string> sets;
  int jobs = 0;
  double load = 0;
  bool json = false;
};

std::string data_path(const std::string& given, const char* rel, const char* key) {
  std::string p = given.empty() ? find_data(rel) : given;
  if (p.empty()) throw std::runtime_error(fmt::format("cannot find {}; set {} in the spec or DUET_DATA_DIR", rel, key));
  return p;
}

// Spec file, then --family and --workload, then --jobs, --load and --set:
// the command line wins.
ScenarioSpec build_spec(const GenerateArgs& a) {
  ScenarioSpec s;
  if (!a.spec.empty()) apply_spec_file(s, a.spec);
  if (!a.family.empty()) apply_family(s, a.family);
  if (!a.workload.empty()) apply_workload(s, a.workload);
  if (a.jobs > 0) s.jobs = a.jobs;
  if (a.load > 0) s.load = {a.load, a.load};
  for (const std::string& kv : a.sets) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("--set: expected KEY=VALUE, got '" + kv + "'");
    apply_setting(s, kv.substr(0, eq), kv.substr(eq + 1));
  }
  return s;
}

std::string type_list(const ClusterSpec& c) {
  std::set<std::string> seen;
  std::string o;
  for (const MachineSpec& m : c.machines)
    if (seen.insert(m.gpu_type).second) o += (o.empty() ? "" : " ") + m.gpu_type;
  return o;
}

// The spec as used (presets spelled out), which with the seed gives the
// scenario again, then the values drawn for this seed as comments.
std::string spec_record(const ScenarioSpec& spec, const Scenario& sc, uint64_t seed) {
  std::string out = format_spec(spec), drawn;
  std::istringstream used(out), got(format_spec(sc.resolved));
  for (std::string u, g; std::getline(used, u) && std::getline(got, g);)
    if (u != g) drawn += "# " + g + "\n";
  if (!sc.philly_vc.empty()) drawn += "# philly_vc = " + sc.philly_vc + "\n";
  return out + (drawn.empty() ? "" : fmt::format("# drawn for seed {}:\n{}", seed, drawn));
}

void generate(const GenerateArgs& a) {
  const ScenarioSpec spec = build_spec(a);
  const std::string tp = a.throughputs.empty() ? find_data("data/gavel/simulation_throughputs.json") : a.throughputs;
  if (tp.empty())
    throw std::runtime_error(
        "cannot find data/gavel/simulation_throughputs.json; give --throughputs or set DUET_DATA_DIR");
  const ThroughputTable table = read_gavel(tp);
  // The data files only the sources that resample them need.
  Trace philly;
  ClusterSpec pai;
  ScenarioSources src;
  if (spec.source != "synthetic") {
    philly = read_philly(data_path(spec.philly_path, "data/philly/philly.csv", "philly_path"));
    src.philly = &philly;
  }
  if (spec.cluster_source == "pai") {
    pai = read_pai(data_path(spec.pai_path, "data/pai/pai_machine_spec.csv", "pai_path")).cluster;
    src.pai = &pai;
  }
  const Scenario sc = generate_scenario(spec, a.seed, table, src);
  write_to(a.trace_out, [&](std::ostream& o) { write_trace(o, sc.trace); });
  write_to(a.cluster_out, [&](std::ostream& o) { write_cluster(o, sc.cluster); });
  if (!a.spec_out.empty()) write_to(a.spec_out, [&](std::ostream& o) { o << spec_record(spec, sc, a.seed); });
  const double span_d = sc.trace.jobs.back().submit / 86400;
  if (a.json) {
    nlohmann::json j;
    j["seed"] = a.seed;
    j["family"] = spec.family;
    j["workload"] = spec.workload;
    j["jobs"] = sc.trace.jobs.size();
    j["span_days"] = span_d;
    j["machines"] = sc.cluster.machines.size();
    j["gpus"] = sc.cluster.total_gpus();
    j["gpu_types"] = type_list(sc.cluster);
    j["capacity_reference_gpus"] = sc.capacity;
    j["offered_load"] = sc.offered_load;
    j["max_load"] = sc.max_load;
    j["philly_vc"] = sc.philly_vc;
    std::cout << j.dump() << "\n";
  }
  std::cerr << fmt::format(
      "duet scenario: seed {}, {} / {}{}: {} jobs over {:.1f} days; {} GPUs on {} machines ({}), "
      "{:.1f} reference GPUs; offered load {:.3f}\n",
      a.seed, spec.family, spec.workload, sc.philly_vc.empty() ? "" : " (VC " + sc.philly_vc + ")",
      sc.trace.jobs.size(), span_d, sc.cluster.total_gpus(), sc.cluster.machines.size(), type_list(sc.cluster),
      sc.capacity, sc.offered_load);
  if (sc.load_out_of_reach())
    std::cerr << fmt::format(
        "duet scenario: warning: load {:.3f} asked, but these jobs' GPUs add up to {:.3f} of the cluster: "
        "raise --jobs or lower cluster_gpus\n",
        sc.resolved.load.lo, sc.max_load);
}

void list() {
  std::cout << "cluster families (--family):\n";
  for (const Preset& p : cluster_families()) std::cout << fmt::format("  {:<12} {}\n", p.name, p.help);
  std::cout << "workloads (--workload):\n";
  for (const Preset& p : workload_presets()) std::cout << fmt::format("  {:<12} {}\n", p.name, p.help);
  std::cout << "defaults (family mixed, workload lognormal), as a spec file:\n";
  std::cout << format_spec(ScenarioSpec{});
}

}  // namespace

void setup_scenario(CLI::App* app) {
  app->require_subcommand(1);
  auto a = std::make_shared<GenerateArgs>();
  CLI::App* gen = app->add_subcommand("generate", "draw a workload (duet-trace(5)) and a cluster (duet-cluster(5))");
  gen->add_option("--seed", a->seed, "seed: the same seed and spec give the same files")->capture_default_str();
  gen->add_option("--spec", a->spec, "spec file: 'key = value' lines (duet-scenario(1))");
  gen->add_option("--family", a->family, "cluster family (duet scenario list)");
  gen->add_option("--workload", a->workload, "workload preset (duet scenario list)");
  gen->add_option("--jobs", a->jobs, "number of jobs (the spec's 'jobs')")->check(CLI::Range(1, 1000000));
  gen->add_option("--load", a->load, "offered load (the spec's 'load')")->check(CLI::Range(0.01, 10.0));
  gen->add_option("--set", a->sets, "KEY=VALUE, any spec key; repeatable, applied last");
  gen->add_option("--trace-out", a->trace_out, "trace CSV to write ('-' = stdout)")->required();
  gen->add_option("--cluster-out", a->cluster_out, "cluster CSV to write ('-' = stdout)")->required();
  gen->add_option("--spec-out", a->spec_out,
                  "write the spec used and, as comments, the values drawn (with --seed it gives the scenario again)");
  gen->add_option("--throughputs", a->throughputs, "Gavel throughput JSON (default: the installed data/gavel copy)");
  gen->add_flag("--json", a->json, "print a summary as one JSON object on stdout");
  gen->callback([a] { generate(*a); });
  app->add_subcommand("list", "the named cluster families and workloads, and every spec key's default")->callback(list);
}

}  // namespace duet::cli
