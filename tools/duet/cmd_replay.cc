// duet replay: a trace slice through sbatch as duet-emujob jobs at the
// trace's (scaled) submit times; waits for them and records their ids
// (man duet-replay(1)).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "tools/duet/commands.h"
#include "tools/duet/common.h"
#include "policy/model/gavel.h"
#include "policy/io/trace.h"
#include "policy/model/job_types.h"
#include "replay/emu_nodes.h"
#include "replay/jobs_file.h"
#include "replay/run_command.h"
#include "replay/slurm_config.h"
#include "policy/util/text.h"

namespace duet::cli {
namespace {

using namespace duet::replay;

struct ReplayArgs {
  std::string trace, partition, out = "replay-jobs.csv", nodes_csv, emujob, job_output = "/dev/null", throughputs;
  double scale = 1, wait_timeout = 1800, time_limit_factor = 0, max_duration = 0;
  size_t limit = 0, skip = 0;
  uint64_t seed = 1;
  bool no_wait = false, requeue = false;
};

std::string default_emujob() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto p = self.parent_path() / "duet-emujob";
    if (std::filesystem::exists(p)) return p.string();
  }
  return "duet-emujob";
}

std::string quote_sh(const std::string& s) {
  std::string o = "'";
  for (char c : s) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return o + "'";
}

// sbatch options asking for `gpus` GPUs of `types` ("" = any, "V100|P100").
// Returns false (and why) if no set of nodes could ever hold the job.
bool gres_options(const JobSpec& j, const std::vector<EmuNode>& nodes, std::vector<std::string>& opts,
                  std::string& why) {
  std::set<std::string> want;
  for (size_t b = 0; !j.gpu_type.empty();) {
    size_t e = j.gpu_type.find('|', b);
    want.insert(lower(j.gpu_type.substr(b, e == std::string::npos ? std::string::npos : e - b)));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  int per_node = 0, total = 0;
  std::string exclude;
  for (const auto& n : nodes) {
    if (want.empty() || want.count(lower(n.gpu_type))) {
      per_node = std::max(per_node, n.gpus);
      total += n.gpus;
    } else {
      exclude += (exclude.empty() ? "" : ",") + n.name;
    }
  }
  if (total < j.gpus) {
    why = fmt::format("needs {} GPUs{}, the cluster has {}", j.gpus, j.gpu_type.empty() ? "" : " of " + j.gpu_type,
                      total);
    return false;
  }
  // One type: a typed request. Several: untyped, other types' nodes excluded.
  const std::string type = want.size() == 1 ? *want.begin() + ":" : "";
  if (want.size() > 1 && !exclude.empty()) opts.push_back("--exclude=" + exclude);
  const int k = (j.gpus + per_node - 1) / per_node;
  opts.push_back(fmt::format("--nodes={}", k));
  if (j.gpus % k == 0)
    opts.push_back(fmt::format("--gres=gpu:{}{}", type, j.gpus / k));
  else
    opts.push_back(fmt::format("--gpus={}{}", type, j.gpus));
  return true;
}

std::set<std::string> queued_ids(const std::string& partition) {
  CommandResult r = run_command({"squeue", "-h", "-o", "%i", "-p", partition}, 30);
  if (r.status != 0) throw std::runtime_error("squeue failed: " + r.err);
  std::set<std::string> s;
  std::istringstream in(r.out);
  for (std::string id; in >> id;) s.insert(id);
  return s;
}

// The jobs to submit: the trace after --skip, by submit time, at most --limit.
std::vector<JobSpec> replay_slice(const ReplayArgs& a, const Trace& t) {
  if (a.skip >= t.jobs.size())
    throw std::runtime_error(fmt::format("--skip {}: the trace has {} jobs", a.skip, t.jobs.size()));
  std::vector<JobSpec> slice(t.jobs.begin() + a.skip, t.jobs.end());
  std::stable_sort(slice.begin(), slice.end(), [](auto& x, auto& y) { return x.submit < y.submit; });
  if (a.limit && slice.size() > a.limit) slice.resize(a.limit);
  return slice;
}

// What the job-id file and each job's sbatch line need.
struct Replay {
  Trace trace;
  ThroughputTable table;
  std::vector<EmuNode> nodes;
  std::vector<JobSpec> slice;
  std::string emujob;
};

Replay read_replay(const ReplayArgs& a) {
  Trace t = read_trace(a.trace);
  std::string tp = a.throughputs.empty() ? find_data("data/gavel/simulation_throughputs.json") : a.throughputs;
  if (tp.empty())
    throw std::runtime_error(
        "cannot find data/gavel/simulation_throughputs.json; give --throughputs or set DUET_DATA_DIR");
  ThroughputTable table = read_gavel(tp);
  std::string nodes_csv = a.nodes_csv.empty() ? nodes_csv_from_slurm_conf() : a.nodes_csv;
  if (nodes_csv.empty())
    throw std::runtime_error("no nodes.csv: give --nodes-csv or set SLURM_CONF to a test cluster's slurm.conf");
  std::vector<EmuNode> nodes = read_nodes_csv(nodes_csv);
  std::vector<JobSpec> slice = replay_slice(a, t);
  std::string emujob = a.emujob.empty() ? default_emujob() : a.emujob;
  return Replay{std::move(t), std::move(table), std::move(nodes), std::move(slice), std::move(emujob)};
}

// The rest of a job's sbatch line after its --gres options: time limit,
// the hint for select/duet and the duet-emujob command.
void add_job_options(const ReplayArgs& a, const Replay& r, const JobSpec& j, int jt, std::vector<std::string>& argv) {
  if (a.requeue) argv.push_back("--requeue");  // preemptible by requeue; duet-emujob resumes from its checkpoint
  if (a.time_limit_factor > 0)
    argv.push_back(fmt::format(
        "--time={}", std::max(1L, std::lround(std::ceil(j.duration / a.scale * a.time_limit_factor / 60.0)))));
  // What select/duet's learned agent compares the measured run time with
  // (plugins/seam/job_hints.h): wall seconds alone on a reference machine.
  argv.push_back(fmt::format("--comment=duet:ref={:.6g};type={}", j.duration / a.scale, r.table.job_type_name(jt)));
  argv.push_back("--wrap=exec " + quote_sh(r.emujob) +
                 fmt::format(" --work {} --scale {} --gpus {} --job-type ", j.duration, a.scale, j.gpus) +
                 quote_sh(r.table.job_type_name(jt)));
}

// sbatch, once more after a second if it fails (slurmctld may be busy for a
// moment); returns the job id, "" if both failed (r says why).
std::string sbatch(const std::vector<std::string>& argv, CommandResult& r) {
  r = run_command(argv, 30);
  if (r.status != 0) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    r = run_command(argv, 30);
  }
  std::string id = r.out.substr(0, r.out.find_first_of(";\n"));
  return r.status != 0 ? "" : id;
}

struct Submitted {
  std::vector<std::string> ids;
  int skipped = 0, failed = 0, capped = 0;
};

// Submits the slice at its scaled submit times, the first job at t0,
// writing each job's row to the job-id file as it goes.
Submitted submit_all(const ReplayArgs& a, const Replay& r, std::ofstream& out,
                     std::chrono::steady_clock::time_point t0) {
  Submitted s;
  const double first = r.slice.front().submit;
  for (JobSpec j : r.slice) {
    if (a.max_duration > 0 && j.duration > a.max_duration) {
      j.duration = a.max_duration;
      ++s.capped;
    }
    std::vector<std::string> argv = {"sbatch", "--parsable", "--partition=" + a.partition,
                                     fmt::format("--job-name=duet-{}", j.id), "--output=" + a.job_output};
    std::string why;
    if (!gres_options(j, r.nodes, argv, why)) {
      std::cerr << fmt::format("duet replay: {}:{}: job {} left out: {}\n", r.trace.source, j.line, j.id, why);
      ++s.skipped;
      continue;
    }
    const int jt = assign_job_type(j, r.table, a.seed, r.trace.source);
    add_job_options(a, r, j, jt, argv);
    std::this_thread::sleep_until(t0 + std::chrono::duration<double>((j.submit - first) / a.scale));
    CommandResult result;
    const std::string id = sbatch(argv, result);
    if (id.empty()) {
      std::cerr << fmt::format("duet replay: job {}: sbatch failed ({}): {}\n", j.id, command_text(argv), result.err);
      ++s.failed;
      continue;
    }
    s.ids.push_back(id);
    write_job_row(out, {id, j.id, j.submit - first, j.duration, j.gpus, j.gpu_type, r.table.job_type_name(jt)});
    out.flush();
    if (s.ids.size() % 10 == 0)
      std::cerr << fmt::format("duet replay: {} of {} jobs submitted\n", s.ids.size(), r.slice.size());
  }
  return s;
}

// Waits until none of the jobs is queued or running any more.
void wait_for_jobs(const ReplayArgs& a, const std::vector<std::string>& ids, std::chrono::steady_clock::time_point t0) {
  const std::set<std::string> mine(ids.begin(), ids.end());
  const auto limit = std::chrono::steady_clock::now() + std::chrono::duration<double>(a.wait_timeout);
  for (;;) {
    size_t left = 0;
    for (const auto& q : queued_ids(a.partition)) left += mine.count(q);
    if (left == 0) break;
    if (std::chrono::steady_clock::now() > limit)
      throw std::runtime_error(
          fmt::format("{} jobs still queued or running after --wait-timeout {} s", left, a.wait_timeout));
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cerr << fmt::format("duet replay: all {} jobs left the queue after {:.1f} s\n", ids.size(), took);
}

void run(const ReplayArgs& a) {
  const Replay r = read_replay(a);
  std::ofstream out(a.out, std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + a.out);
  // The plugins this run is scheduled by, so its report names them later.
  std::map<std::string, std::string> meta = replay::slurm_scheduling_plugins();
  meta.insert({{"trace", a.trace},
               {"scale", fmt::format("{}", a.scale)},
               {"partition", a.partition},
               {"skip", std::to_string(a.skip)},
               {"seed", std::to_string(a.seed)},
               {"max_duration", fmt::format("{}", a.max_duration)},
               {"requeue", a.requeue ? "1" : "0"}});
  write_jobs_header(out, meta);
  const auto t0 = std::chrono::steady_clock::now();
  const Submitted s = submit_all(a, r, out, t0);
  if (s.capped)
    std::cerr << fmt::format("duet replay: {} jobs' work capped at --max-duration {} s\n", s.capped, a.max_duration);
  std::cerr << fmt::format("duet replay: {} jobs submitted, {} left out, {} failed; ids in {}\n", s.ids.size(),
                           s.skipped, s.failed, a.out);
  if (a.no_wait || s.ids.empty()) return;
  wait_for_jobs(a, s.ids, t0);
  if (s.failed) throw std::runtime_error(fmt::format("{} sbatch calls failed", s.failed));
}

}  // namespace

void setup_replay(CLI::App* app) {
  auto a = std::make_shared<ReplayArgs>();
  app->add_option("--trace", a->trace, "job trace CSV (duet-trace(5))")->required();
  app->add_option("--scale", a->scale, "time scale K: trace seconds per wall second")
      ->required()
      ->check(CLI::PositiveNumber);
  app->add_option("--partition", a->partition, "Slurm partition")->required();
  app->add_option("--limit", a->limit, "at most N jobs (the first by submit time)");
  app->add_option("--skip", a->skip, "leave out the first N jobs of the trace (file order)");
  app->add_option("--out", a->out, "job-id file to write (CSV, read by duet report --jobs)")->capture_default_str();
  app->add_option("--seed", a->seed, "seed of the job-type rule (as duet sim --seed)")->capture_default_str();
  app->add_option("--nodes-csv", a->nodes_csv,
                  "the cluster's nodes.csv (default: next to $SLURM_CONF or one directory up)");
  app->add_option("--emujob", a->emujob, "duet-emujob program (default: next to duet, else on PATH)");
  app->add_option("--job-output", a->job_output, "sbatch --output of each job (e.g. DIR/%j.out)")
      ->capture_default_str();
  app->add_option("--time-limit-factor", a->time_limit_factor,
                  "give each job --time = F x its scaled work (minutes, at least 1); 0 = no limit")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app->add_option("--max-duration", a->max_duration,
                  "cap each job's work at this many trace seconds (0 = no cap), so a slice with week-long jobs "
                  "replays in minutes; the job-id file records the capped work")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app->add_option("--wait-timeout", a->wait_timeout, "give up waiting after this many seconds")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app->add_flag("--no-wait", a->no_wait, "return once every job is submitted");
  app->add_flag("--requeue", a->requeue,
                "submit the jobs --requeue, so duet's Preemption=requeue may preempt them (duet-emujob resumes a "
                "requeued job from its checkpoint)");
  app->add_option("--throughputs", a->throughputs, "Gavel throughput JSON (default: the installed data/gavel copy)");
  app->callback([a] { run(*a); });
}

}  // namespace duet::cli
