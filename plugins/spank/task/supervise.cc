#include "plugins/spank/task/supervise.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "plugins/spank/lib/ha_accounting.h"
#include "plugins/spank/task/backup_step.h"
#include "plugins/spank/task/batch_script.h"
#include "plugins/spank/task/output_relay.h"
#include "plugins/spank/task/spawn.h"
#include "vmha/common/key_value.h"
#include "vmha/common/run_stats.h"

namespace vmha_task {

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Signals. Slurm signals every process of the step (scancel, time limit,
// --signal: slurmstepd through proctrack), so the primary vmha gets its own
// copy and passes it to the program; forwarding that one too would deliver
// it twice. Only a signal sent to vmha-task alone (another sender than
// slurmstepd, our parent) is forwarded, once per delivery. SIGTERM, SIGINT,
// SIGHUP and SIGQUIT end the step; the others (SIGUSR1, SIGUSR2, SIGALRM)
// are the program's business and end nothing by themselves.
constexpr int kCaught[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM};
bool ends_step(int sig) { return sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT; }

std::atomic<int> g_received[NSIG];    // deliveries per signal, from anyone
std::atomic<int> g_to_forward[NSIG];  // of those, sent to vmha-task alone
std::atomic<int> g_sender[NSIG];      // the last sender's pid (si_pid), its si_code
std::atomic<int> g_sender_code[NSIG];
volatile std::sig_atomic_t g_ending = 0;  // the last step-ending signal received
pid_t g_stepd = 0;                        // our parent, slurmstepd
static_assert(std::atomic<int>::is_always_lock_free, "used in a signal handler");

void on_signal(int sig, siginfo_t* si, void*) {
  const bool step_wide = si && si->si_code == SI_USER && si->si_pid == g_stepd;
  g_sender[sig].store(si ? si->si_pid : 0, std::memory_order_relaxed);
  g_sender_code[sig].store(si ? si->si_code : 0, std::memory_order_relaxed);
  if (!step_wide) g_to_forward[sig].fetch_add(1, std::memory_order_relaxed);
  g_received[sig].fetch_add(1, std::memory_order_relaxed);
  if (ends_step(sig)) g_ending = sig;
}

void catch_signals() {
  g_stepd = getppid();
  struct sigaction sa = {};
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int sig : kCaught) sigaction(sig, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

// Passes the signals sent to vmha-task alone on to the primary, each once.
// Every signal received is noted in DIR/signals, with whether it was passed
// on: a program whose handler ran twice must be explainable afterwards.
void forward_signals(const TaskEnv& t, pid_t primary) {
  static int noted[NSIG];
  for (int sig : kCaught) {
    int received = g_received[sig].load(), forwarded = 0;
    for (int n = g_to_forward[sig].exchange(0); n > 0; --n, ++forwarded) kill(primary, sig);
    if (received == noted[sig] && forwarded == 0) continue;
    if (std::FILE* f = std::fopen(t.file("signals").c_str(), "a")) {
      std::fprintf(f, "SIG%s: %d received (the last from pid %d, si_code %d; slurmstepd is %d), %d passed on to the primary %d\n",
                   sigabbrev_np(sig), received - noted[sig], g_sender[sig].load(), g_sender_code[sig].load(),
                   static_cast<int>(g_stepd), forwarded, static_cast<int>(primary));
      std::fclose(f);
    }
    noted[sig] = received;
  }
}

int fail(const std::string& what) {
  std::fprintf(stderr, "vmha-task: %s\n", what.c_str());
  return 125;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The last n lines of text (all of it when shorter), ending in a newline.
std::string last_lines(const std::string& text, int n) {
  if (text.empty()) return "(nothing)\n";
  size_t at = text.size() - (text.back() == '\n' ? 1 : 0);
  while (n-- > 0 && at != std::string::npos && at > 0) at = text.rfind('\n', at - 1);
  std::string tail = (at == std::string::npos || at == 0) ? text : text.substr(at + 1);
  if (tail.back() != '\n') tail += '\n';
  return tail;
}

bool write_key(const std::string& path) {
  unsigned char key[32];
  int r = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  bool ok = r >= 0 && read(r, key, sizeof key) == static_cast<ssize_t>(sizeof key);
  if (r >= 0) close(r);
  int w = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  ok = ok && w >= 0 && write(w, key, sizeof key) == static_cast<ssize_t>(sizeof key);
  if (w >= 0) close(w);
  return ok;
}

void touch(const std::string& path) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
  if (fd >= 0) close(fd);
}

// Waits for `pid` (WNOHANG); true once it ended, with *status.
bool reaped(pid_t pid, int* status) {
  if (pid <= 0) return false;
  pid_t r = waitpid(pid, status, WNOHANG);
  return r == pid;
}

// A vmha's --stats-file (vmha/common/run_stats.h); empty statistics when it
// wrote none (killed before its first checkpoint, or a backup that did not
// take over). A malformed file is said on the task's stderr and ignored.
vmha::RunStats run_stats(const TaskEnv& t, const char* name) {
  vmha::RunStats s;
  if (vmha::Status st = vmha::read_run_stats(t.file(name), &s); !st.ok()) {
    if (!vmha::missing(st)) std::fprintf(stderr, "vmha-task: ignoring %s: %s\n", name, st.message().c_str());
    return vmha::RunStats();
  }
  return s;
}

// The task's result for the job's accounting: the primary's statistics, and
// a failover when the backup's own record says it took over.
void write_result(const TaskEnv& t, const std::string& backup_node, int exit_code, const std::string& cause) {
  const vmha::RunStats primary = run_stats(t, "primary.stats"), backup = run_stats(t, "backup.stats");
  vmha_spank::TaskResult r;
  r.takeover_cause = cause;
  r.node = t.node;
  r.backup_node = backup_node;
  r.exit_code = exit_code;
  r.epochs = primary.epochs;
  r.pause_ms_mean = primary.pause_ms_mean;
  r.pause_count = primary.pause_count;
  r.unprotected = primary.unprotected ? 1 : 0;
  if (backup.side == vmha::RunStats::Side::kBackup && backup.takeover) {
    r.failovers = 1;
    if (r.epochs == 0) r.epochs = backup.checkpoint;  // the primary was killed before its totals
  }
  if (vmha::Status s = vmha::write_file_atomically(t.file("result"), vmha_spank::format_result(r)); !s.ok())
    std::fprintf(stderr, "vmha-task: cannot write the task's result: %s\n", s.message().c_str());
}

// Ends by `sig` as the program did, for srun and sacct to see. Without a
// core: vmha-task's would be of no use (the program ran in the VM), and
// filling the job's directory with one per task is worse.
void die_by(int sig) {
  rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  std::signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
  raise(sig);
}

[[noreturn]] void end_like(int status) {
  if (WIFSIGNALED(status)) die_by(WTERMSIG(status));
  std::exit(WIFEXITED(status) ? WEXITSTATUS(status) : 125);
}

// The step directory (created, or a requeued job's own), the key and the
// job's output files.
bool prepare_step_dir(const TaskEnv& t, std::string* error) {
  if (mkdir(t.dir.c_str(), 0700) != 0 && errno != EEXIST) {
    *error = "cannot create " + t.dir + ": " + std::strerror(errno);
    return false;
  }
  // An existing step directory (a requeued job) must be our own real
  // directory: the key and the job's output are written into it.
  struct stat st;
  if (lstat(t.dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
      (st.st_mode & (S_IWGRP | S_IWOTH))) {
    *error = t.dir + " exists but is not a directory of uid " + std::to_string(getuid()) +
             " that only it can write; refusing to use it";
    return false;
  }
  if (!write_key(t.file("key"))) {
    *error = "cannot write the key " + t.file("key");
    return false;
  }
  touch(t.file("out"));
  touch(t.file("err"));
  return true;
}

// `vmha run` replicating to the backup at `address`; -1 (and *error) if it
// could not be started.
pid_t spawn_primary(const TaskEnv& t, const std::string& address, std::string* error) {
  std::vector<std::string> argv = {t.settings.vmha, "run",
                                   "--backup",      address,
                                   "--key",         t.file("key"),
                                   "--mode",        t.settings.mode,
                                   "--epoch-ms",    std::to_string(t.settings.epoch_ms),
                                   "--lease-ms",    std::to_string(t.settings.lease_ms),
                                   "--on-backup-loss", t.settings.on_loss,
                                   "--memory",      std::to_string(t.settings.memory_mib),
                                   "--workdir",     t.cwd,
                                   "--log",         t.file("primary.log"),
                                   "--stats-file",  t.file("primary.stats")};
  std::vector<std::string> ro = t.read_only_options();
  argv.insert(argv.end(), ro.begin(), ro.end());
  argv.insert(argv.end(), {"--", t.guest_program()});
  argv.insert(argv.end(), t.args.begin(), t.args.end());
  std::vector<std::string> add = {"UCX_LOG_FILE=" + t.file("ucx-primary.log")};
  if (!t.settings.transports.empty()) add.push_back("UCX_TLS=" + t.settings.transports);
  if (!t.tmpdir.empty()) add.push_back("TMPDIR=" + t.tmpdir);  // the guest's (batch_script.h)
  SpawnFiles files;
  files.out = t.file("out");
  files.err = t.file("err");
  return spawn(argv, child_environment({}, add), files, error);
}

// How the primary and the backup step ended.
struct Ending {
  int primary_status = 0, backup_status = 0;
  bool failover = false;   // the primary was killed: the backup resumed
  bool cancelled = false;  // a signal ended the step (SIGTERM, SIGINT, SIGHUP, SIGQUIT)
  std::string takeover_cause;  // with failover: how the primary ended, for slurmd's log
};

// Whether the primary ended by the signal that killed its program: vmha
// then dies by the same signal, after writing guest_signal=N into its stats
// file. The program's end, whoever sent the signal (the step's scancel, the
// program itself): nothing for the backup to take over, and no waiting to
// see whether the signal came to the whole step.
bool program_killed(const vmha::RunStats& primary, int status) {
  return WIFSIGNALED(status) && primary.side == vmha::RunStats::Side::kPrimary && !primary.running &&
         primary.guest_signal == WTERMSIG(status);
}

// Whether the primary lost its backup and stopped the program (vmha(1)
// --on-backup-loss stop; its stats file says stopped=1): the backup, if it
// lives, resumes it from its last checkpoint.
bool stopped_for_backup(const vmha::RunStats& primary, int status) {
  return WIFEXITED(status) && WEXITSTATUS(status) == 125 && primary.side == vmha::RunStats::Side::kPrimary &&
         primary.stopped;
}

// Whether the primary ended by a signal that was meant for the step (we got
// it too), not by one sent to it alone (kill -9: a failover); for the signals
// vmha does not pass on to the program (SIGQUIT). The signal reaches us and
// the primary at about the same time: give it a moment.
bool killed_by_step_signal(int status) {
  if (!WIFSIGNALED(status)) return false;
  const int sig = WTERMSIG(status);
  if (sig <= 0 || sig >= NSIG) return false;
  for (int i = 0; i < 10 && g_received[sig].load() == 0; ++i) std::this_thread::sleep_for(20ms);
  return g_received[sig].load() > 0;
}

// Relays the released output and waits for both sides to end, passing on
// the signals only vmha-task got, ending the backup step when a signal ends
// the step and telling the backup when the primary is gone.
Ending watch(const TaskEnv& t, pid_t primary, const BackupStep& backup) {
  OutputRelay relay(t.file("out"), t.file("err"));
  Ending e;
  bool primary_done = false, backup_done = false;
  Clock::time_point primary_end{};
  // Once the primary has ended without a failover, everything it released is
  // in the files; what the backup step writes later is not the program's
  // (e.g. slurmstepd's "STEP ... CANCELLED" when it is ended), so stop there.
  bool relaying = true;
  bool backup_told = false;  // to end (SIGTERM, once)
  auto end_backup = [&] {
    if (!backup_done && !backup_told) kill(backup.srun, SIGTERM);
    backup_told = true;
  };
  while (!(primary_done && backup_done)) {
    if (relaying) relay.pump();
    if (!primary_done) forward_signals(t, primary);
    if (g_ending && !e.cancelled) {
      e.cancelled = true;
      end_backup();
    }
    if (!primary_done && reaped(primary, &e.primary_status)) {
      primary_done = true;
      primary_end = Clock::now();
      const vmha::RunStats stats = run_stats(t, "primary.stats");
      // Exited (the program's status, or 125 when vmha itself failed, e.g. a
      // refused executable): nothing to take over. Killed by a signal of the
      // step's (the program's default action): the program ended, the backup
      // goes too. Killed otherwise: the backup resumes.
      if (stopped_for_backup(stats, e.primary_status) && !e.cancelled && !g_ending) {
        e.failover = true;
        e.takeover_cause = "the primary vmha on " + t.node + " lost its backup and stopped the program";
        touch(t.file("primary.gone"));  // the backup's fencing command waits for this
      } else if (!WIFEXITED(e.primary_status) && !e.cancelled) {
        if (program_killed(stats, e.primary_status) || killed_by_step_signal(e.primary_status)) {
          end_backup();
        } else if (!g_ending) {
          e.failover = true;
          e.takeover_cause = "the primary vmha on " + t.node + " was killed by signal " +
                             std::to_string(WTERMSIG(e.primary_status)) + " (" + strsignal(WTERMSIG(e.primary_status)) +
                             "), which the step did not get";
          touch(t.file("primary.gone"));  // the backup's fencing command waits for this
        }
      }
      if (!e.failover) {
        relay.pump();
        relaying = false;
      }
    }
    if (!backup_done && reaped(backup.srun, &e.backup_status)) backup_done = true;
    // A primary that finished told its backup so (Bye); do not wait for long.
    if (primary_done && !e.failover && !backup_done &&
        Clock::now() - primary_end > std::chrono::milliseconds(2000 + 4 * t.settings.lease_ms)) {
      kill(backup.srun, SIGTERM);
      primary_end = Clock::now();
    }
    std::this_thread::sleep_for(10ms);
  }
  if (relaying) relay.pump();
  return e;
}

// The task's wait status: the primary's, or the backup's when it finished
// the program after a failover. Says on stderr why when vmha failed.
int task_status(const TaskEnv& t, const Ending& e) {
  int status = e.primary_status;
  if (WIFEXITED(e.primary_status) && WEXITSTATUS(e.primary_status) == 125) {
    // vmha's own diagnostics went to primary.log: the user must see why.
    std::fprintf(stderr, "vmha-task: vmha run failed:\n%s", read_file(t.file("primary.log")).c_str());
  }
  if (e.failover) {
    bool same_signal = WIFEXITED(e.backup_status) && WIFSIGNALED(e.primary_status) &&
                       WEXITSTATUS(e.backup_status) == 128 + WTERMSIG(e.primary_status);
    if (WIFEXITED(e.backup_status) && WEXITSTATUS(e.backup_status) < 125) {
      status = e.backup_status;  // the backup finished the program
    } else if (!same_signal) {   // same_signal: the program itself died by it
      // The job's epilog removes the task directory: the backup's own words
      // go to the task's stderr, where the user (and a test) still has them.
      std::fprintf(stderr,
                   "vmha-task: the primary vmha ended (%s) and the backup could not finish the program; "
                   "the backup said:\n%s",
                   WIFSIGNALED(e.primary_status) ? strsignal(WTERMSIG(e.primary_status)) : "status 125",
                   last_lines(read_file(t.file("backup.log")), 20).c_str());
    }
  }
  return status;
}

}  // namespace

int supervise(const TaskEnv& task, const std::string& self) {
  catch_signals();
  std::string error;
  if (!prepare_step_dir(task, &error)) return fail(error);
  TaskEnv t = task;
  if (t.batch && !prepare_batch_task(&t, &error)) return fail(error);

  BackupStep backup;
  if (!start_backup_step(t, self, &backup, &error) || !wait_backup_address(t, &backup, 60000, &error)) {
    if (backup.srun > 0) kill(backup.srun, SIGTERM);
    remove_batch_tmpdir(t);
    return fail(error);
  }
  pid_t primary = spawn_primary(t, backup.address, &error);
  if (primary < 0) {
    kill(backup.srun, SIGTERM);
    remove_batch_tmpdir(t);
    return fail(error);
  }

  const Ending e = watch(t, primary, backup);
  remove_batch_tmpdir(t);
  const int status = task_status(t, e);
  if (e.cancelled) {
    const int sig = g_ending;
    write_result(t, backup.node, 128 + sig, e.takeover_cause);
    die_by(sig);
  }
  write_result(t, backup.node, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), e.takeover_cause);
  end_like(status);
}

}  // namespace vmha_task
