#include "vmha/bench/failover_bench.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "vmha/common/run_stats.h"
#include "vmha/engine/backup_service.h"

namespace vmha {

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// fork + exec argv in `dir` (the guest's working directory: a program may
// write files there) with stdout appended to `out` ("" = /dev/null), stderr
// to /dev/null.
pid_t spawn(const std::vector<std::string>& argv, const std::string& out, const std::string& dir) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  if (chdir(dir.c_str()) != 0) _exit(126);
  int null = open("/dev/null", O_RDWR);
  int o = out.empty() ? null : open(out.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  dup2(null, 0);
  dup2(o, 1);
  dup2(null, 2);
  std::vector<char*> a;
  for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  execv(a[0], a.data());
  _exit(127);
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

off_t size_of(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? st.st_size : 0;
}

// Ends `pid` if it is still running after `limit`; returns its wait status.
int wait_for(pid_t pid, std::chrono::milliseconds limit) {
  auto end = Clock::now() + limit;
  int st = 0;
  while (waitpid(pid, &st, WNOHANG) == 0) {
    if (Clock::now() > end) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      return -1;
    }
    std::this_thread::sleep_for(1ms);
  }
  return st;
}

// The primary's --stats-file: the checkpoint of the running program the
// backup last acknowledged (0 before the first); -1 once the program ended.
long long acked_checkpoint(const std::string& path) {
  RunStats s;
  if (!read_run_stats(path, &s).ok()) return 0;  // not written yet
  return s.running ? static_cast<long long>(s.checkpoints) : -1;
}

// The backup's --stats-file once it took over (side=backup, takeover=1).
bool took_over(const std::string& path, RunStats* s) { return read_run_stats(path, s).ok() && s->takeover; }

// A backup and its primary on `program`, both appending the guest's output
// to `out`; each writes its statistics (common/run_stats.h) to stats.SIDE.
struct Pair {
  pid_t backup = -1, primary = -1;
};

bool start_pair(const std::vector<std::string>& program, const std::string& key, const std::string& dir, int epoch_ms,
                const std::string& out, const std::string& log, const std::string& addr_file, const std::string& stats,
                Pair* p) {
  for (const auto& f : {out, log, addr_file, stats + ".primary", stats + ".backup"}) unlink(f.c_str());
  p->backup = spawn({"/proc/self/exe", "backup", "--key", key, "--address-file", addr_file, "--accept-timeout", "20",
                     "--stdout", out, "--log", log, "--stats-file", stats + ".backup"},
                    "", dir);
  std::string addr;
  for (int i = 0; i < 2000 && addr.empty(); ++i) {
    std::ifstream f(addr_file);
    if (!(f >> addr)) std::this_thread::sleep_for(5ms);
  }
  if (addr.empty()) {
    kill(p->backup, SIGKILL);
    waitpid(p->backup, nullptr, 0);
    return false;
  }
  std::vector<std::string> run = {
      "/proc/self/exe",         "run",      "--backup", addr,           "--key", key, "--epoch-ms",
      std::to_string(epoch_ms), "--memory", "256",      "--stats-file", stats + ".primary", "--"};
  run.insert(run.end(), program.begin(), program.end());
  p->primary = spawn(run, out, dir);
  return true;
}

}  // namespace

FailoverBench failover_bench(const std::vector<std::string>& program, const std::string& key, const std::string& dir,
                             int epoch_ms, int kills, KillTrigger trigger) {
  FailoverBench b;
  b.lease_ms = BackupOptions{}.lease_ms;
  std::string native = dir + "/failover.native", out = dir + "/failover.out", log = dir + "/failover.log",
              addr_file = dir + "/failover.addr", stats = dir + "/failover.stats";
  unlink(native.c_str());
  pid_t n = spawn(program, native, dir);
  if (n < 0 || wait_for(n, 60s) != 0) return b.error = program[0] + " does not run natively", b;
  const std::string expected = slurp(native);
  std::mt19937 rng(std::random_device{}());
  // kCheckpoint: kill after checkpoint 1..max_checkpoint, two thirds of
  // those of the running program in a run without a kill (counted, since
  // epochs are wall time and a loaded host makes more of them).
  long long max_checkpoint = 1;
  if (trigger == KillTrigger::kCheckpoint) {
    Pair p;
    if (!start_pair(program, key, dir, epoch_ms, out, log, addr_file, stats, &p))
      return b.error = "vmha backup did not listen", b;
    int pst = wait_for(p.primary, 120s), bst = wait_for(p.backup, 20s);
    if (pst != 0 || bst != 0 || slurp(out) != expected)
      return b.error = "without a kill, the replicated run did not end as the native one", b;
    RunStats ended;
    if (Status s = read_run_stats(stats + ".primary", &ended); !s.ok())
      return b.error = "the primary's --stats-file: " + s.message(), b;
    max_checkpoint = std::max(1LL, (static_cast<long long>(ended.epochs) - 1) * 2 / 3);
  }
  // Late kills (the program had ended) are tried again; a checkpoint
  // trigger misses more often (async sort takes 2 to 40 checkpoints).
  const int max_attempts = (trigger == KillTrigger::kCheckpoint ? 3 : 2) * kills;
  for (int attempt = 0; static_cast<int>(b.samples.size()) < kills && attempt < max_attempts; ++attempt) {
    Pair p;
    if (!start_pair(program, key, dir, epoch_ms, out, log, addr_file, stats, &p))
      return b.error = "vmha backup did not listen", b;
    pid_t primary = p.primary, backup = p.backup;
    bool running = true;
    if (trigger == KillTrigger::kCheckpoint) {
      const long long k = std::uniform_int_distribution<long long>(1, max_checkpoint)(rng);
      long long c = 0;
      while ((c = acked_checkpoint(stats + ".primary")) >= 0 && c < k && (running = waitpid(primary, nullptr, WNOHANG) == 0))
        std::this_thread::sleep_for(1ms);
      running = running && c >= 0;
    } else {
      // Kill once a random share of the lines (1/12 to 2/3) is out.
      off_t kill_at =
          static_cast<off_t>(expected.size() * std::uniform_real_distribution<double>(1.0 / 12, 2.0 / 3)(rng));
      while (size_of(out) < kill_at && (running = waitpid(primary, nullptr, WNOHANG) == 0))
        std::this_thread::sleep_for(1ms);
    }
    if (!running) {  // it ended first: no failover to time
      // fewer checkpoints than counted (async sort takes 2 to 40): a quarter
      // of the range, down to checkpoint 1 (before the first instruction)
      max_checkpoint = std::max(1LL, max_checkpoint / 4);
      wait_for(primary, 20s);
      wait_for(backup, 20s);
      continue;
    }
    kill(primary, SIGKILL);
    auto killed = Clock::now();
    waitpid(primary, nullptr, 0);
    off_t at_kill = size_of(out);
    FailoverSample s;
    bool resumed = false, flowed = false;
    RunStats taken;
    int st = 0;
    while (waitpid(backup, &st, WNOHANG) == 0 && ms(Clock::now() - killed) < 60000) {
      if (!resumed && took_over(stats + ".backup", &taken)) {
        s.takeover_ms = ms(Clock::now() - killed);
        resumed = true;
      }
      if (!flowed && size_of(out) > at_kill) {
        s.output_ms = ms(Clock::now() - killed);
        flowed = true;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    if (wait_for(backup, 1ms) == -1) return b.error = "vmha backup did not finish the program", b;
    if (!resumed) resumed = took_over(stats + ".backup", &taken);
    if (!resumed) continue;  // the primary had finished: nothing was taken over
    s.threads = static_cast<int>(taken.threads);
    s.exact = slurp(out) == expected;
    // kCheckpoint: a takeover of a program that had ended is no failover of a running one
    if (trigger == KillTrigger::kCheckpoint && s.threads == 0 && s.exact) {
      max_checkpoint = std::max(1LL, max_checkpoint / 4);
      continue;
    }
    b.samples.push_back(s);
  }
  for (const auto& f : {native, out, log, addr_file, stats + ".primary", stats + ".backup"}) unlink(f.c_str());
  if (b.samples.empty()) b.error = "no kill hit a running primary";
  return b;
}

}  // namespace vmha
