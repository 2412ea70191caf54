// Guest process trees: a static and a dynamic program that forks, waits
// (wait4 and waitid status, WNOHANG, ECHILD), takes SIGCHLD in a handler,
// kills a child, sets a process group, vforks and execs itself, execs a
// missing file (ENOENT) and a dynamic /usr/bin/echo, and joins two children
// by a pipe prints what it prints natively, also when the VM is paused every
// 2 ms; a VM stopped while three processes run a pipeline is saved (state
// version 5) and restored into a fresh VM that finishes with the native
// output.
// tests/vmha/fork_probe.c is the guest.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tests/vmha/vm_checkpoint_util.h"
#include "tests/vmha/vmha_test_util.h"
#include "vmha/state/vm_state.h"
#include "vmha/vmm/elf_image.h"
#include "vmha/vmm/vm.h"

#include <check.h>  // last: it defines a fail() macro
#include "tests/unit/run_suite.h"

using namespace vmha;

namespace {

std::string probe_dir() { return vmha_test::builddir() + "/tests/vmha"; }
std::string probe(bool dynamic) { return probe_dir() + (dynamic ? "/fork_probe_dynamic" : "/fork_probe"); }

std::string native(bool dynamic, const std::vector<std::string>& args, const std::string& dir) {
  std::vector<std::string> argv = {probe(dynamic)};
  argv.insert(argv.end(), args.begin(), args.end());
  vmha_test::Captured c = vmha_test::run_capture(argv, dir);
  ck_assert_msg(c.exit_code() == 0, "native fork_probe: status %d %s", c.status, c.err.c_str());
  return c.out;
}

// Runs fork_probe ARGS in a VM to the end (pausing every 2 ms when
// `paused`); its stdout.
std::string run_probe(bool dynamic, const std::vector<std::string>& args, bool paused, RunResult* result = nullptr) {
  const std::string dir = vmha_test::make_temp_dir();
  int out = open((dir + "/out").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ck_assert_int_ge(out, 0);
  ElfImage img;
  ck_assert(read_elf_file(probe(dynamic), &img).ok());
  VmOptions opts;
  opts.memory_bytes = 256 << 20;
  opts.workdir = dir;
  opts.std_fds[1] = out;
  opts.log_unsupported = false;
  opts.read_only.push_back(probe_dir());  // it execs itself
  std::unique_ptr<Vm> vm;
  ck_assert(Vm::create(opts, &vm).ok());
  std::vector<std::string> argv = {probe(dynamic)};
  argv.insert(argv.end(), args.begin(), args.end());
  ck_assert(vm->load(img, probe(dynamic), argv, {}).ok());
  std::atomic<bool> done{false};
  RunResult r;
  std::thread runner([&] {
    r = vm->run();
    done = true;
  });
  while (paused && !done.load()) {
    vm->request_pause();
    vm->wait_paused();
    vm->resume();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  runner.join();
  vm.reset();
  close(out);
  if (result)
    *result = r;
  else
    ck_assert_msg(r.end == RunResult::End::kExited && r.code == 0, "end %d code %d %s", static_cast<int>(r.end),
                  r.code, r.message.c_str());
  return vmha_test::slurp(dir + "/out");
}

START_TEST(static_tree_prints_the_native_output) {
  const std::string dir = vmha_test::make_temp_dir();
  const std::string want = native(false, {}, dir);
  ck_assert_msg(want.find("vfork+exec: code=42") != std::string::npos, "%s", want.c_str());
  const std::string got = run_probe(false, {}, false);
  ck_assert_msg(got == want, "vmha:\n%s\nnative:\n%s", got.c_str(), want.c_str());
}
END_TEST

START_TEST(dynamic_tree_prints_the_native_output) {
  const std::string dir = vmha_test::make_temp_dir();
  const std::string want = native(true, {}, dir);
  const std::string got = run_probe(true, {}, false);
  ck_assert_msg(got == want, "vmha:\n%s\nnative:\n%s", got.c_str(), want.c_str());
}
END_TEST

START_TEST(pauses_are_invisible_to_the_tree) {
  const std::string dir = vmha_test::make_temp_dir();
  const std::string want = native(false, {}, dir);
  const std::string got = run_probe(false, {}, true);
  ck_assert_msg(got == want, "vmha:\n%s\nnative:\n%s", got.c_str(), want.c_str());
  const std::string pipe_want = native(false, {"pipeline", "200000"}, dir);
  const std::string pipe_got = run_probe(false, {"pipeline", "200000"}, true);
  ck_assert_msg(pipe_got == pipe_want, "vmha:\n%s\nnative:\n%s", pipe_got.c_str(), pipe_want.c_str());
}
END_TEST

uint32_t state_version(const std::vector<uint8_t>& state) {
  uint32_t v = 0;
  std::memcpy(&v, state.data() + 8, 4);
  return v;
}

START_TEST(save_of_a_tree_restores_and_finishes) {
  const std::string dir = vmha_test::make_temp_dir();
  const std::vector<std::string> args = {"pipeline", "100000"};
  const std::string want = native(false, args, dir);
  int out = open((dir + "/out").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ck_assert_int_ge(out, 0);
  ElfImage img;
  ck_assert(read_elf_file(probe(false), &img).ok());
  VmOptions opts;
  opts.memory_bytes = 256 << 20;
  opts.workdir = dir;
  opts.std_fds[1] = out;
  opts.read_only.push_back(probe_dir());
  std::unique_ptr<Vm> vm;
  ck_assert(Vm::create(opts, &vm).ok());
  std::vector<std::string> argv = {probe(false)};
  argv.insert(argv.end(), args.begin(), args.end());
  ck_assert(vm->load(img, probe(false), argv, {}).ok());
  // Stop once both children run and some lines went through the pipe.
  uint64_t both = 0;
  vm->set_syscall_hook([&both](Vm& v, uint64_t, uint64_t count) {
    if (v.processes().all().size() < 3) return HookAction::kContinue;
    if (!both) both = count;
    return count > both + 40 ? HookAction::kStop : HookAction::kContinue;
  });
  RunResult r = vm->run();
  ck_assert_msg(r.end == RunResult::End::kStopped, "end %d %s", static_cast<int>(r.end), r.message.c_str());
  std::vector<uint8_t> state;
  Status s = vm->save(&state);
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  ck_assert_uint_eq(state_version(state), 5);
  vm.reset();
  std::unique_ptr<Vm> back;
  s = Vm::restore(opts, state, &back);
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  ck_assert_uint_ge(back->processes().all().size(), 3);
  r = back->run();
  ck_assert_msg(r.end == RunResult::End::kExited && r.code == 0, "end %d code %d %s", static_cast<int>(r.end), r.code,
                r.message.c_str());
  back.reset();
  close(out);
  const std::string got = vmha_test::slurp(dir + "/out");
  ck_assert_msg(got == want, "restored:\n%s\nnative:\n%s", got.c_str(), want.c_str());
  // A cut tree section is refused, not half applied.
  std::vector<uint8_t> cut(state.begin(), state.begin() + static_cast<long>(state.size() / 3));
  ck_assert(!Vm::restore(opts, cut, &back).ok());
}
END_TEST

// Runs fork_probe MODE in a VM that stops at the first getppid() (the
// child's), is saved, and restored into a fresh VM that finishes; its
// output, which must be the native one.
void restored_equals_native(const std::string& mode, const std::string& want) {
  const std::string natively = native(false, {mode}, vmha_test::make_temp_dir());
  ck_assert_str_eq(natively.c_str(), want.c_str());
  const std::string got = vmha_test::output_across_checkpoint({probe(false), mode}, SYS_getppid);
  ck_assert_msg(got == want, "%s restored: %s native: %s", mode.c_str(), got.c_str(), want.c_str());
}

// A file that parent and child share (opened before the fork, and dup'ed)
// is one open file description again after a restore: the child's and the
// parent's later writes follow each other (lines 1..4), not overwrite.
START_TEST(shared_file_offset_survives_a_restore) {
  restored_equals_native("shared", "shared offset: 1 2 3 4 (child 0)\n");
}
END_TEST

// MAP_SHARED anonymous memory is one memory for parent and child, also
// across a restore; a region the parent unmapped stays the child's.
START_TEST(shared_memory_is_shared_with_the_child) {
  const std::string want =
      "shared memory: 1000 increments seen, unmapped region kept for the child: yes (child 0)\n";
  const std::string straight = run_probe(false, {"sharedmem"}, false), paused = run_probe(false, {"sharedmem"}, true);
  ck_assert_str_eq(straight.c_str(), want.c_str());
  ck_assert_str_eq(paused.c_str(), want.c_str());
  restored_equals_native("sharedmem", want);
}
END_TEST

// A read-only page a fork shares gets a frame of its own in the process
// that makes it writable: each side sees only its own write (straight,
// paused, and restored in the child before its mprotect).
START_TEST(read_only_page_splits_when_made_writable) {
  const std::string want = "read-only page after fork: parent saw a, then wrote p; child kept its own (child 0)\n";
  const std::string straight = run_probe(false, {"readonly"}, false), paused = run_probe(false, {"readonly"}, true);
  ck_assert_str_eq(straight.c_str(), want.c_str());
  ck_assert_str_eq(paused.c_str(), want.c_str());
  restored_equals_native("readonly", want);
}
END_TEST

}  // namespace

int main() {
  vmha_test::require_kvm();
  Suite* s = suite_create("vmha_fork");
  TCase* tc = tcase_create("fork");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, static_tree_prints_the_native_output);
  tcase_add_test(tc, dynamic_tree_prints_the_native_output);
  tcase_add_test(tc, pauses_are_invisible_to_the_tree);
  tcase_add_test(tc, save_of_a_tree_restores_and_finishes);
  tcase_add_test(tc, shared_file_offset_survives_a_restore);
  tcase_add_test(tc, shared_memory_is_shared_with_the_child);
  tcase_add_test(tc, read_only_page_splits_when_made_writable);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
