// Guest signals: handlers run on the guest stack for signals the guest sends
// itself and for host signals sent to vmha; the mask holds them back until
// unblocked; timers (setitimer, alarm, timer_create) deliver after their
// time, with SA_RESTART deciding between a restarted read and EINTR; a VM
// saved with a handler installed and a timer armed delivers it once
// restored; SIGTERM's default action ends vmha as SIGTERM would (128+15).
// tests/vmha/signal_probe.c prints what the guest saw (the same natively).
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tests/vmha/vmha_test_util.h"
#include "vmha/state/vm_state.h"
#include "vmha/sys/signal_kick.h"
#include "vmha/vmm/elf_image.h"
#include "vmha/vmm/vm.h"

#include <check.h>  // last: it defines a fail() macro
#include "tests/unit/run_suite.h"

using namespace vmha;

namespace {

std::string probe() { return vmha_test::builddir() + "/tests/vmha/signal_probe"; }

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// Waits (without assuming the host's speed) until `path` holds `what`.
void wait_for_text(const std::string& path, const std::string& what) {
  for (int i = 0; i < 60000 && !contains(vmha_test::slurp(path), what); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ck_assert_msg(contains(vmha_test::slurp(path), what), "no \"%s\" in %s", what.c_str(), path.c_str());
}

// A VM loaded with signal_probe ARGS, its stdout in dir/out.
struct ProbeVm {
  std::string dir = vmha_test::make_temp_dir();
  int out = -1;
  std::unique_ptr<Vm> vm;
  VmOptions opts;

  explicit ProbeVm(const std::vector<std::string>& args, bool relay = false) {
    out = open((dir + "/out").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ck_assert_int_ge(out, 0);
    ElfImage img;
    ck_assert(read_elf_file(probe(), &img).ok());
    opts.memory_bytes = 64 << 20;
    opts.workdir = dir;
    opts.std_fds[1] = out;
    opts.relay_host_signals = relay;
    ck_assert(Vm::create(opts, &vm).ok());
    std::vector<std::string> argv = {probe()};
    argv.insert(argv.end(), args.begin(), args.end());
    ck_assert(vm->load(img, probe(), argv, {}).ok());
  }
  ~ProbeVm() {
    vm.reset();
    if (out >= 0) close(out);
  }
  std::string output() const { return vmha_test::slurp(dir + "/out"); }
};

// Runs signal_probe ARGS to its end; returns its output, asserting exit 0.
std::string run_probe(const std::vector<std::string>& args) {
  ProbeVm p(args);
  RunResult r = p.vm->run();
  ck_assert_msg(r.end == RunResult::End::kExited && r.code == 0, "signal_probe %s: end %d code %d %s", args[0].c_str(),
                static_cast<int>(r.end), r.code, r.message.c_str());
  return p.output();
}

// The same with the VM paused and resumed every 2 ms until it ends (as
// epochs do): pauses must not show as signals, EINTR or early timers.
std::string run_probe_paused(const std::vector<std::string>& args, int* pauses) {
  ProbeVm p(args);
  std::atomic<bool> done{false};
  RunResult r;
  std::thread runner([&] {
    r = p.vm->run();
    done = true;
  });
  *pauses = 0;
  while (!done.load()) {
    p.vm->request_pause();
    p.vm->wait_paused();
    p.vm->resume();
    ++*pauses;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  runner.join();
  ck_assert_msg(r.end == RunResult::End::kExited && r.code == 0, "signal_probe %s: end %d code %d %s", args[0].c_str(),
                static_cast<int>(r.end), r.code, r.message.c_str());
  return p.output();
}

long field(const std::string& line, const std::string& key) {
  size_t at = line.find(key + "=");
  ck_assert_msg(at != std::string::npos, "no %s= in: %s", key.c_str(), line.c_str());
  return std::strtol(line.c_str() + at + key.size() + 1, nullptr, 10);
}

START_TEST(handler_runs_for_a_signal_to_itself) {
  std::string line = run_probe({"self"});
  // Linux runs the handler before kill() returns; SI_USER (0) with its pid;
  // raise() is tgkill (SI_TKILL, -6); clean FPU in the handler, the
  // caller's rounding mode back after it.
  ck_assert_msg(contains(line, "kill=1 code=0 pid_ok=1 clean_fpu=1 round_back=1 raise=2 raise_code=-6 "), "%s",
                line.c_str());
  ck_assert_msg(contains(line, "onstack=1 reset=1 defer=1/2 nodefer=2/2"), "%s", line.c_str());
  ck_assert_msg(field(line, "other") == EPERM && field(line, "none") == ESRCH, "%s", line.c_str());
}
END_TEST

START_TEST(blocked_signal_runs_when_unblocked) {
  std::string line = run_probe({"mask"});
  ck_assert_msg(contains(line,
                         "blocked=0 pending=1 unblocked=1 suspend_eintr=1 suspended=2 mask_back=1 "
                         "timedwait=10 again=1"),
                "%s", line.c_str());
}
END_TEST

START_TEST(host_sigusr1_runs_the_guest_handler) {
  ProbeVm p({"wait", "10"}, true);
  RunResult r;
  std::thread runner([&] { r = p.vm->run(); });
  wait_for_text(p.dir + "/out", "ready");
  kill(getpid(), SIGUSR1);  // as scancel --signal=USR1 would reach vmha
  runner.join();
  ck_assert_msg(r.end == RunResult::End::kExited && r.code == 0, "%d %d %s", static_cast<int>(r.end), r.code,
                r.message.c_str());
  // pause() returned EINTR, or the signal came before it was called (eintr=0).
  ck_assert_msg(contains(p.output(), "got signal 10 eintr=") && contains(p.output(), " code=0"), "%s",
                p.output().c_str());
}
END_TEST

// vmha run -- signal_probe ARGS in the background; SIG once it is ready.
// `blocked`: vmha starts with SIG and the pause signal blocked, as a parent's
// mask passes through exec.
vmha_test::Captured vmha_signalled(const std::vector<std::string>& args, int sig, bool blocked = false) {
  std::string dir = vmha_test::make_temp_dir();
  std::string out = dir + "/out", err = dir + "/err";
  char vmha[PATH_MAX], prog[PATH_MAX];  // absolute: the child changes directory
  ck_assert(realpath(vmha_test::vmha_bin().c_str(), vmha) && realpath(probe().c_str(), prog));
  std::vector<std::string> argv = {vmha, "run", "--", prog};
  argv.insert(argv.end(), args.begin(), args.end());
  pid_t pid = fork();
  if (pid == 0) {
    int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), e = open(err.c_str(), O_WRONLY | O_CREAT, 0644);
    dup2(o, 1);
    dup2(e, 2);
    if (chdir(dir.c_str()) != 0) _exit(126);
    if (blocked) {
      sigset_t set;
      sigemptyset(&set);
      sigaddset(&set, sig);
      sigaddset(&set, SIGRTMIN + 5);
      sigprocmask(SIG_BLOCK, &set, nullptr);
    }
    std::vector<char*> a;
    for (auto& s : argv) a.push_back(s.data());
    a.push_back(nullptr);
    execv(a[0], a.data());
    _exit(127);
  }
  wait_for_text(out, "ready");
  kill(pid, sig);
  vmha_test::Captured c;
  waitpid(pid, &c.status, 0);
  c.out = vmha_test::slurp(out);
  c.err = vmha_test::slurp(err);
  return c;
}

START_TEST(host_sigterm_runs_the_handler_once) {
  for (const char* how : {"spin", "sleep"}) {  // in guest code, and in a blocking call
    vmha_test::Captured c = vmha_signalled({"term", how}, SIGTERM);
    ck_assert_msg(c.exit_code() == 0, "term %s: status %d, stderr: %s", how, c.status, c.err.c_str());
    ck_assert_msg(count(c.out, "final line\n") == 1, "term %s: %s", how, c.out.c_str());
  }
}
END_TEST

// A mask vmha inherits (slurmstepd's, a shell's) must not hold back scancel:
// this hung before vmha unblocked the signals it relays.
START_TEST(sigterm_reaches_the_guest_when_the_parent_blocked_it) {
  vmha_test::Captured c = vmha_signalled({"term", "spin"}, SIGTERM, true);
  ck_assert_msg(c.exit_code() == 0, "status %d, stderr: %s", c.status, c.err.c_str());
  ck_assert_msg(count(c.out, "final line\n") == 1, "%s", c.out.c_str());
}
END_TEST

// A host signal must cut the vCPU thread's next blocking host call (a guest
// sleep) even when it lands before that call starts. Run in a fresh process,
// whose first timer, the kick, is timer 0: the relay once took that for "no
// vCPU" and never kicked, so a SIGTERM between two calls waited out the sleep.
// Also when the VMM re-aims the timer after the signal came (a schedule with
// nothing due disarms it).
int sleep_cut_after_host_signal(bool reaim_after) {
  relay_host_signals();
  volatile uint8_t immediate_exit = 0;
  VcpuKick kick;
  if (!kick.start(&immediate_exit).ok()) return 2;
  kick.aim(-1);
  raise(SIGTERM);  // the handler runs now, before the sleep below
  if (reaim_after) kick.aim(-1);
  timespec t{20, 0};
  int r = clock_nanosleep(CLOCK_MONOTONIC, 0, &t, nullptr);
  if (r != EINTR) return 1;
  return take_host_signals() == sigbit(SIGTERM) ? 0 : 3;
}

START_TEST(host_signal_before_a_blocking_call_still_cuts_it) {
  for (bool reaim_after : {false, true}) {
    pid_t pid = fork();
    if (pid == 0) _exit(sleep_cut_after_host_signal(reaim_after));
    int status = 0;
    waitpid(pid, &status, 0);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "re-aimed after: %d, status %d (exit 1: the 20 s sleep ran out uncut)", reaim_after, status);
  }
}
END_TEST

START_TEST(sigterm_default_action_ends_vmha_with_it) {
  vmha_test::Captured c = vmha_signalled({"idle"}, SIGTERM);
  // vmha ends by the guest's signal: a shell sees 128+15.
  ck_assert_msg(c.term_signal() == SIGTERM, "status %d, stderr: %s", c.status, c.err.c_str());
  ck_assert_msg(contains(c.err, "guest killed by SIGTERM"), "%s", c.err.c_str());
}
END_TEST

START_TEST(timers_deliver_after_their_time) {
  for (const char* how : {"restart", "eintr"}) {
    std::string line = run_probe({"alarm", how});
    if (std::string(how) == "restart")  // the read goes on and gets the handler's byte
      ck_assert_msg(field(line, "read") == 1 && field(line, "errno") == 0, "%s", line.c_str());
    else
      ck_assert_msg(field(line, "read") == -1 && field(line, "errno") == EINTR, "%s", line.c_str());
    ck_assert_msg(field(line, "read_ms") >= 200, "setitimer fired early: %s", line.c_str());
    ck_assert_msg(field(line, "pause_eintr") == 1 && field(line, "pause_ms") >= 1000, "alarm(1): %s", line.c_str());
    // A sleep is never restarted: EINTR and the time it had left: less than
    // the 5 s asked, and no less than 5 s minus the time the call took.
    ck_assert_msg(field(line, "sleep_eintr") == 1 && field(line, "sleep_ms") >= 100, "%s", line.c_str());
    ck_assert_msg(field(line, "rem_ms") < 5000 && field(line, "rem_ms") >= 5000 - field(line, "slept_ms") - 1, "%s",
                  line.c_str());
  }
  std::string line = run_probe({"timer"});
  ck_assert_msg(contains(line, "hits=3 code=-2 value=42 ") && contains(line, "interval_ns=50000000"), "%s",
                line.c_str());
  ck_assert_msg(field(line, "ms") >= 150, "%s", line.c_str());
}
END_TEST

START_TEST(pauses_do_not_change_signal_behaviour) {
  int pauses = 0;
  std::string line = run_probe_paused({"alarm", "eintr"}, &pauses);
  ck_assert_msg(pauses > 50, "only %d pauses", pauses);
  ck_assert_msg(field(line, "read") == -1 && field(line, "errno") == EINTR && field(line, "read_ms") >= 200, "%s",
                line.c_str());
  ck_assert_msg(field(line, "pause_eintr") == 1 && field(line, "pause_ms") >= 1000 && field(line, "alarm_hits") == 2,
                "%s", line.c_str());
  ck_assert_msg(field(line, "sleep_eintr") == 1 && field(line, "sleep_ms") >= 100 && field(line, "rem_ms") > 0, "%s",
                line.c_str());
  line = run_probe_paused({"alarm", "restart"}, &pauses);
  ck_assert_msg(field(line, "read") == 1 && field(line, "read_ms") >= 200, "%s", line.c_str());
  line = run_probe_paused({"mask"}, &pauses);
  ck_assert_msg(contains(line, "blocked=0 pending=1 unblocked=1 suspend_eintr=1 suspended=2 mask_back=1 "), "%s",
                line.c_str());
}
END_TEST

START_TEST(restored_vm_delivers_the_armed_timer) {
  std::vector<uint8_t> state;
  std::string dir;
  {
    ProbeVm p({"armed"});
    dir = p.dir;
    p.vm->set_syscall_hook([](Vm&, uint64_t nr, uint64_t) {
      return nr == SYS_write ? HookAction::kStop : HookAction::kContinue;  // "armed" is out
    });
    RunResult r = p.vm->run();
    ck_assert_msg(r.end == RunResult::End::kStopped, "%s", r.message.c_str());
    ck_assert(contains(p.output(), "armed"));
    ck_assert(p.vm->save(&state).ok());
  }
  uint32_t version = 0;
  std::memcpy(&version, state.data() + 8, 4);
  ck_assert_msg(version == 5, "a state of a loaded program (its path, version 5) is version %u", version);
  int out = open((dir + "/out").c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  VmOptions o;
  o.workdir = dir;
  o.std_fds[1] = out;
  std::unique_ptr<Vm> vm;
  // The signal section checks its bounds: cut anywhere in it, the state is
  // refused with the offset and what was expected there.
  const std::string magic = "VMHASIGS";
  auto at = std::search(state.begin(), state.end(), magic.begin(), magic.end());
  ck_assert(at != state.end());
  for (size_t cut = at - state.begin(), end = cut + 200; cut < end; cut += 3) {
    std::vector<uint8_t> t(state.begin(), state.begin() + static_cast<long>(cut));
    Status s = Vm::restore(o, t, &vm);
    ck_assert_msg(!s.ok() && contains(s.message(), "at byte") && contains(s.message(), "expected"), "cut at %zu: %s",
                  cut, s.message().c_str());
  }
  Status s = Vm::restore(o, state, &vm);
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  RunResult r = vm->run();
  vm.reset();
  close(out);
  ck_assert_msg(r.end == RunResult::End::kExited && r.code == 0, "%d %d %s", static_cast<int>(r.end), r.code,
                r.message.c_str());
  std::string text = vmha_test::slurp(dir + "/out");
  ck_assert_msg(contains(text, "fired value=7 code=-2"), "%s", text.c_str());
}
END_TEST

START_TEST(pending_signal_survives_save_and_restore) {
  // Stopped right after kill() to itself with SIGUSR1 blocked: the pending
  // signal, the mask and the handler travel; unblocking runs it.
  std::vector<uint8_t> state;
  std::string dir;
  {
    ProbeVm p({"mask"});
    dir = p.dir;
    p.vm->set_syscall_hook(
        [](Vm&, uint64_t nr, uint64_t) { return nr == SYS_kill ? HookAction::kStop : HookAction::kContinue; });
    RunResult r = p.vm->run();
    ck_assert_msg(r.end == RunResult::End::kStopped, "%s", r.message.c_str());
    ck_assert(p.vm->save(&state).ok());
  }
  int out = open((dir + "/out").c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  VmOptions o;
  o.workdir = dir;
  o.std_fds[1] = out;
  std::unique_ptr<Vm> vm;
  ck_assert(Vm::restore(o, state, &vm).ok());
  RunResult r = vm->run();
  vm.reset();
  close(out);
  ck_assert(r.end == RunResult::End::kExited && r.code == 0);
  std::string text = vmha_test::slurp(dir + "/out");
  ck_assert_msg(contains(text, "blocked=0 pending=1 unblocked=1 "), "%s", text.c_str());
}
END_TEST

}  // namespace

int main() {
  vmha_test::require_kvm();
  Suite* s = suite_create("vmha_signals");
  TCase* tc = tcase_create("signals");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, handler_runs_for_a_signal_to_itself);
  tcase_add_test(tc, blocked_signal_runs_when_unblocked);
  tcase_add_test(tc, host_sigusr1_runs_the_guest_handler);
  tcase_add_test(tc, host_sigterm_runs_the_handler_once);
  tcase_add_test(tc, sigterm_default_action_ends_vmha_with_it);
  tcase_add_test(tc, host_signal_before_a_blocking_call_still_cuts_it);
  tcase_add_test(tc, sigterm_reaches_the_guest_when_the_parent_blocked_it);
  tcase_add_test(tc, timers_deliver_after_their_time);
  tcase_add_test(tc, pauses_do_not_change_signal_behaviour);
  tcase_add_test(tc, restored_vm_delivers_the_armed_timer);
  tcase_add_test(tc, pending_signal_survives_save_and_restore);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
