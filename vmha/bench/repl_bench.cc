#include "vmha/bench/repl_bench.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "vmha/bench/dynamic_workloads.h"
#include "vmha/bench/failover_bench.h"
#include "vmha/engine/epoch_manager.h"

namespace vmha {

namespace {

using Clock = std::chrono::steady_clock;

struct Workload {
  std::string name;
  bool memory_intensive;
  std::vector<std::string> argv;  // argv[0] an absolute path
  bool dynamic = false;           // Debian's dynamically linked programs (dynamic_workloads.h)
  int vcpus = 0;                  // VmOptions::vcpus (0: one per CPU)
};

double pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

struct NativeRun {
  double wall_s = -1, cpu_s = -1;  // -1: it failed
};

// Runs argv natively in `dir` (the guest's working directory) with stdout
// to /dev/null.
NativeRun run_native(const std::vector<std::string>& argv, const std::string& dir) {
  auto t0 = Clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(dir.c_str()) != 0) _exit(126);
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    std::vector<char*> a;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    execv(a[0], a.data());
    _exit(127);
  }
  int st = 0;
  rusage ru{};
  wait4(pid, &st, 0, &ru);
  NativeRun r;
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) return r;
  r.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  r.cpu_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
            static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  return r;
}

// What the guest would take on an idle host: the vCPU threads' CPU time plus
// the time it was paused for checkpoints. Unlike wall time it does not count
// waiting for a CPU, which dominates on a loaded 2-core machine.
double busy_s(const EngineStats& st) {
  double paused = 0;
  for (double p : st.pause_ms) paused += p / 1000;
  return st.guest_cpu_s + paused;
}

}  // namespace

pid_t start_backup(const std::string& key, const std::string& addr_file, std::string* addr,
                   const std::string& workdir) {
  unlink(addr_file.c_str());
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    const std::string dir = workdir.empty() ? "." : workdir;
    execl("/proc/self/exe", "vmha", "backup", "--key", key.c_str(), "--address-file", addr_file.c_str(),
          "--accept-timeout", "20", "--workdir", dir.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  for (int i = 0; i < 500; ++i) {
    std::ifstream f(addr_file);
    if (f >> *addr) return pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
}

namespace {

struct ModeResult {
  bool ok = false;
  double seconds = 0;  // wall time of the whole protected run (median over repetitions)
  double guest_s = 0, startup_s = 0, busy_s = 0;
  EngineStats stats;  // per-epoch samples pooled over repetitions
};

ModeResult run_once(const std::vector<std::string>& argv, int vcpus, bool async, int epoch_ms, const std::string& key,
                    const std::string& addr_file, const std::string& workdir) {
  ModeResult m;
  std::string addr;
  pid_t backup = start_backup(key, addr_file, &addr);
  if (backup < 0) return m;
  EngineOptions eo;
  eo.backup = addr;
  eo.key_file = key;
  eo.async = async;
  eo.epoch_ms = epoch_ms;
  eo.quiet = true;
  VmOptions vo;
  vo.memory_bytes = 1024ull << 20;
  vo.workdir = workdir;
  vo.vcpus = vcpus;
  fflush(stdout);
  int saved = dup(1);
  int null = open("/dev/null", O_WRONLY);
  dup2(null, 1);
  close(null);
  auto t0 = Clock::now();
  ProtectedRun r = run_protected(eo, vo, argv);
  m.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  dup2(saved, 1);
  close(saved);
  int st = 0;
  waitpid(backup, &st, 0);
  m.ok = r.result.end == RunResult::End::kExited && r.result.code == 0 && !r.stats.backup_lost;
  if (!m.ok)
    std::fprintf(stderr, "vmha bench: %s (%s): %s\n", argv[0].c_str(), async ? "async" : "stop-copy",
                 r.result.message.empty() ? r.stats.backup_error.c_str() : r.result.message.c_str());
  m.stats = std::move(r.stats);
  return m;
}

void append(std::vector<double>& to, const std::vector<double>& from) { to.insert(to.end(), from.begin(), from.end()); }

// Repetitions of one mode, gathered one run at a time (the caller
// interleaves modes): run times are medians, per-epoch samples pooled.
struct ModeRuns {
  std::vector<double> wall, guest, startup, busy;
  EngineStats stats;

  void add(const ModeResult& one) {
    wall.push_back(one.seconds);
    guest.push_back(one.stats.guest_s);
    startup.push_back(one.stats.startup_s);
    busy.push_back(busy_s(one.stats));
    EngineStats& a = stats;
    const EngineStats& b = one.stats;
    a.epochs += b.epochs;
    append(a.pause_ms, b.pause_ms);
    append(a.pages_per_ckpt, b.pages_per_ckpt);
    append(a.output_latency_ms, b.output_latency_ms);
    append(a.stop_ms, b.stop_ms);
    append(a.harvest_ms, b.harvest_ms);
    append(a.pull_ms, b.pull_ms);
    append(a.state_ms, b.state_ms);
    append(a.catch_up_ms, b.catch_up_ms);
    a.prefetched_pages += b.prefetched_pages;
    a.residual_pages += b.residual_pages;
  }
  ModeResult summary() const {
    ModeResult m;
    m.ok = true;
    m.seconds = pct(wall, 0.5);
    m.guest_s = pct(guest, 0.5);
    m.startup_s = pct(startup, 0.5);
    m.busy_s = pct(busy, 0.5);
    m.stats = stats;
    return m;
  }
};

// The bench's scratch directory: a 0600 key for the backup channel, the
// file the backup writes its address to; the guests' working directory.
struct Scratch {
  std::string dir, key, addr_file;
};

bool make_scratch(Scratch* s) {
  char dir_tmpl[] = "/tmp/vmha-bench.XXXXXX";
  if (!mkdtemp(dir_tmpl)) return false;
  s->dir = dir_tmpl;
  s->key = s->dir + "/key";
  s->addr_file = s->dir + "/addr";
  {
    std::ofstream k(s->key, std::ios::binary);
    for (int i = 0; i < 32; ++i) k.put(static_cast<char>(std::rand()));
  }
  chmod(s->key.c_str(), 0600);
  return copy_python_programs(s->dir);
}

void remove_scratch(const Scratch& s) {
  std::error_code ec;
  std::filesystem::remove_all(s.dir, ec);
}

// The workloads' directory with a trailing '/': --workloads, or next to the
// vmha binary, as the native bench does.
std::string workload_dir(const std::string& option) {
  std::string d = option;
  if (d.empty()) {
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    d = n > 0 ? std::string(exe, static_cast<size_t>(n)) : std::string("vmha/vmha");
    d = d.substr(0, d.rfind('/') + 1) + "workloads";
  }
  // absolute: the programs run from the scratch directory
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(d, ec);
  return (ec ? d : abs.string()) + "/";
}

std::vector<Workload> workloads(const std::string& d) {
  std::vector<Workload> all = {
      {"stream", true, {d + "stream", "2000000", "6"}},    {"hashtable", true, {d + "hashtable", "262144", "3000000"}},
      {"steps", true, {d + "steps", "200", "20000", "4"}}, {"bfs", true, {d + "bfs", "300000", "8"}},
      {"matmul", false, {d + "matmul", "1000"}},           {"kvserver", false, {d + "kvserver", "600"}},
  };
  for (auto& w : dynamic_workloads(d)) all.push_back({w.name, false, w.argv, true, w.vcpus});
  return all;
}

// One workload's repetitions: native run times, both modes, and the
// per-repetition overheads (busy time vs native CPU time).
struct WorkloadRuns {
  std::vector<double> natives, native_cpus, over_a, over_s;
  ModeRuns async, stop_copy;
};

// Side by side: each repetition runs native, async and stop-copy in turn,
// so a host that slows down for a while slows all three; overheads are
// medians of per-repetition ratios. False when a run failed (reported).
bool run_workload(const Workload& w, const ReplBenchOptions& o, const Scratch& s, WorkloadRuns* r) {
  for (int i = 0; i < std::max(1, o.reps); ++i) {
    NativeRun t = run_native(w.argv, s.dir);
    if (t.wall_s < 0) {
      std::fprintf(stderr, "vmha bench: %s does not run natively (build the workloads?)\n", w.argv[0].c_str());
      return false;
    }
    ModeResult a1 = run_once(w.argv, w.vcpus, true, o.epoch_ms, s.key, s.addr_file, s.dir);
    ModeResult s1 = run_once(w.argv, w.vcpus, false, o.epoch_ms, s.key, s.addr_file, s.dir);
    if (!a1.ok || !s1.ok) return false;
    r->natives.push_back(t.wall_s), r->native_cpus.push_back(t.cpu_s);
    r->async.add(a1), r->stop_copy.add(s1);
    if (t.cpu_s > 0)
      r->over_a.push_back(busy_s(a1.stats) / t.cpu_s - 1), r->over_s.push_back(busy_s(s1.stats) / t.cpu_s - 1);
  }
  return true;
}

nlohmann::json mode_json(const ModeResult& m, const std::vector<double>& overheads, double native, int reps) {
  nlohmann::json x;
  // The guest's own run time (overhead vs native); the VMM's start-up
  // (1 GiB region, connection, first checkpoint) is reported apart.
  x["guest_s"] = m.guest_s;
  x["overhead_wall"] = m.guest_s / native - 1;
  // vCPU CPU time + paused time vs the native CPU time (see busy_s).
  x["guest_busy_s"] = m.busy_s;
  x["overhead"] = pct(overheads, 0.5);  // median of per-repetition ratios
  x["startup_s"] = m.startup_s;
  x["run_s"] = m.seconds;
  x["epochs"] = m.stats.epochs / static_cast<uint64_t>(std::max(1, reps));
  x["pause_breakdown_ms_p50"] = {{"stop_vcpu", pct(m.stats.stop_ms, 0.5)},
                                 {"harvest", pct(m.stats.harvest_ms, 0.5)},
                                 {"residual_pull", pct(m.stats.pull_ms, 0.5)},
                                 {"state", pct(m.stats.state_ms, 0.5)}};
  if (!m.stats.catch_up_ms.empty()) x["catch_up_ms_p50"] = pct(m.stats.catch_up_ms, 0.5);
  x["pause_ms_p50"] = pct(m.stats.pause_ms, 0.5);
  x["pause_ms_p99"] = pct(m.stats.pause_ms, 0.99);
  x["pages_per_checkpoint"] = mean(m.stats.pages_per_ckpt);
  x["prefetched_pages"] = m.stats.prefetched_pages;
  x["residual_pages"] = m.stats.residual_pages;
  x["output_latency_ms_p50"] = pct(m.stats.output_latency_ms, 0.5);
  x["output_latency_ms_p99"] = pct(m.stats.output_latency_ms, 0.99);
  return x;
}

// A dynamically linked workload's line of the summary.
struct DynamicRow {
  std::string name;
  double over_a = 0, over_s = 0;  // busy time vs native CPU time, median of per-repetition ratios
  double pause_ratio = 0, latency_ratio = 0;
  size_t records = 0;  // output records per run
};

// Across workloads: the summary ratios.
struct Summary {
  std::vector<double> pause_ratios, latency_ratios;
  std::vector<std::string> latency_names;
  double overhead_async = -1, overhead_stop_copy = -1;
  std::vector<DynamicRow> dynamic;
  std::vector<std::string> skipped;  // dynamic workloads whose program is not installed
};

void print_table_header() {
  std::printf("%-11s %8s %8s %8s | %9s %9s %9s %9s | %8s %8s | %9s %9s %9s %9s\n", "workload", "native s", "async s",
              "stopc s", "pause50 a", "pause99 a", "pause50 s", "pause99 s", "pages a", "pages s", "lat50 a", "lat99 a",
              "lat50 s", "lat99 s");
}

void print_table_row(const std::string& name, double native, const ModeResult& a, const ModeResult& s) {
  std::printf("%-11s %8.3f %8.3f %8.3f | %9.3f %9.3f %9.3f %9.3f | %8.0f %8.0f | %9.2f %9.2f %9.2f %9.2f\n",
              name.c_str(), native, a.guest_s, s.guest_s, pct(a.stats.pause_ms, 0.5), pct(a.stats.pause_ms, 0.99),
              pct(s.stats.pause_ms, 0.5), pct(s.stats.pause_ms, 0.99), mean(a.stats.pages_per_ckpt),
              mean(s.stats.pages_per_ckpt), pct(a.stats.output_latency_ms, 0.5), pct(a.stats.output_latency_ms, 0.99),
              pct(s.stats.output_latency_ms, 0.5), pct(s.stats.output_latency_ms, 0.99));
}

// One workload's JSON object and table row; adds its ratios to `sum`.
nlohmann::json report_workload(const Workload& w, const WorkloadRuns& r, const ReplBenchOptions& o, Summary* sum) {
  const int reps = std::max(1, o.reps);
  const double native = pct(r.natives, 0.5), native_cpu = pct(r.native_cpus, 0.5);
  const ModeResult a = r.async.summary(), s = r.stop_copy.summary();
  nlohmann::json j;
  j["name"] = w.name;
  j["memory_intensive"] = w.memory_intensive;
  j["native_s"] = native;
  j["native_cpu_s"] = native_cpu;
  j["async"] = mode_json(a, r.over_a, native, o.reps);
  j["stop_copy"] = mode_json(s, r.over_s, native, o.reps);
  double pr = pct(s.stats.pause_ms, 0.5) > 0 ? pct(a.stats.pause_ms, 0.5) / pct(s.stats.pause_ms, 0.5) : 0;
  double lr = pct(s.stats.output_latency_ms, 0.5) > 0
                  ? pct(a.stats.output_latency_ms, 0.5) / pct(s.stats.output_latency_ms, 0.5)
                  : 0;
  j["pause_ratio_p50"] = pr;
  j["latency_ratio_p50"] = lr;
  // Latency of output written while the guest runs is what epochs govern;
  // a workload that prints once at its end only measures its last checkpoint.
  size_t records =
      std::min(a.stats.output_latency_ms.size(), s.stats.output_latency_ms.size()) / static_cast<size_t>(reps);
  j["output_records"] = records;
  if (w.dynamic) {
    sum->dynamic.push_back({w.name, r.over_a.empty() ? 0 : pct(r.over_a, 0.5), r.over_s.empty() ? 0 : pct(r.over_s, 0.5),
                            pr, lr, records});
  } else if (w.memory_intensive) {
    sum->pause_ratios.push_back(pr);
    if (lr > 0 && records >= 10) {
      sum->latency_ratios.push_back(lr);
      sum->latency_names.push_back(w.name);
    }
  } else if (w.name == "matmul") {
    sum->overhead_async = r.over_a.empty() ? -1 : pct(r.over_a, 0.5);
    sum->overhead_stop_copy = r.over_s.empty() ? -1 : pct(r.over_s, 0.5);
  }
  if (!o.json) print_table_row(w.name, native, a, s);
  return j;
}

// Failover: kill -9 the primary of `program` (numbered lines) at random
// points, --kills times (default max(5, --reps)). Empty when it could not
// run (reported).
nlohmann::json measure_failover(const std::string& name, const std::vector<std::string>& program, const Scratch& s,
                                const ReplBenchOptions& o, KillTrigger trigger = KillTrigger::kOutput) {
  nlohmann::json fo;
  FailoverBench fb =
      failover_bench(program, s.key, s.dir, o.epoch_ms, o.kills > 0 ? o.kills : std::max(5, o.reps), trigger);
  std::vector<double> take, flow;
  bool exact = !fb.samples.empty();
  int threads_min = 0;
  for (const auto& x : fb.samples) {
    take.push_back(x.takeover_ms), flow.push_back(x.output_ms), exact = exact && x.exact;
    threads_min = threads_min == 0 ? x.threads : std::min(threads_min, x.threads);
  }
  if (!fb.error.empty()) {
    std::fprintf(stderr, "vmha bench: failover (%s): %s\n", name.c_str(), fb.error.c_str());
    return fo;
  }
  fo["program"] = name;
  fo["lease_ms"] = fb.lease_ms;
  fo["kills"] = fb.samples.size();
  fo["takeover_ms_p50"] = pct(take, 0.5);
  fo["takeover_ms_max"] = pct(take, 1.0);
  fo["output_resumed_ms_p50"] = pct(flow, 0.5);
  fo["exact"] = exact;
  fo["threads_min"] = threads_min;  // the fewest guest threads a takeover resumed
  return fo;
}

void print_failover(const nlohmann::json& fo) {
  if (fo.empty()) return;
  std::printf(
      "failover (%s, kill -9 of the primary, %zu kills, lease %d ms, at least %d guest threads resumed): takeover "
      "p50 %.0f ms, max %.0f ms; output again after p50 %.0f ms; output %s\n",
      fo["program"].get<std::string>().c_str(), fo["kills"].get<size_t>(), fo["lease_ms"].get<int>(),
      fo["threads_min"].get<int>(), fo["takeover_ms_p50"].get<double>(), fo["takeover_ms_max"].get<double>(),
      fo["output_resumed_ms_p50"].get<double>(), fo["exact"].get<bool>() ? "exact (every line once)" : "NOT exact");
}

// The dynamically linked workloads: one line each, then medians over them.
nlohmann::json dynamic_summary(const Summary& sum) {
  nlohmann::json j;
  if (sum.dynamic.empty()) return j;
  std::vector<double> oa, os, pr, lr;
  for (const auto& d : sum.dynamic) {
    oa.push_back(d.over_a), os.push_back(d.over_s), pr.push_back(d.pause_ratio);
    if (d.latency_ratio > 0) lr.push_back(d.latency_ratio);
  }
  j["overhead_async"] = pct(oa, 0.5);
  j["overhead_stop_copy"] = pct(os, 0.5);
  j["pause_ratio_p50"] = pct(pr, 0.5);
  j["latency_ratio_p50"] = pct(lr, 0.5);
  return j;
}

void print_dynamic(const Summary& sum, const ReplBenchOptions& o) {
  if (sum.dynamic.empty()) return;
  std::printf("dynamically linked (ld.so and libc in the guest), median of %d side-by-side repetitions:\n",
              std::max(1, o.reps));
  for (const auto& d : sum.dynamic)
    std::printf(
        "  %-11s overhead async %+.1f%%, stop-copy %+.1f%%; pause p50 async/stop-copy %.3f; output latency p50 "
        "async/stop-copy %.3f (%zu records per run)\n",
        d.name.c_str(), 100 * d.over_a, 100 * d.over_s, d.pause_ratio, d.latency_ratio, d.records);
  nlohmann::json j = dynamic_summary(sum);
  std::printf(
      "dynamic (median over %zu workloads): overhead async %+.1f%% (stop-copy %+.1f%%), pause_ratio_p50 %.3f, "
      "latency_ratio_p50 %.3f\n",
      sum.dynamic.size(), 100 * j["overhead_async"].get<double>(), 100 * j["overhead_stop_copy"].get<double>(),
      j["pause_ratio_p50"].get<double>(), j["latency_ratio_p50"].get<double>());
}

void print_summary(const Summary& sum, const nlohmann::json& failovers, const ReplBenchOptions& o) {
  if (!sum.pause_ratios.empty())
    std::printf("pause_ratio_p50 (async/stop-copy, memory-intensive, median) %.3f\n", pct(sum.pause_ratios, 0.5));
  if (!sum.latency_ratios.empty())
    std::printf("latency_ratio_p50 (async/stop-copy, memory-intensive, median) %.3f\n", pct(sum.latency_ratios, 0.5));
  if (sum.overhead_async > -1)
    std::printf(
        "overhead_async (matmul, vCPU CPU + paused time vs native CPU time, %d ms epochs, median of %d "
        "side-by-side repetitions) %.1f%% (stop-copy %.1f%%)\n",
        o.epoch_ms, std::max(1, o.reps), 100 * sum.overhead_async, 100 * sum.overhead_stop_copy);
  print_dynamic(sum, o);
  for (const auto& fo : failovers) print_failover(fo);
  std::printf("note: no PML on this host: every first write to a page after a harvest faults (~7.5-10 us)\n");
}

}  // namespace

int replication_bench(const ReplBenchOptions& o) {
  signal(SIGPIPE, SIG_IGN);
  Scratch scratch;
  if (!make_scratch(&scratch)) return std::fprintf(stderr, "vmha bench: cannot make a temporary directory\n"), 125;
  const std::string d = workload_dir(o.workload_dir);
  nlohmann::json out;
  out["epoch_ms"] = o.epoch_ms;
  out["workloads"] = nlohmann::json::array();
  Summary sum;
  if (!o.json) print_table_header();
  bool have_data = false;  // the dynamic workloads' data file, made before the first
  for (const auto& w : workloads(d)) {
    if (!o.only.empty() && w.name.find(o.only) == std::string::npos) continue;
    if (w.dynamic && !installed(w.argv)) {
      std::fprintf(o.json ? stderr : stdout, "%-11s skipped: %s is not installed\n", w.name.c_str(),
                   w.argv[0].c_str());
      sum.skipped.push_back(w.name);
      continue;
    }
    if (w.dynamic && !have_data && !(have_data = make_dynamic_data(d, scratch.dir))) {
      std::fprintf(stderr, "vmha bench: %sgendata failed: no data for the dynamic workloads\n", d.c_str());
      break;  // the dynamic workloads come last
    }
    WorkloadRuns runs;
    if (!run_workload(w, o, scratch, &runs)) continue;
    out["workloads"].push_back(report_workload(w, runs, o, &sum));
    std::fflush(stdout);
  }
  nlohmann::json failovers = nlohmann::json::array();
  if (o.only.empty() || std::string("failover").find(o.only) != std::string::npos) {
    nlohmann::json fo = measure_failover("steps", {d + "steps", "600", "20000", "1"}, scratch, o);  // 601 lines
    if (!fo.empty()) {
      out["failover"] = fo;
      out["failover_ms_p50"] = fo["takeover_ms_p50"];
      failovers.push_back(fo);
    }
  }
  // The same kills on Debian's python3 printing numbered lines.
  const std::vector<std::string> py = python_numbered_lines(400, 10000);
  if (o.only.empty() || std::string("failover-python3").find(o.only) != std::string::npos) {
    if (!installed(py)) {
      std::fprintf(o.json ? stderr : stdout, "failover-python3 skipped: %s is not installed\n", py[0].c_str());
    } else if (nlohmann::json fo = measure_failover("python3", py, scratch, o); !fo.empty()) {
      out["failover_python3"] = fo;
      failovers.push_back(fo);
    }
  }
  // And on threaded programs: python3 with 4 threading.Thread workers, OpenMP with 4 threads.
  struct Threaded {
    std::string name, key;
    std::vector<std::string> program;
  };
  const Threaded threaded[] = {
      {"threads-python3", "failover_threads_python3", python_threaded_lines(200, 3000, "failover.json")},
      {"threads-omp4", "failover_threads_omp4", omp_lines(d, 200, 400000, 4)},
  };
  for (const auto& t : threaded) {
    if (!o.only.empty() && ("failover-" + t.name).find(o.only) == std::string::npos) continue;
    if (!installed(t.program)) {
      std::fprintf(o.json ? stderr : stdout, "failover-%s skipped: %s is not installed\n", t.name.c_str(),
                   t.program[0].c_str());
    } else if (nlohmann::json fo = measure_failover(t.name, t.program, scratch, o); !fo.empty()) {
      out[t.key] = fo;
      failovers.push_back(fo);
    }
  }
  // And on coreutils that print only at their end: killed after a random
  // checkpoint the backup acknowledged, not after a share of their output.
  bool have_inputs = false;
  for (const auto& c : coreutils_failovers()) {
    const std::string name = "coreutils-" + c.name;
    if (!o.only.empty() && ("failover-" + name).find(o.only) == std::string::npos) continue;
    if (!installed(c.argv)) {
      std::fprintf(o.json ? stderr : stdout, "failover-%s skipped: %s is not installed\n", name.c_str(),
                   c.argv[0].c_str());
      continue;
    }
    if (!have_inputs && !(have_inputs = make_coreutils_inputs(scratch.dir))) {
      std::fprintf(stderr, "vmha bench: cannot write the coreutils' inputs into %s\n", scratch.dir.c_str());
      break;
    }
    if (nlohmann::json fo = measure_failover(name, c.argv, scratch, o, KillTrigger::kCheckpoint); !fo.empty()) {
      out["failover_coreutils_" + c.name] = fo;
      failovers.push_back(fo);
    }
  }
  if (!sum.dynamic.empty()) {
    nlohmann::json dyn = dynamic_summary(sum);
    for (const auto& row : sum.dynamic) dyn["workloads"].push_back(row.name);
    out["dynamic"] = dyn;
  }
  if (!sum.skipped.empty()) out["dynamic_skipped"] = sum.skipped;
  // Summary ratios: median over the memory-intensive workloads.
  out["pause_ratio_p50"] = pct(sum.pause_ratios, 0.5);
  out["latency_ratio_p50"] = pct(sum.latency_ratios, 0.5);
  out["latency_ratio_workloads"] = sum.latency_names;  // memory-intensive, >= 10 output records per run
  out["overhead_async"] =
      sum.overhead_async;  // fraction (0.1 = 10%): matmul (compute-bound), async, busy time vs native CPU time
  if (o.json)
    std::printf("%s\n", out.dump(2).c_str());
  else
    print_summary(sum, failovers, o);
  remove_scratch(scratch);
  return 0;
}

}  // namespace vmha
