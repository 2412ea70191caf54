#include "vmha/engine/repl_bench.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "vmha/engine/epoch_manager.h"

namespace vmha {

namespace {

using Clock = std::chrono::steady_clock;

struct Workload {
  std::string name;
  bool memory_intensive;
  std::vector<std::string> argv;  // argv[0] relative to the workload dir
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

// Runs argv natively with stdout to /dev/null; seconds, or -1.
double run_native(const std::vector<std::string>& argv) {
  auto t0 = Clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    std::vector<char*> a;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    execv(a[0], a.data());
    _exit(127);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) return -1;
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Starts `vmha backup` (this executable) on a free port; returns its pid.
pid_t start_backup(const std::string& key, const std::string& addr_file, std::string* addr) {
  unlink(addr_file.c_str());
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execl("/proc/self/exe", "vmha", "backup", "--key", key.c_str(), "--address-file", addr_file.c_str(),
          "--accept-timeout", "20", static_cast<char*>(nullptr));
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

struct ModeResult {
  bool ok = false;
  double seconds = 0;
  EngineStats stats;
};

ModeResult run_mode(const std::vector<std::string>& argv, bool async, int epoch_ms, const std::string& key,
                    const std::string& addr_file) {
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
  if (!m.ok) std::fprintf(stderr, "vmha bench: %s (%s): %s\n", argv[0].c_str(), async ? "async" : "stop-copy",
                          r.result.message.empty() ? r.stats.backup_error.c_str() : r.result.message.c_str());
  m.stats = std::move(r.stats);
  return m;
}

}  // namespace

int replication_bench(const ReplBenchOptions& o) {
  signal(SIGPIPE, SIG_IGN);
  char dir_tmpl[] = "/tmp/vmha-bench.XXXXXX";
  if (!mkdtemp(dir_tmpl)) return std::fprintf(stderr, "vmha bench: cannot make a temporary directory\n"), 125;
  std::string tmp = dir_tmpl;
  std::string key = tmp + "/key", addr_file = tmp + "/addr";
  {
    std::ofstream k(key, std::ios::binary);
    for (int i = 0; i < 32; ++i) k.put(static_cast<char>(std::rand()));
  }
  chmod(key.c_str(), 0600);
  std::string d = o.workload_dir;
  if (d.empty()) {  // next to the vmha binary, as the native bench does
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    d = n > 0 ? std::string(exe, static_cast<size_t>(n)) : std::string("vmha/vmha");
    d = d.substr(0, d.rfind('/') + 1) + "workloads";
  }
  d += "/";
  std::vector<Workload> ws = {
      {"stream", true, {d + "stream", "2000000", "6"}},
      {"hashtable", true, {d + "hashtable", "262144", "600000"}},
      {"steps", true, {d + "steps", "200", "20000", "4"}},
      {"bfs", true, {d + "bfs", "60000", "8"}},
      {"matmul", false, {d + "matmul", "200"}},
      {"kvserver", false, {d + "kvserver", "600"}},
  };
  nlohmann::json out;
  out["epoch_ms"] = o.epoch_ms;
  out["workloads"] = nlohmann::json::array();
  std::vector<double> pause_ratios, latency_ratios;
  double overhead_async = -1;
  if (!o.json)
    std::printf("%-10s %8s %8s %8s | %9s %9s %9s %9s | %8s %8s | %9s %9s %9s %9s\n", "workload", "native s", "async s",
                "stopc s", "pause50 a", "pause99 a", "pause50 s", "pause99 s", "pages a", "pages s", "lat50 a", "lat99 a",
                "lat50 s", "lat99 s");
  for (const auto& w : ws) {
    if (!o.only.empty() && w.name.find(o.only) == std::string::npos) continue;
    double native = 1e9;
    for (int i = 0; i < o.reps; ++i) {
      double t = run_native(w.argv);
      if (t >= 0) native = std::min(native, t);
    }
    if (native >= 1e9) {
      std::fprintf(stderr, "vmha bench: %s does not run natively (build the workloads?)\n", w.argv[0].c_str());
      continue;
    }
    ModeResult a = run_mode(w.argv, true, o.epoch_ms, key, addr_file);
    ModeResult s = run_mode(w.argv, false, o.epoch_ms, key, addr_file);
    if (!a.ok || !s.ok) continue;
    nlohmann::json j;
    j["name"] = w.name;
    j["memory_intensive"] = w.memory_intensive;
    j["native_s"] = native;
    auto mode_json = [&](const ModeResult& m) {
      nlohmann::json x;
      x["run_s"] = m.seconds;
      x["overhead"] = m.seconds / native - 1;
      x["epochs"] = m.stats.epochs;
      x["pause_ms_p50"] = pct(m.stats.pause_ms, 0.5);
      x["pause_ms_p99"] = pct(m.stats.pause_ms, 0.99);
      x["pages_per_checkpoint"] = mean(m.stats.pages_per_ckpt);
      x["prefetched_pages"] = m.stats.prefetched_pages;
      x["residual_pages"] = m.stats.residual_pages;
      x["output_latency_ms_p50"] = pct(m.stats.output_latency_ms, 0.5);
      x["output_latency_ms_p99"] = pct(m.stats.output_latency_ms, 0.99);
      return x;
    };
    j["async"] = mode_json(a);
    j["stop_copy"] = mode_json(s);
    double pr = pct(s.stats.pause_ms, 0.5) > 0 ? pct(a.stats.pause_ms, 0.5) / pct(s.stats.pause_ms, 0.5) : 0;
    double lr = pct(s.stats.output_latency_ms, 0.5) > 0
                    ? pct(a.stats.output_latency_ms, 0.5) / pct(s.stats.output_latency_ms, 0.5) : 0;
    j["pause_ratio_p50"] = pr;
    j["latency_ratio_p50"] = lr;
    if (w.memory_intensive) {
      pause_ratios.push_back(pr);
      if (lr > 0) latency_ratios.push_back(lr);
    } else if (w.name == "matmul") {
      overhead_async = a.seconds / native - 1;
    }
    out["workloads"].push_back(j);
    if (!o.json)
      std::printf("%-10s %8.3f %8.3f %8.3f | %9.3f %9.3f %9.3f %9.3f | %8.0f %8.0f | %9.2f %9.2f %9.2f %9.2f\n",
                  w.name.c_str(), native, a.seconds, s.seconds, pct(a.stats.pause_ms, 0.5), pct(a.stats.pause_ms, 0.99),
                  pct(s.stats.pause_ms, 0.5), pct(s.stats.pause_ms, 0.99), mean(a.stats.pages_per_ckpt),
                  mean(s.stats.pages_per_ckpt), pct(a.stats.output_latency_ms, 0.5),
                  pct(a.stats.output_latency_ms, 0.99), pct(s.stats.output_latency_ms, 0.5),
                  pct(s.stats.output_latency_ms, 0.99));
    std::fflush(stdout);
  }
  // Summary ratios: median over the memory-intensive workloads.
  out["pause_ratio_p50"] = pct(pause_ratios, 0.5);
  out["latency_ratio_p50"] = pct(latency_ratios, 0.5);
  out["overhead_async"] = overhead_async;  // matmul (compute-bound), async, at epoch_ms
  if (o.json) {
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("pause_ratio_p50 (async/stop-copy, memory-intensive, median) %.3f\n", pct(pause_ratios, 0.5));
    std::printf("latency_ratio_p50 (async/stop-copy, memory-intensive, median) %.3f\n", pct(latency_ratios, 0.5));
    std::printf("overhead_async (matmul, %d ms epochs) %.3f\n", o.epoch_ms, overhead_async);
    std::printf("note: no PML on this host: every first write to a page after a harvest faults (~7.5-10 us)\n");
  }
  unlink(key.c_str());
  unlink(addr_file.c_str());
  rmdir(tmp.c_str());
  return 0;
}

}  // namespace vmha
