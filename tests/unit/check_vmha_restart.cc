// System calls cut short by an epoch pause restart as Linux restarts them
// after a signal: a sleep interrupted when the VMM signals the vCPU thread
// goes on to its deadline instead of returning EINTR (under replication,
// 40 sleeps of 250 ms once finished in 2 s, each with EINTR); so do polls
// (with what is left of their timeout) and blocking reads of a pipe.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/vmha/vmha_test_util.h"
#include "vmha/vmm/elf_image.h"
#include "vmha/vmm/vm.h"

#include <check.h>  // last: it defines a fail() macro
#include "tests/unit/run_suite.h"

using namespace vmha;

namespace {

std::string probe() { return vmha_test::builddir() + "/tests/vmha/sleep_probe"; }

// Runs sleep_probe N MS until|io in a VM while another thread pauses and
// resumes it until it ends; returns its output line and the number of
// pauses (and in *sleeps_cut those that cut a sleep). With io, stdin is a
// pipe that gets one byte once the probe's polls are over and 20 more pauses
// have hit its blocking read.
std::string run_paused(int n, int ms, bool io, int* pauses, int* sleeps_cut = nullptr) {
  std::string dir = vmha_test::make_temp_dir();
  int out = open((dir + "/out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int in[2];
  ck_assert_int_eq(pipe(in), 0);
  ElfImage img;
  ck_assert(read_elf_file(probe(), &img).ok());
  VmOptions o;
  o.memory_bytes = 64 << 20;
  o.workdir = dir;
  o.std_fds[0] = in[0];
  o.std_fds[1] = out;
  std::unique_ptr<Vm> vm;
  ck_assert(Vm::create(o, &vm).ok());
  std::vector<std::string> argv = {probe(), std::to_string(n), std::to_string(ms), io ? "io" : "until"};
  ck_assert(vm->load(img, probe(), argv, {}).ok());
  std::atomic<int> polls{0};
  vm->set_syscall_hook([&](Vm&, uint64_t nr, uint64_t) {
    if (nr == SYS_poll) ++polls;
    return HookAction::kContinue;
  });
  std::atomic<bool> done{false};
  RunResult result;
  std::thread runner([&] {
    result = vm->run();
    done = true;
  });
  *pauses = 0;
  int after_polls = 0, kind = 0, cuts = 0;
  bool written = false;
  // Pause about every 2 ms: nearly every sleep, poll or read is cut many times.
  // Sleeps: a pause that parks the guest inside one leaves the deadline it
  // goes on to (call_deadline); once more than n have cut sleeps of a kind,
  // stop.K ends that kind (sleep_probe ... until), however slow the host.
  while (!done.load()) {
    vm->request_pause();
    vm->wait_paused();
    if (!io && kind < 3 && !done.load() && vm->process().call_deadline && ++cuts > n) {
      const std::string stop = dir + "/stop." + std::to_string(kind++);
      const int fd = open(stop.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
      ck_assert_int_ge(fd, 0);
      close(fd);
      cuts = 0;
      if (sleeps_cut) *sleeps_cut += n + 1;
    }
    vm->resume();
    ++*pauses;
    if (io && !written && polls.load() >= n && ++after_polls >= 20) {
      ck_assert_int_eq(write(in[1], "x", 1), 1);
      written = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  runner.join();
  close(out);
  close(in[0]);
  close(in[1]);
  ck_assert_msg(result.end == RunResult::End::kExited && result.code == 0, "%s", result.message.c_str());
  return vmha_test::slurp(dir + "/out");
}

START_TEST(sleeps_restart_after_pauses) {
  const int n = 3, ms = 100;
  int pauses = 0, cut = 0, sleeps = 0;
  std::string line = run_paused(n, ms, false, &pauses, &cut);
  int e0 = -1, e1 = -1, e2 = -1;
  long elapsed = 0;
  ck_assert_msg(std::sscanf(line.c_str(),
                            "nanosleep_eintr=%d clock_nanosleep_eintr=%d abstime_eintr=%d elapsed_ms=%ld sleeps=%d", &e0,
                            &e1, &e2, &elapsed, &sleeps) == 5,
                "probe printed: %s", line.c_str());
  // Each kind of sleep went on until more than n pauses had cut it.
  ck_assert_msg(cut == 3 * (n + 1), "%d pauses cut sleeps (of %d pauses)", cut, pauses);
  ck_assert_msg(e0 == 0 && e1 == 0 && e2 == 0, "EINTR returned to the guest: %s (%d pauses)", line.c_str(), pauses);
  // Whatever the host's speed, the sleeps cannot take less than asked.
  ck_assert_msg(sleeps >= 3 * n && elapsed >= sleeps * ms, "sleeps ended early: %s", line.c_str());
}
END_TEST

START_TEST(poll_and_read_restart_after_pauses) {
  const int n = 3, ms = 100;
  int pauses = 0;
  std::string line = run_paused(n, ms, true, &pauses);
  int poll_eintr = -1, ready = -1, read_eintr = -1;
  long poll_ms = 0, got = 0;
  ck_assert_msg(std::sscanf(line.c_str(), "poll_eintr=%d poll_ready=%d poll_ms=%ld read=%ld read_eintr=%d", &poll_eintr,
                            &ready, &poll_ms, &got, &read_eintr) == 5,
                "probe printed: %s", line.c_str());
  ck_assert_msg(poll_eintr == 0 && read_eintr == 0, "EINTR returned to the guest: %s (%d pauses)", line.c_str(),
                pauses);
  ck_assert_msg(ready == 0 && got == 1, "polls saw data or the read failed: %s", line.c_str());
  ck_assert_msg(poll_ms >= 1L * n * ms, "polls timed out early: %s", line.c_str());
}
END_TEST

// An exception thrown on the vCPU thread (here by a hook, standing in for a
// VMM bug) fails the run instead of terminating the process, and a thread
// waiting for a pause is released, not left waiting for ever.
START_TEST(exception_on_vcpu_thread_fails_the_run) {
  std::string dir = vmha_test::make_temp_dir();
  int out = open((dir + "/out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ElfImage img;
  ck_assert(read_elf_file(probe(), &img).ok());
  VmOptions o;
  o.memory_bytes = 64 << 20;
  o.workdir = dir;
  o.std_fds[1] = out;
  std::unique_ptr<Vm> vm;
  ck_assert(Vm::create(o, &vm).ok());
  ck_assert(vm->load(img, probe(), {probe(), "3", "100"}, {}).ok());
  std::atomic<bool> thrown{false};
  vm->set_syscall_hook([&](Vm&, uint64_t, uint64_t count) -> HookAction {
    if (count < 3) return HookAction::kContinue;
    thrown = true;
    throw std::runtime_error("hook failed");
  });
  RunResult result;
  std::thread runner([&] { result = vm->run(); });
  while (!thrown.load()) std::this_thread::yield();
  vm->request_pause();
  vm->wait_paused();
  vm->resume();
  runner.join();
  close(out);
  ck_assert_msg(result.end == RunResult::End::kFailed, "run ended %d: %s", static_cast<int>(result.end),
                result.message.c_str());
  ck_assert_msg(result.message.find("hook failed") != std::string::npos, "message: %s", result.message.c_str());
}
END_TEST

}  // namespace

int main() {
  vmha_test::require_kvm();
  Suite* s = suite_create("vmha_restart");
  TCase* tc = tcase_create("sleep");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, sleeps_restart_after_pauses);
  tcase_add_test(tc, poll_and_read_restart_after_pauses);
  tcase_add_test(tc, exception_on_vcpu_thread_fails_the_run);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
