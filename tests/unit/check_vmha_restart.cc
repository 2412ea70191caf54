// System calls cut short by an epoch pause restart as Linux restarts them
// after a signal: a sleep interrupted when the VMM signals the vCPU thread
// goes on to its deadline instead of returning EINTR (under replication,
// 40 sleeps of 250 ms once finished in 2 s, each with EINTR).
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "tests/vmha/vmha_test_util.h"
#include "vmha/vmm/elf_image.h"
#include "vmha/vmm/vm.h"

#include <check.h>  // last: it defines a fail() macro

using namespace vmha;

namespace {

std::string probe() { return vmha_test::builddir() + "/tests/vmha/sleep_probe"; }

// Runs sleep_probe N MS in a VM while another thread pauses and resumes it
// until it ends; returns its output line and the number of pauses.
std::string run_paused(int n, int ms, int* pauses) {
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
  ck_assert(vm->load(img, probe(), {probe(), std::to_string(n), std::to_string(ms)}, {}).ok());
  std::atomic<bool> done{false};
  RunResult result;
  std::thread runner([&] {
    result = vm->run();
    done = true;
  });
  *pauses = 0;
  // Pause about every 2 ms of sleep: nearly every sleep is cut many times.
  while (!done.load()) {
    vm->request_pause();
    vm->wait_paused();
    vm->resume();
    ++*pauses;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  runner.join();
  close(out);
  ck_assert_msg(result.end == RunResult::End::kExited && result.code == 0, "%s", result.message.c_str());
  return vmha_test::slurp(dir + "/out");
}

START_TEST(sleeps_restart_after_pauses) {
  const int n = 3, ms = 100;
  int pauses = 0;
  std::string line = run_paused(n, ms, &pauses);
  int e0 = -1, e1 = -1, e2 = -1;
  long elapsed = 0;
  ck_assert_msg(std::sscanf(line.c_str(), "nanosleep_eintr=%d clock_nanosleep_eintr=%d abstime_eintr=%d elapsed_ms=%ld",
                            &e0, &e1, &e2, &elapsed) == 4,
                "probe printed: %s", line.c_str());
  ck_assert_msg(pauses >= 3 * n, "only %d pauses during the sleeps", pauses);
  ck_assert_msg(e0 == 0 && e1 == 0 && e2 == 0, "EINTR returned to the guest: %s (%d pauses)", line.c_str(), pauses);
  // Whatever the host's speed, the sleeps cannot take less than asked.
  ck_assert_msg(elapsed >= 3L * n * ms, "sleeps ended early: %s", line.c_str());
}
END_TEST

}  // namespace

int main() {
  vmha_test::require_kvm();
  Suite* s = suite_create("vmha_restart");
  TCase* tc = tcase_create("sleep");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, sleeps_restart_after_pauses);
  suite_add_tcase(s, tc);
  SRunner* sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
