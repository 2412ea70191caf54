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
#include <functional>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "config.h"
#include "policy/io/data_files.h"
#include "policy/model/gavel.h"
#include "policy/model/job_types.h"
#include "policy/model/perf_model.h"
#include "replay/emu_checkpoint.h"
#include "replay/emu_nodes.h"
#include "replay/emu_rate.h"
#include "replay/emu_registry.h"

namespace {

using duet::ThroughputTable;
using duet::replay::EmuNode;
using duet::replay::EmuPart;
using duet::replay::EmuRegistry;

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
  double work = -1, scale = 1, interval = 0.5, beta = 0.10, checkpoint_every = 10;
  double restart_overhead = duet::ModelOptions{}.restart_overhead_s;  // what duet-sim charges a restart
  std::string job_type, nodes_csv, nodes, state_dir, checkpoint_dir, throughputs, job_id;
  int gpus = 0;
  bool known_speeds = false, quiet = false;
};

// Geometric mean over job types of R(jt, type) -- what a scheduler may know
// of a GPU type -- times the node's speed factor.
int print_known_speeds(const ThroughputTable& table, const std::vector<EmuNode>& nodes) {
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

// Where the job runs and what it is: from the options, else from Slurm's
// environment.
struct Job {
  std::vector<std::string> node_names;
  std::vector<const EmuNode*> placed;  // their rows of nodes.csv
  int gpus = 0;
  std::string id;
  int type = -1;  // job type in the throughput table
  std::string type_name;
};

std::string throughputs_file(const Args& a) {
  std::string tp = a.throughputs.empty() ? duet::find_data("data/gavel/simulation_throughputs.json") : a.throughputs;
  if (tp.empty())
    throw std::runtime_error(
        "cannot find data/gavel/simulation_throughputs.json; give --throughputs or set DUET_DATA_DIR");
  return tp;
}

std::string nodes_csv_file(const Args& a) {
  std::string nodes_csv = a.nodes_csv.empty() ? duet::replay::nodes_csv_from_slurm_conf() : a.nodes_csv;
  if (nodes_csv.empty())
    throw std::runtime_error("no nodes.csv: give --nodes-csv or run in a test cluster ($SLURM_CONF/../nodes.csv)");
  return nodes_csv;
}

// The job's type: --job-type, else the simulator's rule from its id and GPUs.
int job_type(const Args& a, const ThroughputTable& table, const std::string& tp, const std::string& job_id, int gpus) {
  if (!a.job_type.empty()) {
    const int jt = table.find_job_type(a.job_type);
    if (jt < 0)
      throw std::runtime_error("--job-type '" + a.job_type + "' is not in " + tp +
                               " (e.g. 'ResNet-50 (batch size 32)')");
    return jt;
  }
  duet::JobSpec js;
  js.id = std::atoll(job_id.c_str());
  js.gpus = gpus;
  return duet::assign_job_type(js, table, 1);
}

Job place_job(const Args& a, const ThroughputTable& table, const std::vector<EmuNode>& nodes,
              const std::string& nodes_csv, const std::string& tp) {
  Job job;
  std::string list = !a.nodes.empty() ? a.nodes : env_or("SLURM_JOB_NODELIST", env_or("SLURMD_NODENAME", ""));
  if (list.empty()) throw std::runtime_error("no nodes: give --nodes or run under Slurm (SLURM_JOB_NODELIST)");
  job.node_names = duet::replay::expand_hostlist(list);
  for (const auto& n : job.node_names) {
    const EmuNode* e = duet::replay::find_node(nodes, n);
    if (!e) throw std::runtime_error("node '" + n + "' is not in " + nodes_csv);
    job.placed.push_back(e);
  }
  job.gpus = a.gpus;
  if (job.gpus <= 0) {
    int per = std::atoi(env_or("SLURM_GPUS_ON_NODE", "1").c_str());
    job.gpus = std::max(1, per) * static_cast<int>(job.placed.size());
  }
  job.id = !a.job_id.empty() ? a.job_id : env_or("SLURM_JOB_ID", "local");
  job.type = job_type(a, table, tp, job.id, job.gpus);
  job.type_name = table.job_type_name(job.type);
  return job;
}

void warn_unknown_gpu_types(const Job& job, const ThroughputTable& table) {
  for (const EmuNode* n : job.placed)
    if (table.find_gpu(n->gpu_type) < 0)
      std::cerr << fmt::format(
          "duet-emujob: GPU type '{}' of {} is not in the throughput table; taken as the reference type\n", n->gpu_type,
          n->name);
}

// The performance model's rate now, with the emulated jobs registered on the
// job's nodes at this moment.
double current_rate(const Args& a, const Job& job, const ThroughputTable& table, const EmuRegistry& reg, long self) {
  std::vector<EmuPart> parts;
  for (const EmuNode* n : job.placed) {
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
  duet::replay::EmuRateOptions o;
  o.interference_beta = a.beta;
  return duet::replay::emulated_rate(table, job.type, job.gpus, parts, o);
}

struct Progress {
  double start = 0;     // now_s() when it began
  double target = 0;    // reference seconds of work this run has to do
  double progress = 0;  // of which done
  double rate = 0, rmin = 0, rmax = 0;
  long evaluations = 0;
  double left() const { return std::max(0.0, target - progress); }
};

// "Trains" until `target` work is done or a signal comes, re-evaluating the
// rate every --interval wall seconds; `save` is called with the work left
// every --checkpoint-every wall seconds.
Progress train(const Args& a, double target, const std::function<double()>& rate_now,
               const std::function<void(double)>& save) {
  Progress p;
  p.start = now_s();
  p.target = target;
  double t = p.start, saved = p.start;
  p.rate = p.rmin = p.rmax = rate_now();
  p.evaluations = 1;
  while (p.progress < target && !g_stop) {
    double to_finish = (target - p.progress) / (p.rate * a.scale);
    sleep_s(std::min(a.interval, to_finish));
    double t1 = now_s();
    p.progress += p.rate * a.scale * (t1 - t);
    t = t1;
    if (p.progress >= target * (1 - 1e-9) || g_stop) break;
    if (t - saved >= a.checkpoint_every) {
      save(p.left());
      saved = t;
    }
    p.rate = rate_now();
    p.rmin = std::min(p.rmin, p.rate);
    p.rmax = std::max(p.rmax, p.rate);
    ++p.evaluations;
  }
  return p;
}

// Where this run starts: the whole work, or -- in a run after a requeue
// (SLURM_RESTART_COUNT >= 1) with a checkpoint -- the work left then plus
// the restart overhead, as duet-sim(1) charges a restarted job.
struct Resume {
  int restarts = 0;
  double work_left = 0;
  bool resumed = false;
};

Resume resume_point(const Args& a, const std::string& ckpt) {
  Resume r;
  r.restarts = std::max(0, std::atoi(env_or("SLURM_RESTART_COUNT", "0").c_str()));
  r.work_left = a.work;
  if (r.restarts == 0) {
    duet::replay::remove_checkpoint(ckpt);  // an earlier job's under a reused id
    return r;
  }
  if (std::optional<double> left = duet::replay::read_checkpoint(ckpt)) {
    r.work_left = std::min(a.work, *left) + a.restart_overhead;
    r.resumed = true;
  }
  return r;
}

// Prints how the run went; returns the exit status (128 + the signal if one
// stopped it).
int print_outcome(const Args& a, const Job& job, const Resume& r, const Progress& p, double wall) {
  if (g_stop) {
    std::cout << fmt::format(
        "duet-emujob: job {} stopped by signal {} after {:.3f} s at {:.1f}% of its work ({:.1f} s left, "
        "checkpointed)\n",
        job.id, static_cast<int>(g_stop), wall, 100 * std::clamp(1 - p.left() / std::max(a.work, 1e-12), 0.0, 1.0),
        p.left());
    return 128 + g_stop;
  }
  std::string where;
  for (const EmuNode* n : job.placed)
    where += fmt::format("{}{}({},speed={})", where.empty() ? "" : ",", n->name, n->gpu_type, n->speed);
  const double measured = wall > 0 ? p.target / (wall * a.scale) : p.rate;
  const std::string resumed =
      r.resumed
          ? fmt::format(" (restart {}: resumed with {:.1f} s left, restart overhead included)", r.restarts, r.work_left)
      : r.restarts ? fmt::format(" (restart {}: no checkpoint, from the start)", r.restarts)
                   : "";
  std::cout << fmt::format(
      "duet-emujob: job {} type '{}' gpus {} on {}: work {} s at scale {}{}: {:.3f} s wall, measured rate {:.4f} "
      "(model {:.4f}..{:.4f}, {} evaluations)\n",
      job.id, job.type_name, job.gpus, where, a.work, a.scale, resumed, wall, measured, p.rmin, p.rmax, p.evaluations);
  return 0;
}

int run(const Args& a) {
  const std::string tp = throughputs_file(a);
  const std::string nodes_csv = nodes_csv_file(a);
  const ThroughputTable table = duet::read_gavel(tp);
  const std::vector<EmuNode> nodes = duet::replay::read_nodes_csv(nodes_csv);
  if (a.known_speeds) return print_known_speeds(table, nodes);
  if (a.work < 0) throw std::runtime_error("--work is required");
  const Job job = place_job(a, table, nodes, nodes_csv, tp);
  if (!a.quiet) warn_unknown_gpu_types(job, table);

  std::string state =
      a.state_dir.empty() ? (std::filesystem::path(nodes_csv).parent_path() / "emujob").string() : a.state_dir;
  const std::string ckpt = duet::replay::checkpoint_path(
      a.checkpoint_dir.empty() ? (std::filesystem::path(state) / ".checkpoints").string() : a.checkpoint_dir, job.id);
  const Resume r = resume_point(a, ckpt);
  EmuRegistry reg(state);
  const long self = static_cast<long>(getpid());
  reg.enter(job.node_names, job.id, self, job.type_name);
  const Progress p = train(
      a, r.work_left, [&] { return current_rate(a, job, table, reg, self); },
      [&](double left) { duet::replay::write_checkpoint(ckpt, left); });
  reg.leave();
  if (g_stop)
    duet::replay::write_checkpoint(ckpt, p.left());  // preempted (requeue signals it): the next run resumes here
  else
    duet::replay::remove_checkpoint(ckpt);
  return print_outcome(a, job, r, p, now_s() - p.start);
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
  app.add_option("--job-id", a.job_id, "id to register and checkpoint under (default: SLURM_JOB_ID)");
  app.add_option("--checkpoint-dir", a.checkpoint_dir,
                 "where the work left is saved on a signal and every --checkpoint-every s, for the run after a "
                 "requeue (SLURM_RESTART_COUNT >= 1) to resume (default: .checkpoints/ in the state directory)");
  app.add_option("--checkpoint-every", a.checkpoint_every, "wall seconds between checkpoints while running")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--restart-overhead", a.restart_overhead,
                 "reference seconds a resumed run adds to the work left (as duet-sim --restart-overhead)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
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
