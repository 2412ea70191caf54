#include "vmha/bench/native_bench.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "vmha/vmm/vm.h"

namespace vmha {

namespace {

using Clock = std::chrono::steady_clock;

struct BenchWorkload {
  std::string name;
  std::vector<std::string> argv;
};

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Native run time (stdout to /dev/null), or a negative value on failure.
double run_native(const std::vector<std::string>& argv, const std::string& dir) {
  auto t0 = Clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(dir.c_str()) != 0) _exit(126);
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  double s = seconds_since(t0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? s : -1;
}

struct VmRun {
  bool ok = false;
  std::string error;
  double seconds = 0;
  uint64_t syscalls = 0;
  uint64_t dirty_pages = 0;  // sum over harvests
  uint64_t harvests = 0;
};

// One run inside vmha with a harvester thread every `period_ms` (0: none),
// or a harvest at every getppid() marker when `harvest_at_marker` is set.
VmRun run_in_vm(const std::vector<std::string>& argv, const std::string& dir, TrackerKind tracker, int period_ms,
                bool harvest_at_marker) {
  VmRun res;
  ElfImage img;
  if (Status s = read_elf_file(argv[0], &img); !s.ok()) {
    res.error = s.message();
    return res;
  }
  int null_out = open("/dev/null", O_WRONLY | O_CLOEXEC), null_in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  VmOptions o;
  o.tracker = tracker;
  o.workdir = dir;
  o.std_fds[0] = null_in;
  o.std_fds[1] = null_out;
  o.std_fds[2] = null_out;
  o.log_unsupported = false;
  std::unique_ptr<Vm> vm;
  Status s = Vm::create(o, &vm);
  if (s.ok()) s = vm->load(img, argv[0], argv, {"LC_ALL=C"});
  close(null_out);
  close(null_in);
  if (!s.ok()) {
    res.error = s.message();
    return res;
  }
  std::atomic<bool> done{false};
  std::atomic<uint64_t> pages{0}, harvests{0};
  auto harvest = [&](Vm& v) {
    std::vector<uint64_t> got;
    if (v.tracker().harvest(got).ok()) {
      pages += got.size();
      ++harvests;
    }
  };
  if (harvest_at_marker)
    vm->set_syscall_hook([&](Vm& v, uint64_t nr, uint64_t) {
      if (nr == 110) harvest(v);
      return HookAction::kContinue;
    });
  std::thread harvester;
  if (period_ms > 0)
    harvester = std::thread([&] {
      while (!done.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(period_ms));
        harvest(*vm);
      }
    });
  auto t0 = Clock::now();
  RunResult r = vm->run();
  res.seconds = seconds_since(t0);
  done = true;
  if (harvester.joinable()) harvester.join();
  harvest(*vm);
  res.syscalls = vm->syscalls();
  res.dirty_pages = pages;
  res.harvests = harvests;
  res.ok = r.end == RunResult::End::kExited && r.code == 0;
  if (!res.ok) res.error = r.message.empty() ? "exit status " + std::to_string(r.code) : r.message;
  return res;
}

VmRun best_of(int reps, const std::function<VmRun()>& f) {
  VmRun best;
  for (int i = 0; i < reps; ++i) {
    VmRun r = f();
    if (!r.ok) return r;
    if (!best.ok || r.seconds < best.seconds) best = r;
  }
  return best;
}

double best_native(int reps, const std::vector<std::string>& argv, const std::string& dir) {
  double best = -1;
  for (int i = 0; i < reps; ++i) {
    double s = run_native(argv, dir);
    if (s < 0) return s;
    if (best < 0 || s < best) best = s;
  }
  return best;
}

std::string default_workload_dir() {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return "vmha/workloads";
  self[n] = 0;
  std::string s = self;
  s = s.substr(0, s.rfind('/'));
  if (s.size() > 6 && s.substr(s.size() - 6) == "/.libs") s = s.substr(0, s.size() - 6);
  return s + "/workloads";
}

// The workloads of the overhead table, run in `dir` (gendata's data.txt).
std::vector<BenchWorkload> table_workloads(const std::string& wdir) {
  auto wl = [&](const char* n) { return wdir + "/" + n; };
  const std::string bb = "/bin/busybox";
  return {
      {"gzip", {bb, "gzip", "-c", "data.txt"}},
      {"bzip2", {bb, "bzip2", "-c", "data.txt"}},
      {"md5sum", {bb, "md5sum", "data.txt"}},
      {"sha256sum", {bb, "sha256sum", "data.txt"}},
      {"sort", {bb, "sort", "-t,", "-k2,2", "-k1n", "data.txt"}},
      {"awk", {bb, "awk", "-F,", "{s[$2]+=$4} END {for (k in s) print k, s[k]}", "data.txt"}},
      {"stream", {wl("stream"), "2000000", "10"}},
      {"hashtable", {wl("hashtable"), "524288", "2000000"}},
      {"matmul", {wl("matmul"), "400"}},
      {"bfs", {wl("bfs"), "300000", "8"}},
      {"kvserver", {wl("kvserver"), "3000"}},
  };
}

// One row per workload: native time, then time, slowdown and rates under
// each tracker.
void overhead_table(const BenchOptions& opts, const std::vector<BenchWorkload>& all, const std::string& dir) {
  const TrackerKind trackers[] = {TrackerKind::kRing, TrackerKind::kBitmap, TrackerKind::kNone};
  std::printf("vmha bench%s: best of %d; harvester thread every %d ms; times in seconds\n",
              opts.native_only ? " --native-only" : "", opts.reps, opts.harvest_ms);
  std::printf("%-10s %8s | %8s %6s %9s %11s | %8s %6s %11s | %8s %6s\n", "workload", "native", "ring", "x", "syscall/s",
              "dirty pg/s", "bitmap", "x", "dirty pg/s", "none", "x");
  for (const BenchWorkload& w : all) {
    if (!opts.only.empty() && w.name.find(opts.only) == std::string::npos) continue;
    double native = best_native(opts.reps, w.argv, dir);
    if (native < 0) {
      std::printf("%-10s native run failed\n", w.name.c_str());
      continue;
    }
    std::printf("%-10s %8.3f |", w.name.c_str(), native);
    for (TrackerKind t : trackers) {
      VmRun r = best_of(opts.reps, [&] { return run_in_vm(w.argv, dir, t, opts.harvest_ms, false); });
      if (!r.ok) {
        std::printf(" failed: %s |", r.error.c_str());
        continue;
      }
      double x = r.seconds / native;
      if (t == TrackerKind::kRing)
        std::printf(" %8.3f %5.2fx %9.0f %11.0f |", r.seconds, x, r.syscalls / r.seconds, r.dirty_pages / r.seconds);
      else if (t == TrackerKind::kBitmap)
        std::printf(" %8.3f %5.2fx %11.0f |", r.seconds, x, r.dirty_pages / r.seconds);
      else
        std::printf(" %8.3f %5.2fx", r.seconds, x);
      std::fflush(stdout);
    }
    std::printf("\n");
  }
}

// System-call round trip: the difference of two loop lengths.
void syscall_round_trip(const BenchOptions& opts, const std::string& wdir, const std::string& dir) {
  const long n1 = 2000, n2 = 22000;
  auto loop = [&](long n) { return std::vector<std::string>{wdir + "/syscall_loop", std::to_string(n)}; };
  VmRun a = best_of(opts.reps, [&] { return run_in_vm(loop(n1), dir, TrackerKind::kRing, 0, false); });
  VmRun b = best_of(opts.reps, [&] { return run_in_vm(loop(n2), dir, TrackerKind::kRing, 0, false); });
  double na = best_native(opts.reps, loop(200000), dir), nb = best_native(opts.reps, loop(2200000), dir);
  if (a.ok && b.ok && na > 0 && nb > 0)
    std::printf("\nsystem-call round trip (getppid): vmha %.1f us, native %.3f us\n",
                (b.seconds - a.seconds) / (n2 - n1) * 1e6, (nb - na) / 2000000 * 1e6);
}

// Per-operation cost of a workload that repeats one operation N times
// (fork_loop, thread_pingpong): the difference of two run lengths, so
// loading and start-up cancel out. Microseconds per operation, vmha and
// native.
void per_operation(const BenchOptions& opts, const char* what, const std::string& dir,
                   const std::function<std::vector<std::string>(long)>& argv, long n1, long n2) {
  VmRun a = best_of(opts.reps, [&] { return run_in_vm(argv(n1), dir, TrackerKind::kNone, 0, false); });
  VmRun b = best_of(opts.reps, [&] { return run_in_vm(argv(n2), dir, TrackerKind::kNone, 0, false); });
  double na = best_native(opts.reps, argv(n1), dir), nb = best_native(opts.reps, argv(n2), dir);
  if (a.ok && b.ok && na > 0 && nb > 0) {
    const double vm = (b.seconds - a.seconds) / static_cast<double>(n2 - n1) * 1e6;
    const double native = (nb - na) / static_cast<double>(n2 - n1) * 1e6;
    std::printf("%s: vmha %.1f us, native %.1f us (%.1fx)\n", what, vm, native, vm / native);
  } else {
    std::printf("%s: %s\n", what, (!a.ok ? a.error : !b.ok ? b.error : std::string("native run failed")).c_str());
  }
}

// First write to a page after a harvest: page_writer rewrites the same
// pages every round and the log is harvested between rounds.
void first_write_after_harvest(const BenchOptions& opts, const std::string& wdir, const std::string& dir) {
  const long pages = 2048, rounds = 30;
  std::vector<std::string> pw = {wdir + "/page_writer", std::to_string(pages), std::to_string(rounds)};
  VmRun base = best_of(opts.reps, [&] { return run_in_vm(pw, dir, TrackerKind::kNone, 0, true); });
  for (TrackerKind t : {TrackerKind::kRing, TrackerKind::kBitmap}) {
    VmRun r = best_of(opts.reps, [&] { return run_in_vm(pw, dir, t, 0, true); });
    if (r.ok && base.ok)
      std::printf("first write after a harvest (%s): %.2f us per page (%llu pages harvested in %llu harvests)\n",
                  tracker_name(t), (r.seconds - base.seconds) / (pages * rounds) * 1e6,
                  static_cast<unsigned long long>(r.dirty_pages), static_cast<unsigned long long>(r.harvests));
  }
}

// Pausing the running vCPU from another thread (what an epoch boundary does).
void pause_latency(const std::string& wdir, const std::string& dir) {
  ElfImage img;
  std::unique_ptr<Vm> vm;
  VmOptions o;
  o.workdir = dir;
  int null_out = open("/dev/null", O_WRONLY | O_CLOEXEC);
  o.std_fds[1] = o.std_fds[2] = null_out;
  std::vector<std::string> argv = {wdir + "/stream", "2000000", "200"};
  if (read_elf_file(argv[0], &img).ok() && Vm::create(o, &vm).ok() && vm->load(img, argv[0], argv, {}).ok()) {
    std::thread runner([&] { (void)vm->run(); });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::vector<double> us;
    for (int i = 0; i < 200; ++i) {
      auto t0 = Clock::now();
      vm->request_pause();
      vm->wait_paused();
      us.push_back(seconds_since(t0) * 1e6);
      vm->resume();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    vm->request_stop();
    runner.join();
    std::sort(us.begin(), us.end());
    std::printf("pause of a running vCPU from another thread: p50 %.1f us, p99 %.1f us (200 pauses)\n",
                us[us.size() / 2], us[us.size() * 99 / 100]);
  }
  close(null_out);
}

}  // namespace

int bench_command(const BenchOptions& opts) {
  signal(SIGPIPE, SIG_IGN);
  std::string wdir = opts.workload_dir.empty() ? default_workload_dir() : opts.workload_dir;
  if (access((wdir + "/gendata").c_str(), X_OK) != 0) {
    std::fprintf(stderr, "vmha bench: no workloads in %s (build them, or pass --workloads DIR)\n", wdir.c_str());
    return 1;
  }
  char tmpl[] = "/tmp/vmha-bench-XXXXXX";
  if (!mkdtemp(tmpl)) {
    std::perror("vmha bench: mkdtemp");
    return 1;
  }
  std::string dir = tmpl;
  std::string gen = wdir + "/gendata 100000 3 > " + dir + "/data.txt";
  if (std::system(gen.c_str()) != 0) {
    std::fprintf(stderr, "vmha bench: %s failed\n", gen.c_str());
    return 1;
  }
  overhead_table(opts, table_workloads(wdir), dir);
  syscall_round_trip(opts, wdir, dir);
  per_operation(opts, "fork and exit of a child, waited for", dir,
                [&](long n) { return std::vector<std::string>{wdir + "/fork_loop", std::to_string(n)}; }, 20, 220);
  per_operation(opts, "fork and exec of /bin/true (dynamically linked), waited for", dir,
                [&](long n) {
                  return std::vector<std::string>{wdir + "/fork_loop", std::to_string(n), "exec", "/bin/true"};
                },
                10, 110);
  per_operation(opts, "thread switch (two threads hand a token over)", dir,
                [&](long n) { return std::vector<std::string>{wdir + "/thread_pingpong", std::to_string(n)}; }, 1000,
                11000);
  first_write_after_harvest(opts, wdir, dir);
  pause_latency(wdir, dir);
  std::string rm = "rm -rf " + dir;
  if (std::system(rm.c_str()) != 0) return 1;
  return 0;
}

}  // namespace vmha
