// Guest threads: a static and a dynamic pthread program (threads taking
// turns through a mutex and a condvar, an atomic counter, TLS, joins; the
// raw futex operations; gettid, tgkill, a signal that only a waiting thread
// can take; sigwait in one thread while another computes) print what they
// print natively, also when the VM is paused every 2 ms (a pause
// is never a spurious EINTR or ETIMEDOUT of a futex wait or a sleep); a VM
// stopped while threads wait on a condvar (one with a timeout), sleep and
// compute is saved (state version 5: threads, and the program's path) and restored into a fresh VM that
// finishes with the native output; a thread blocked reading an empty pipe
// does not hold up one that computes; a state of a newer version is refused.
// Each of these runs with one vCPU (threads take turns) and with three (the
// helper vCPUs run threads at once). With more than one vCPU two threads
// do run at the same time, which one vCPU never does; a thread that faults
// on a helper vCPU ends the process exactly as on vCPU 0.
// tests/vmha/thread_probe.c is the guest.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tests/vmha/vmha_test_util.h"
#include "vmha/state/vm_state.h"
#include "vmha/vmm/elf_image.h"
#include "vmha/vmm/vm.h"

#include <check.h>  // last: it defines a fail() macro
#include "tests/unit/run_suite.h"

using namespace vmha;

namespace {

// The VM's vCPUs in this test (the loop tests: 1, then 3).
int g_vcpus = 1;
constexpr int kVcpuRuns[] = {1, 3};
void set_vcpus(int loop_index) { g_vcpus = kVcpuRuns[loop_index]; }

std::string probe(bool dynamic) {
  return vmha_test::builddir() + (dynamic ? "/tests/vmha/thread_probe_dynamic" : "/tests/vmha/thread_probe");
}

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

// The probe run natively in `dir`, its stdout.
std::string native(bool dynamic, const std::vector<std::string>& args, const std::string& dir) {
  std::vector<std::string> argv = {probe(dynamic)};
  argv.insert(argv.end(), args.begin(), args.end());
  vmha_test::Captured c = vmha_test::run_capture(argv, dir);
  ck_assert_msg(c.exit_code() == 0, "native thread_probe: status %d %s", c.status, c.err.c_str());
  return c.out;
}

// A VM loaded with thread_probe ARGS, its stdout in dir/out.
struct ProbeVm {
  std::string dir = vmha_test::make_temp_dir();
  int out = -1;
  VmOptions opts;
  std::unique_ptr<Vm> vm;

  ProbeVm(bool dynamic, const std::vector<std::string>& args) {
    out = open((dir + "/out").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ck_assert_int_ge(out, 0);
    ElfImage img;
    ck_assert(read_elf_file(probe(dynamic), &img).ok());
    opts.memory_bytes = 256 << 20;
    opts.vcpus = g_vcpus;
    opts.workdir = dir;
    opts.std_fds[1] = out;
    ck_assert(Vm::create(opts, &vm).ok());
    std::vector<std::string> argv = {probe(dynamic)};
    argv.insert(argv.end(), args.begin(), args.end());
    ck_assert(vm->load(img, probe(dynamic), argv, {}).ok());
  }
  ~ProbeVm() {
    vm.reset();
    if (out >= 0) close(out);
  }
  std::string output() const { return vmha_test::slurp(dir + "/out"); }
};

void expect_exit_0(const RunResult& r) {
  ck_assert_msg(r.end == RunResult::End::kExited && r.code == 0, "end %d code %d %s", static_cast<int>(r.end), r.code,
                r.message.c_str());
}

// Runs to the end, pausing and resuming every 2 ms when `paused`.
std::string run_probe(bool dynamic, const std::vector<std::string>& args, bool paused, int* pauses = nullptr) {
  ProbeVm p(dynamic, args);
  std::atomic<bool> done{false};
  RunResult r;
  std::thread runner([&] {
    r = p.vm->run();
    done = true;
  });
  int n = 0;
  while (paused && !done.load()) {
    p.vm->request_pause();
    p.vm->wait_paused();
    p.vm->resume();
    ++n;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  runner.join();
  if (pauses) *pauses = n;
  expect_exit_0(r);
  return p.output();
}

const std::vector<std::string> kRounds = {"rounds", "3", "4", "300"};

START_TEST(static_pthreads_print_the_native_output) {
  set_vcpus(_i);
  std::string dir = vmha_test::make_temp_dir();
  std::string want = native(false, kRounds, dir);
  ck_assert_msg(contains(want, "round 2: turns=1200 total=3000"), "%s", want.c_str());
  std::string got = run_probe(false, kRounds, false);
  ck_assert_msg(got == want, "vmha:\n%s\nnative:\n%s", got.c_str(), want.c_str());
  for (const char* mode : {"misc", "futex", "sigwait"}) {
    std::string want_mode = native(false, {mode}, dir), got_mode = run_probe(false, {mode}, false);
    ck_assert_msg(got_mode == want_mode, "%s: vmha:\n%s\nnative:\n%s", mode, got_mode.c_str(), want_mode.c_str());
  }
  ck_assert_msg(contains(native(false, {"misc"}, dir), "routed=1"), "the probe's signal routing");
}
END_TEST

START_TEST(dynamic_pthreads_print_the_native_output) {
  set_vcpus(_i);
  std::string dir = vmha_test::make_temp_dir();
  std::string want = native(true, kRounds, dir);
  std::string got = run_probe(true, kRounds, false);
  ck_assert_msg(got == want, "vmha:\n%s\nnative:\n%s", got.c_str(), want.c_str());
}
END_TEST

START_TEST(pauses_are_invisible_to_waiting_threads) {
  set_vcpus(_i);
  std::string dir = vmha_test::make_temp_dir();
  std::string want = native(false, kRounds, dir);
  int pauses = 0;
  std::string got = run_probe(false, kRounds, true, &pauses);
  ck_assert_msg(got == want, "vmha (%d pauses):\n%s\nnative:\n%s", pauses, got.c_str(), want.c_str());
  // misc's timed condvar wait must time out once, not be cut by a pause.
  std::string misc_want = native(false, {"misc"}, dir), misc = run_probe(false, {"misc"}, true);
  ck_assert_msg(misc == misc_want, "vmha:\n%s\nnative:\n%s", misc.c_str(), misc_want.c_str());
}
END_TEST

// Waits (without assuming the host's speed) until `path` holds `what`.
void wait_for_text(const std::string& path, const std::string& what) {
  for (int i = 0; i < 60000 && !contains(vmha_test::slurp(path), what); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ck_assert_msg(contains(vmha_test::slurp(path), what), "no \"%s\" in %s", what.c_str(), path.c_str());
}

uint32_t state_version(const std::vector<uint8_t>& state) {
  uint32_t v = 0;
  std::memcpy(&v, state.data() + 8, 4);
  return v;
}

START_TEST(save_with_waiting_threads_restores_and_finishes) {
  set_vcpus(_i);
  for (bool dynamic : {false, true}) {
    std::string ndir = vmha_test::make_temp_dir();
    ck_assert(close(open((ndir + "/release").c_str(), O_WRONLY | O_CREAT, 0644)) == 0);
    std::string want = native(dynamic, {"block"}, ndir);

    ProbeVm p(dynamic, {"block"});
    RunResult r;
    std::thread runner([&] { r = p.vm->run(); });
    // "ready": two threads wait on the condvar, one sleeps, one computes,
    // main is about to wait in pthread_join.
    wait_for_text(p.dir + "/out", "ready");
    p.vm->request_stop();
    runner.join();
    ck_assert_msg(r.end == RunResult::End::kStopped, "end %d %s", static_cast<int>(r.end), r.message.c_str());
    std::vector<uint8_t> state;
    ck_assert(p.vm->save(&state).ok());
    ck_assert_uint_eq(state_version(state), 5);
    p.vm.reset();

    std::unique_ptr<Vm> vm;
    Status s = Vm::restore(p.opts, state, &vm);
    ck_assert_msg(s.ok(), "%s", s.message().c_str());
    // The computing thread goes on until the file exists: it comes after the restore.
    ck_assert(close(open((p.dir + "/release").c_str(), O_WRONLY | O_CREAT, 0644)) == 0);
    RunResult r2 = vm->run();
    expect_exit_0(r2);
    ck_assert_msg(p.output() == want, "%s: vmha:\n%s\nnative:\n%s", dynamic ? "dynamic" : "static",
                  p.output().c_str(), want.c_str());
  }
}
END_TEST

START_TEST(blocking_read_does_not_hold_up_other_threads) {
  set_vcpus(_i);
  // The reader blocks on an empty pipe; the other thread must still compute
  // and print, and only then does the test write the byte.
  ProbeVm p(false, {"pipe"});
  int in[2];
  ck_assert_int_eq(pipe(in), 0);
  p.vm.reset();
  ElfImage img;
  ck_assert(read_elf_file(probe(false), &img).ok());
  p.opts.std_fds[0] = in[0];
  ck_assert(Vm::create(p.opts, &p.vm).ok());
  ck_assert(p.vm->load(img, probe(false), {probe(false), "pipe"}, {}).ok());
  RunResult r;
  std::thread runner([&] { r = p.vm->run(); });
  wait_for_text(p.dir + "/out", "computed");
  ck_assert_int_eq(write(in[1], "z", 1), 1);
  runner.join();
  close(in[0]);
  close(in[1]);
  expect_exit_0(r);
  ck_assert_msg(contains(p.output(), "computed x=905\nread=z\n"), "%s", p.output().c_str());
}
END_TEST

// The probe's counter and main thread run at once only with helper vCPUs;
// with one vCPU no window may ever see it (the test can fail both ways).
START_TEST(helper_vcpus_run_threads_at_once) {
  g_vcpus = 1;
  ck_assert_str_eq(run_probe(false, {"overlap", "20000"}, false).c_str(), "overlap=0\n");
  // Windows until the overlap is seen (a loaded host may take a while).
  g_vcpus = 2;
  ck_assert_str_eq(run_probe(false, {"overlap", "100000000"}, false).c_str(), "overlap=1\n");
}
END_TEST

// A thread faults while main spins: with two vCPUs it faults on the helper,
// goes back before the instruction and faults again on vCPU 0.
START_TEST(fault_on_a_helper_vcpu_ends_the_process_as_on_vcpu_0) {
  std::string message[2];
  for (int v : {1, 2}) {
    g_vcpus = v;
    ProbeVm p(false, {"segv"});
    RunResult r = p.vm->run();
    ck_assert_msg(r.end == RunResult::End::kSignaled && r.code == SIGSEGV, "%d vCPUs: end %d code %d %s", v,
                  static_cast<int>(r.end), r.code, r.message.c_str());
    message[v - 1] = r.message;
  }
  ck_assert_msg(contains(message[1], "page fault at 0x10 (write, not mapped)"), "%s", message[1].c_str());
  ck_assert_str_eq(message[0].c_str(), message[1].c_str());
}
END_TEST

START_TEST(newer_state_version_is_refused) {
  ProbeVm p(false, {"rounds", "1", "2", "1"});
  p.vm->set_syscall_hook([](Vm& vm, uint64_t, uint64_t) {
    return vm.process().threads.several() ? HookAction::kStop : HookAction::kContinue;
  });
  RunResult r = p.vm->run();
  ck_assert_msg(r.end == RunResult::End::kStopped, "end %d %s", static_cast<int>(r.end), r.message.c_str());
  std::vector<uint8_t> state;
  ck_assert(p.vm->save(&state).ok());
  ck_assert_uint_eq(state_version(state), 5);
  std::unique_ptr<Vm> vm;
  ck_assert(Vm::restore(p.opts, state, &vm).ok());
  state[8] = kStateVersion + 1;
  Status s = Vm::restore(p.opts, state, &vm);
  ck_assert_msg(contains(s.message(), "version " + std::to_string(kStateVersion + 1) +
                                          " is not supported (this vmha reads versions 1 to " +
                                          std::to_string(kStateVersion) + ")"),
                "%s", s.message().c_str());
  // A thread section cut short is refused, not half applied.
  state[8] = 5;
  std::vector<uint8_t> cut(state.begin(), state.begin() + static_cast<long>(state.size() / 2));
  ck_assert(!Vm::restore(p.opts, cut, &vm).ok());
}
END_TEST

}  // namespace

int main() {
  vmha_test::require_kvm();
  Suite* s = suite_create("vmha_threads");
  TCase* tc = tcase_create("threads");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, static_pthreads_print_the_native_output, 0, 2);
  tcase_add_loop_test(tc, dynamic_pthreads_print_the_native_output, 0, 2);
  tcase_add_loop_test(tc, pauses_are_invisible_to_waiting_threads, 0, 2);
  tcase_add_loop_test(tc, save_with_waiting_threads_restores_and_finishes, 0, 2);
  tcase_add_loop_test(tc, blocking_read_does_not_hold_up_other_threads, 0, 2);
  tcase_add_test(tc, newer_state_version_is_refused);
  tcase_add_test(tc, helper_vcpus_run_threads_at_once);
  tcase_add_test(tc, fault_on_a_helper_vcpu_ends_the_process_as_on_vcpu_0);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
