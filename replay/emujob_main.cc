// duet-emujob: stands in for a training job in a Slurm test cluster (man
// duet-emujob(1)). It "trains" for a given amount of work, progressing at the
// rate the performance model gives for the nodes it landed on and the other
// emulated jobs there, and prints the progress rate it achieved.
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "config.h"
#include "policy/io/data_files.h"
#include "policy/model/gavel.h"
#include "policy/model/job_types.h"
#include "replay/emu_nodes.h"
#include "replay/emu_rate.h"
#include "replay/emu_registry.h"

namespace {

volatile sig_atomic_t g_stop = 0;
void on_signal(int sig) { g_stop = sig; }

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

void sleep_s(double s) {
  if (s <= 0) return;
  timespec ts{static_cast<time_t>(s), static_cast<long>((s - std::floor(s)) * 1e9)};
  nanosleep(&ts, nullptr);  // a signal cuts it short; the loop checks g_stop
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

struct Args {
  double work = -1, scale = 1, interval = 0.5, beta = 0.10;
  std::string job_type, nodes_csv, nodes, state_dir, throughputs, job_id;
  int gpus = 0;
  bool known_speeds = false, quiet = false;
};

// Geometric mean over job types of R(jt, type) -- what a scheduler may know
// of a GPU type -- times the node's speed factor.
int print_known_speeds(const duet::ThroughputTable& table, const std::vector<duet::replay::EmuNode>& nodes) {
  std::cout << "node,gpu_type,num_gpus,speed\n";
  for (const auto& n : nodes) {
    int g = table.find_gpu(n.gpu_type);
    double logsum = 0;
    for (int jt = 0; jt < table.job_types() && g >= 0; ++jt) logsum += std::log(table.speed_ratio(jt, g));
    double type_speed = g >= 0 && table.job_types() ? std::exp(logsum / table.job_types()) : 1.0;
    std::cout << fmt::format("{},{},{},{:.4f}\n", n.name, n.gpu_type, n.gpus, type_speed * n.speed);
  }
  return 0;
}

int run(const Args& a) {
  using namespace duet;
  using namespace duet::replay;
  std::string tp = a.throughputs.empty() ? find_data("data/gavel/simulation_throughputs.json") : a.throughputs;
  if (tp.empty())
    throw std::runtime_error(
        "cannot find data/gavel/simulation_throughputs.json; give --throughputs or set DUET_DATA_DIR");
  std::string nodes_csv = a.nodes_csv.empty() ? nodes_csv_from_slurm_conf() : a.nodes_csv;
  if (nodes_csv.empty())
    throw std::runtime_error("no nodes.csv: give --nodes-csv or run in a test cluster ($SLURM_CONF/../nodes.csv)");
  const ThroughputTable table = read_gavel(tp);
  const std::vector<EmuNode> nodes = read_nodes_csv(nodes_csv);
  if (a.known_speeds) return print_known_speeds(table, nodes);
  if (a.work < 0) throw std::runtime_error("--work is required");

  std::string list = !a.nodes.empty() ? a.nodes : env_or("SLURM_JOB_NODELIST", env_or("SLURMD_NODENAME", ""));
  if (list.empty()) throw std::runtime_error("no nodes: give --nodes or run under Slurm (SLURM_JOB_NODELIST)");
  std::vector<std::string> mine = expand_hostlist(list);
  std::vector<const EmuNode*> placed;
  for (const auto& n : mine) {
    const EmuNode* e = find_node(nodes, n);
    if (!e) throw std::runtime_error("node '" + n + "' is not in " + nodes_csv);
    placed.push_back(e);
  }
  int gpus = a.gpus;
  if (gpus <= 0) {
    int per = std::atoi(env_or("SLURM_GPUS_ON_NODE", "1").c_str());
    gpus = std::max(1, per) * static_cast<int>(placed.size());
  }
  const std::string job_id = !a.job_id.empty() ? a.job_id : env_or("SLURM_JOB_ID", "local");
  int jt;
  if (!a.job_type.empty()) {
    jt = table.find_job_type(a.job_type);
    if (jt < 0)
      throw std::runtime_error("--job-type '" + a.job_type + "' is not in " + tp +
                               " (e.g. 'ResNet-50 (batch size 32)')");
  } else {
    JobSpec js;
    js.id = std::atoll(job_id.c_str());
    js.gpus = gpus;
    jt = assign_job_type(js, table, 1);
  }
  const std::string type_name = table.job_type_name(jt);
  for (const EmuNode* n : placed)
    if (table.find_gpu(n->gpu_type) < 0 && !a.quiet)
      std::cerr << fmt::format(
          "duet-emujob: GPU type '{}' of {} is not in the throughput table; taken as the reference type\n", n->gpu_type,
          n->name);

  std::string state =
      a.state_dir.empty() ? (std::filesystem::path(nodes_csv).parent_path() / "emujob").string() : a.state_dir;
  EmuRegistry reg(state);
  const long self = static_cast<long>(getpid());
  reg.enter(mine, job_id, self, type_name);

  auto rate_now = [&] {
    std::vector<EmuPart> parts;
    for (const EmuNode* n : placed) {
      EmuPart p;
      p.table_gpu = table.find_gpu(n->gpu_type);
      p.speed = n->speed;
      p.rack = n->rack;
      for (const auto& e : reg.on_node(n->name, self)) {
        int k = table.find_job_type(e.job_type);
        if (k >= 0) p.others.push_back(k);
      }
      parts.push_back(std::move(p));
    }
    EmuRateOptions o;
    o.interference_beta = a.beta;
    return emulated_rate(table, jt, gpus, parts, o);
  };

  const double t0 = now_s();
  double t = t0, progress = 0, rate = rate_now(), rmin = rate, rmax = rate;
  long evaluations = 1;
  while (progress < a.work && !g_stop) {
    double to_finish = (a.work - progress) / (rate * a.scale);
    sleep_s(std::min(a.interval, to_finish));
    double t1 = now_s();
    progress += rate * a.scale * (t1 - t);
    t = t1;
    if (progress >= a.work * (1 - 1e-9) || g_stop) break;
    rate = rate_now();
    rmin = std::min(rmin, rate);
    rmax = std::max(rmax, rate);
    ++evaluations;
  }
  reg.leave();
  const double wall = now_s() - t0;
  if (g_stop) {
    std::cout << fmt::format("duet-emujob: job {} stopped by signal {} after {:.3f} s at {:.1f}% of its work\n", job_id,
                             static_cast<int>(g_stop), wall, 100 * std::min(1.0, progress / std::max(a.work, 1e-12)));
    return 128 + g_stop;
  }
  std::string where;
  for (const EmuNode* n : placed)
    where += fmt::format("{}{}({},speed={})", where.empty() ? "" : ",", n->name, n->gpu_type, n->speed);
  const double measured = wall > 0 ? a.work / (wall * a.scale) : rate;
  std::cout << fmt::format(
      "duet-emujob: job {} type '{}' gpus {} on {}: work {} s at scale {}: {:.3f} s wall, measured rate {:.4f} "
      "(model {:.4f}..{:.4f}, {} evaluations)\n",
      job_id, type_name, gpus, where, a.work, a.scale, wall, measured, rmin, rmax, evaluations);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{
      "duet-emujob: an emulated GPU training job for Slurm test clusters; it finishes when its progress, "
      "at the performance model's rate on its nodes, reaches --work"};
  app.set_version_flag("--version", std::string("duet-emujob ") + PACKAGE_VERSION);
  app.add_option("--work", a.work,
                 "work in reference seconds: the run time alone on one V100 machine (trace 'duration')")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--scale", a.scale, "time scale K: K reference seconds pass per wall second")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option(
      "--job-type", a.job_type,
      "Gavel job type, e.g. 'ResNet-50 (batch size 32)' (default: the simulator's rule from the job id and GPUs)");
  app.add_option("--gpus", a.gpus, "GPUs of the job (default: SLURM_GPUS_ON_NODE x nodes)")->check(CLI::PositiveNumber);
  app.add_option("--nodes", a.nodes, "nodes it runs on, a Slurm hostlist (default: SLURM_JOB_NODELIST)");
  app.add_option(
      "--nodes-csv", a.nodes_csv,
      "per-node description node,gpu_type,num_gpus,speed (default: nodes.csv next to $SLURM_CONF or one directory up)");
  app.add_option("--state-dir", a.state_dir,
                 "live registry of running emulated jobs (default: emujob/ next to nodes.csv)");
  app.add_option("--job-id", a.job_id, "id to register under (default: SLURM_JOB_ID)");
  app.add_option("--interval", a.interval, "wall seconds between re-evaluations of the rate")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--interference-beta", a.beta, "co-location interference scale (as in duet-sim(1))")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--throughputs", a.throughputs, "Gavel throughput JSON (default: the installed data/gavel copy)");
  app.add_flag("--known-speeds", a.known_speeds,
               "print nodes.csv with each node's known speed (type mean x node factor) and exit");
  app.add_flag("--quiet", a.quiet, "no warnings on stderr");
  CLI11_PARSE(app, argc, argv);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  try {
    return run(a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "duet-emujob: %s\n", e.what());
    return 1;
  }
}
