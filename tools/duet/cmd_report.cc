// duet report: the simulator's metrics from Slurm accounting (sacct), written
// as duet eval writes them; or two such runs side by side (man duet-report(1)).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tools/duet/commands.h"
#include "tools/duet/common.h"
#include "policy/report/summary.h"
#include "replay/emu_nodes.h"
#include "replay/jobs_file.h"
#include "replay/run_command.h"
#include "replay/slurm_config.h"
#include "replay/sacct.h"
#include "replay/sacct_metrics.h"

namespace duet::cli {
namespace {

using namespace duet::replay;

struct ReportArgs {
  bool sacct = false, no_plots = false;
  std::string jobs, since, input, prices, nodes_csv, label, out;
  double scale = 0;
  std::vector<std::string> runs;
};

// --scale, else the replay's scale from the job-id file, else 1.
double report_scale(const ReportArgs& a, const JobsFile& jf) {
  double scale = a.scale;
  if (scale <= 0 && jf.meta.count("scale")) scale = std::stod(jf.meta.at("scale"));
  if (scale <= 0) scale = 1;
  return scale;
}

// sacct -X -P's output: the --input file, else sacct run for the jobs of
// --jobs or those since --since.
std::string sacct_text(const ReportArgs& a, const JobsFile& jf) {
  if (!a.input.empty()) {
    std::ifstream f(a.input);
    if (!f) throw std::runtime_error("cannot read " + a.input);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }
  // -D: every run of a requeued job, so its JCT counts from its first submit
  std::vector<std::string> argv = {"sacct", "-X", "-D", "-P", std::string("--format=") + kSacctFormat};
  if (!a.jobs.empty()) {
    if (jf.jobs.empty()) throw std::runtime_error(a.jobs + ": no jobs listed");
    std::string ids;
    for (const auto& j : jf.jobs) ids += (ids.empty() ? "" : ",") + j.job_id;
    argv.push_back("--jobs=" + ids);
  } else if (!a.since.empty()) {
    argv.insert(argv.end(), {"--allusers", "--starttime=" + a.since});
  } else {
    throw std::runtime_error("--sacct needs --jobs FILE, --since TIME or --input FILE");
  }
  CommandResult r = run_command(argv, 120);
  if (r.status != 0) throw std::runtime_error("sacct failed: " + command_text(argv) + ": " + r.err);
  return r.out;
}

// A job of the file missing in accounting is reported, not skipped.
void warn_missing_jobs(const ReportArgs& a, const JobsFile& jf, const std::vector<SacctJob>& jobs) {
  std::set<std::string> seen;
  for (const auto& j : jobs) seen.insert(j.job_id);
  int missing = 0;
  for (const auto& j : jf.jobs) missing += !seen.count(j.job_id);
  if (missing)
    std::cerr << fmt::format("duet report: {} of the {} jobs in {} are not in accounting\n", missing, jf.jobs.size(),
                             a.jobs);
}

// The cluster from nodes.csv, if there is one: total GPUs and each node's
// GPU type.
struct ReportCluster {
  std::string nodes_csv;  // "" = none found
  int total_gpus = 0;
  std::map<std::string, std::string> node_types;
};

ReportCluster read_report_cluster(const ReportArgs& a) {
  ReportCluster c;
  c.nodes_csv = a.nodes_csv.empty() ? nodes_csv_from_slurm_conf() : a.nodes_csv;
  if (!c.nodes_csv.empty())
    for (const auto& n : read_nodes_csv(c.nodes_csv)) {
      c.total_gpus += n.gpus;
      c.node_types[n.name] = n.gpu_type;
    }
  else
    std::cerr << "duet report: no nodes.csv (give --nodes-csv): GPU utilisation not computed\n";
  return c;
}

// Names the run ORDER/PLACE: --label, else the plugins its job-id file
// recorded when it was replayed, else today's (said on stderr: a run from
// before a switch would be named after the new plugins), else sacct/sacct.
void name_run(const ReportArgs& a, const JobsFile& jf, SimResult& r) {
  std::string label = a.label;
  if (label.empty()) label = scheduling_label(jf.meta);
  if (label.empty()) {
    label = scheduling_label(slurm_scheduling_plugins());
    if (!label.empty())
      std::cerr << "duet report: " << (a.jobs.empty() ? "no --jobs file" : a.jobs + " records no plugins")
                << "; named after the cluster's current plugins, " << label << " (give --label to name it)\n";
    else
      label = "sacct/sacct";
  }
  size_t slash = label.find('/');
  if (label.find('/', slash + 1) != std::string::npos) slash = label.find('/', slash + 1);  // "priority/x/select/y"
  r.ordering = label.substr(0, slash);
  r.placement = slash == std::string::npos ? "" : label.substr(slash + 1);
}

void report_sacct(const ReportArgs& a) {
  if (a.out.empty()) throw std::runtime_error("--out DIR is required with --sacct");
  JobsFile jf;
  if (!a.jobs.empty()) jf = read_jobs_file(a.jobs);
  const double scale = report_scale(a, jf);
  const std::string text = sacct_text(a, jf);
  std::filesystem::create_directories(a.out);
  std::ofstream(a.out + "/sacct.txt") << text;
  std::istringstream in(text);
  std::vector<SacctJob> jobs = parse_sacct(in, a.input.empty() ? "sacct output (" + a.out + "/sacct.txt)" : a.input);
  if (!a.jobs.empty()) warn_missing_jobs(a, jf, jobs);

  std::string pr = a.prices.empty() ? find_etc("gpu-prices.csv") : a.prices;
  if (pr.empty()) throw std::runtime_error("cannot find gpu-prices.csv; give --prices or set DUET_ETC_DIR");
  PriceTable prices = PriceTable::read(pr);
  const ReportCluster cluster = read_report_cluster(a);
  SacctCounts c;
  SimResult r = metrics_from_sacct(jobs, prices, cluster.total_gpus, scale, cluster.node_types, &c);
  name_run(a, jf, r);

  EvalMeta meta;
  meta.trace = jf.meta.count("trace") ? jf.meta["trace"] + fmt::format(" replayed at scale {}", scale) : "sacct";
  meta.cluster = cluster.nodes_csv.empty() ? "(unknown)" : cluster.nodes_csv;
  meta.jobs = c.finished;
  meta.dropped = c.not_started + c.not_ended;
  meta.total_gpus = cluster.total_gpus;
  meta.measured = true;
  write_summary_md(a.out + "/summary.md", meta, {r});
  write_summary_json(a.out + "/summary.json", meta, {r});
  std::string gp = DUET_GNUPLOT;
  auto pngs = write_plots(a.out, {r}, a.no_plots ? "" : gp);
  std::cerr << fmt::format(
      "duet report: {} jobs finished ({} not COMPLETED, {} requeued), {} never started, {} still running; "
      "mean JCT {:.1f} s, times x{}\n",
      c.finished, c.non_completed, c.requeued, c.not_started, c.not_ended, r.avg_jct_s, scale);
  std::cout << a.out << "/summary.md\n" << a.out << "/summary.json\n";
  for (const auto& p : pngs) std::cout << p << "\n";
}

nlohmann::json read_summary(const std::string& dir) {
  std::ifstream f(dir + "/summary.json");
  if (!f)
    throw std::runtime_error("cannot read " + dir +
                             "/summary.json (a directory written by duet report --sacct or duet eval)");
  nlohmann::json j;
  try {
    f >> j;
  } catch (const std::exception& e) { throw std::runtime_error(dir + "/summary.json: " + e.what()); }
  if (!j.contains("results") || j["results"].empty()) throw std::runtime_error(dir + "/summary.json: no results");
  return j;
}

void compare(const ReportArgs& a) {
  const nlohmann::json A = read_summary(a.runs[0])["results"][0], B = read_summary(a.runs[1])["results"][0];
  auto name = [](const nlohmann::json& r) { return r.value("ordering", "") + "/" + r.value("placement", ""); };
  std::ostringstream t;
  t << fmt::format("| metric | A: {} | B: {} | B/A |\n|---|---:|---:|---:|\n", name(A), name(B));
  auto row = [&](const char* label, const char* key, double div, int prec) {
    double x = A.value(key, 0.0), y = B.value(key, 0.0);
    t << fmt::format("| {} | {:.{}f} | {:.{}f} | {} |\n", label, x / div, prec, y / div, prec,
                     x != 0 ? fmt::format("{:.3f}", y / x) : "-");
  };
  row("jobs", "jobs", 1, 0);
  row("mean JCT (h)", "avg_jct_s", 3600, 3);
  row("p50 JCT (h)", "p50_jct_s", 3600, 3);
  row("p95 JCT (h)", "p95_jct_s", 3600, 3);
  row("mean queueing (h)", "avg_queue_s", 3600, 3);
  row("max wait (h)", "max_wait_s", 3600, 3);
  row("makespan (h)", "makespan_s", 3600, 3);
  row("GPU utilisation", "gpu_util", 1, 3);
  row("fees (USD)", "fees_usd", 1, 2);
  row("energy (kWh)", "energy_kwh", 1, 2);
  std::string s = fmt::format("A = {}, B = {} (times in trace hours)\n\n", a.runs[0], a.runs[1]) + t.str();
  std::cout << s;
  if (!a.out.empty()) {
    std::filesystem::create_directories(a.out);
    std::ofstream(a.out + "/compare.md") << "# duet report: comparison\n\n" << s;
  }
}

}  // namespace

void setup_report(CLI::App* app) {
  auto a = std::make_shared<ReportArgs>();
  app->add_flag("--sacct", a->sacct, "read Slurm accounting (sacct -X -P)");
  app->add_option("--jobs", a->jobs, "job-id file written by duet replay (its scale is used unless --scale)");
  app->add_option("--since", a->since, "all jobs submitted since TIME (sacct --starttime)");
  app->add_option("--input", a->input,
                  "saved output of sacct -X -P --format=" + std::string(kSacctFormat) + " instead of running sacct");
  app->add_option("--prices", a->prices,
                  "GPU price/power CSV (duet-prices(5); default: the installed etc/gpu-prices.csv)");
  app->add_option("--nodes-csv", a->nodes_csv,
                  "the cluster's nodes.csv: total GPUs, types of untyped GPUs (default: next to $SLURM_CONF)");
  app->add_option("--scale", a->scale, "multiply times by K (the replay's time scale) to get trace seconds")
      ->check(CLI::PositiveNumber);
  app->add_option("--label", a->label,
                  "ORDER/PLACE name of the run (default: PriorityType/SelectType from scontrol show config)");
  app->add_option("--out", a->out, "output directory (summary.md, summary.json, plots; compare.md for A B)");
  app->add_flag("--no-plots", a->no_plots, "skip gnuplot (still writes the plot data and script)");
  app->add_option("runs", a->runs, "two run directories to compare (A B)");
  app->callback([a] {
    if (a->sacct == !a->runs.empty()) throw std::runtime_error("give either --sacct or two run directories A B");
    if (a->sacct) return report_sacct(*a);
    if (a->runs.size() != 2)
      throw std::runtime_error("compare needs exactly two run directories, got " + std::to_string(a->runs.size()));
    compare(*a);
  });
}

}  // namespace duet::cli
