// The VM state format: a saved VM restores into a fresh one that saves back
// to the same bytes; damaged, truncated or future-version states are refused
// with the byte offset and what was expected.
#include <fcntl.h>
#include <sys/syscall.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cstring>
#include <thread>
#include <string>
#include <vector>

#include "tests/vmha/vmha_test_util.h"
#include "vmha/state/byte_stream.h"
#include "vmha/state/vm_state.h"
#include "vmha/vmm/vm.h"

#include <check.h>
#include "tests/unit/run_suite.h"

using namespace vmha;

namespace {

bool contains(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

START_TEST(reader_reports_offset_and_expectation) {
  std::vector<uint8_t> bytes = {1, 2, 3};
  ByteReader r(bytes);
  (void)r.u64("frame count");
  ck_assert(!r.ok());
  ck_assert_msg(contains(r.error(), "at byte 0") && contains(r.error(), "frame count"), "%s", r.error().c_str());
}
END_TEST

START_TEST(wrong_magic_and_version_are_refused) {
  std::vector<uint8_t> junk(64, 0xab);
  std::unique_ptr<Vm> vm;
  Status s = Vm::restore(VmOptions{}, junk, &vm);
  ck_assert(contains(s.message(), "not a vmha VM state"));
  std::vector<uint8_t> future;
  ByteWriter w(future);
  w.bytes(kStateMagic, 8);
  w.u32(kStateVersion + 1);
  s = Vm::restore(VmOptions{}, future, &vm);
  ck_assert_msg(contains(s.message(), "version 7 is not supported") && contains(s.message(), "versions 1 to 6"), "%s",
                s.message().c_str());
}
END_TEST

std::vector<uint8_t> saved_state(const std::string& dir) {
  std::string prog = vmha_test::workload("hashtable");
  ElfImage img;
  ck_assert(read_elf_file(prog, &img).ok());
  VmOptions o;
  o.memory_bytes = 256 << 20;
  o.workdir = dir;
  std::unique_ptr<Vm> vm;
  Status s = Vm::create(o, &vm);
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  ck_assert(vm->load(img, prog, {prog, "4096", "1000"}, {}).ok());
  vm->set_syscall_hook([](Vm&, uint64_t, uint64_t n) { return n == 6 ? HookAction::kStop : HookAction::kContinue; });
  ck_assert(vm->run().end == RunResult::End::kStopped);
  std::vector<uint8_t> bytes;
  s = vm->save(&bytes);
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  return bytes;
}

START_TEST(round_trip_is_identical) {
  SKIP_UNLESS(vmha_test::kvm_for_test(), "no /dev/kvm on this host");
  std::string dir = vmha_test::make_temp_dir();
  std::vector<uint8_t> a = saved_state(dir);
  VmOptions o;
  o.workdir = dir;
  std::unique_ptr<Vm> vm;
  Status s = Vm::restore(o, a, &vm);
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  std::vector<uint8_t> b;
  ck_assert(vm->save(&b).ok());
  ck_assert_int_eq(a.size(), b.size());
  ck_assert(a == b);
}
END_TEST

START_TEST(truncated_state_is_refused) {
  SKIP_UNLESS(vmha_test::kvm_for_test(), "no /dev/kvm on this host");
  std::string dir = vmha_test::make_temp_dir();
  std::vector<uint8_t> a = saved_state(dir);
  VmOptions o;
  o.workdir = dir;
  std::unique_ptr<Vm> vm;
  for (size_t cut : {size_t(20), size_t(500), a.size() / 2, a.size() - 1}) {
    std::vector<uint8_t> t(a.begin(), a.begin() + cut);
    Status s = Vm::restore(o, t, &vm);
    ck_assert_msg(!s.ok(), "truncated at %zu accepted", cut);
    ck_assert_msg(contains(s.message(), "at byte") && contains(s.message(), "expected"), "%s", s.message().c_str());
  }
  std::vector<uint8_t> extra = a;
  extra.push_back(0);
  Status s = Vm::restore(o, extra, &vm);
  ck_assert_msg(contains(s.message(), "nothing after the end marker"), "%s", s.message().c_str());
}
END_TEST

// The format is fixed: tests/unit/data/vm_state_v1.bin was written by the
// version-1 save() before it became per-section codecs (hashtable stopped at
// its sixth system call, std streams on /dev/null, 256 MiB; only its first
// two frames kept, so the file stays small; byte 1376, in the XSAVE bytes
// left to software that save() now zeroes, zeroed too). It restores, and
// saves back to the same bytes, section for section, on any host.
START_TEST(version_1_state_restores_and_saves_unchanged) {
  SKIP_UNLESS(vmha_test::kvm_for_test(), "no /dev/kvm on this host");
  std::string fixture = vmha_test::slurp(vmha_test::srcdir() + "/tests/unit/data/vm_state_v1.bin");
  ck_assert_msg(fixture.size() > 1000, "tests/unit/data/vm_state_v1.bin missing or short");
  std::vector<uint8_t> v1(fixture.begin(), fixture.end());
  std::string dir = vmha_test::make_temp_dir();
  int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  VmOptions o;
  o.workdir = dir;
  o.std_fds[0] = o.std_fds[1] = o.std_fds[2] = null_fd;
  std::unique_ptr<Vm> vm;
  Status s = Vm::restore(o, v1, &vm);
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  std::vector<uint8_t> again;
  s = vm->save(&again);
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  size_t first_diff = 0;
  while (first_diff < std::min(v1.size(), again.size()) && v1[first_diff] == again[first_diff]) ++first_diff;
  ck_assert_msg(v1 == again, "saved %zu bytes, the fixture has %zu; first difference at byte %zu", again.size(),
                v1.size(), first_diff);
  vm.reset();
  close(null_fd);
}
END_TEST

// Every section checks its own bounds: the version-1 state cut anywhere, in
// any section, is refused with the offset and what was expected there.
START_TEST(version_1_state_cut_in_any_section_is_refused) {
  SKIP_UNLESS(vmha_test::kvm_for_test(), "no /dev/kvm on this host");
  std::string fixture = vmha_test::slurp(vmha_test::srcdir() + "/tests/unit/data/vm_state_v1.bin");
  std::vector<uint8_t> v1(fixture.begin(), fixture.end());
  ck_assert(v1.size() > 1000);
  std::string dir = vmha_test::make_temp_dir();
  int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  VmOptions o;
  o.workdir = dir;
  o.std_fds[0] = o.std_fds[1] = o.std_fds[2] = null_fd;
  for (size_t cut = 12; cut < v1.size(); cut += 61) {  // from after the version
    std::vector<uint8_t> t(v1.begin(), v1.begin() + cut);
    std::unique_ptr<Vm> vm;
    Status s = Vm::restore(o, t, &vm);
    ck_assert_msg(!s.ok(), "cut at %zu accepted", cut);
    ck_assert_msg(contains(s.message(), "at byte") && contains(s.message(), "expected"), "cut at %zu: %s", cut,
                  s.message().c_str());
  }
  close(null_fd);
}
END_TEST

START_TEST(pause_save_resume_from_another_thread) {
  // The replication seam: another thread pauses the running vCPU, saves the
  // VM, resumes it; the guest finishes as if nothing happened, and the saved
  // bytes restore into a VM that finishes the same way.
  SKIP_UNLESS(vmha_test::kvm_for_test(), "no /dev/kvm on this host");
  std::string dir = vmha_test::make_temp_dir();
  std::vector<std::string> argv = {vmha_test::workload("stream"), "500000", "40"};
  vmha_test::Captured native = vmha_test::run_capture(argv, dir);
  int out = open((dir + "/vm.out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int out2 = open((dir + "/restored.out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ElfImage img;
  ck_assert(read_elf_file(argv[0], &img).ok());
  VmOptions o;
  o.memory_bytes = 256 << 20;
  o.workdir = dir;
  o.std_fds[1] = out;
  std::unique_ptr<Vm> vm;
  ck_assert(Vm::create(o, &vm).ok());
  ck_assert(vm->load(img, argv[0], argv, {}).ok());
  // Pause mid-run at a point the guest reached, not after a guessed time (a
  // fast host finished the whole program within 60 ms): the vCPU waits in
  // its system-call hook, after stream's three arrays are mapped and before
  // its loops, until this thread has asked for the pause.
  std::mutex m;
  std::condition_variable cv;
  bool allocated = false, asked = false;
  int mmaps = 0;
  vm->set_syscall_hook([&](Vm&, uint64_t nr, uint64_t) {
    if (nr == SYS_mmap && ++mmaps == 3) {
      std::unique_lock<std::mutex> lock(m);
      allocated = true;
      cv.notify_all();
      cv.wait(lock, [&] { return asked; });
    }
    return HookAction::kContinue;
  });
  RunResult result;
  std::thread runner([&] { result = vm->run(); });
  {
    std::unique_lock<std::mutex> lock(m);
    ck_assert_msg(cv.wait_for(lock, std::chrono::seconds(60), [&] { return allocated; }),
                  "stream made %d mmap calls, expected 3", mmaps);
  }
  vm->request_pause();
  {
    std::lock_guard<std::mutex> lock(m);
    asked = true;
    cv.notify_all();
  }
  vm->wait_paused();
  std::vector<uint8_t> bytes;
  Status s = vm->save(&bytes);
  vm->resume();
  runner.join();
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  ck_assert(result.end == RunResult::End::kExited && result.code == 0);
  std::string paused_out = vmha_test::slurp(dir + "/vm.out");
  ck_assert_str_eq(paused_out.c_str(), native.out.c_str());
  o.std_fds[1] = out2;
  std::unique_ptr<Vm> restored;
  s = Vm::restore(o, bytes, &restored);
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  result = restored->run();
  ck_assert(result.end == RunResult::End::kExited && result.code == 0);
  std::string restored_out = vmha_test::slurp(dir + "/restored.out");
  ck_assert_str_eq(restored_out.c_str(), native.out.c_str());
  close(out);
  close(out2);
}
END_TEST

}  // namespace

// A descriptor under a read-only path (fd kind 5) is reopened through the
// restoring VMM's policy: with the same read-only paths the guest goes on
// reading it; without them the restore is refused.
START_TEST(read_only_descriptor_is_reopened_through_the_policy) {
  SKIP_UNLESS(vmha_test::kvm_for_test(), "no /dev/kvm on this host");
  std::string dir = vmha_test::make_temp_dir();
  std::string prog = vmha_test::builddir() + "/tests/vmha/ro_probe";
  ElfImage img;
  ck_assert(read_elf_file(prog, &img).ok());
  // Its output in a file of its own, before and after the restore (the
  // state holds the stream's offset).
  std::string out = dir + "/out.txt";
  int out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ck_assert_int_ge(out_fd, 0);
  VmOptions o;
  o.memory_bytes = 256 << 20;
  o.workdir = dir;
  o.std_fds[1] = out_fd;
  std::unique_ptr<Vm> vm;
  Status s = Vm::create(o, &vm);
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  ck_assert(vm->load(img, prog, {prog, "read:/etc/passwd"}, {}).ok());
  auto holds_read_only = [](Vm& v) {
    for (const FdEntry& e : v.process().fds.entries())
      if (e.host_fd >= 0 && e.kind == FdKind::kReadOnly && e.path == "/etc/passwd") return true;
    return false;
  };
  vm->set_syscall_hook(
      [&](Vm& v, uint64_t, uint64_t) { return holds_read_only(v) ? HookAction::kStop : HookAction::kContinue; });
  ck_assert(vm->run().end == RunResult::End::kStopped);
  std::vector<uint8_t> a;
  s = vm->save(&a);
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  vm.reset();

  VmOptions none = o;
  none.read_only = {};
  s = Vm::restore(none, a, &vm);
  ck_assert_msg(!s.ok() && contains(s.message(), "/etc/passwd") && contains(s.message(), "not a read-only path"), "%s",
                s.message().c_str());

  s = Vm::restore(o, a, &vm);
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  ck_assert(holds_read_only(*vm));
  std::vector<uint8_t> b;
  ck_assert(vm->save(&b).ok());
  ck_assert(a == b);
  RunResult r = vm->run();
  close(out_fd);
  ck_assert_msg(r.end == RunResult::End::kExited && r.code == 0, "end %d code %d: %s", static_cast<int>(r.end), r.code,
                r.message.c_str());
  ck_assert_msg(vmha_test::slurp(out) == "read /etc/passwd: ok\n", "%s", vmha_test::slurp(out).c_str());
}
END_TEST

// A file the guest unlinked while open (sort's spill files): a checkpoint
// from before the unlink or between the unlink and the close restores into a
// fresh VM in the working directory where the first one went on to the end
// (the file unlinked, a new one of that name made and removed) and the
// program finishes as it would have: the descriptor reaches the held file
// (vmha/sys/removed_files.h).
START_TEST(unlinked_open_file_restores_where_the_run_went_on) {
  SKIP_UNLESS(vmha_test::kvm_for_test(), "no /dev/kvm on this host");
  std::string dir = vmha_test::make_temp_dir();
  std::string prog = vmha_test::builddir() + "/tests/vmha/unlink_probe";
  ElfImage img;
  ck_assert(read_elf_file(prog, &img).ok());
  VmOptions o;
  o.memory_bytes = 64 << 20;
  o.workdir = dir;
  // Runs vm (holding removed files, as under a backup) until its next
  // getppid (stop) or to the end.
  auto run = [&](Vm& vm, bool stop) {
    vm.processes().removed().keep(true, vm.process().root);
    vm.set_syscall_hook([stop](Vm&, uint64_t nr, uint64_t) {
      return stop && nr == SYS_getppid ? HookAction::kStop : HookAction::kContinue;
    });
    return vm.run();
  };
  // The restored guest's output goes to `out` (kept open while it runs).
  int out_fd = -1;
  auto restore = [&](const std::vector<uint8_t>& state, const std::string& out, std::unique_ptr<Vm>* vm) {
    if (out_fd >= 0) close(out_fd);
    VmOptions r = o;
    r.std_fds[1] = out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    Status s = Vm::restore(r, state, vm);
    ck_assert_msg(s.ok(), "%s", s.message().c_str());
  };
  const std::string expected =
      "stat after unlink: No such file or directory\nnew file of that name: ok\n"
      "listing: 1 spill.tmp, 0 hidden entries\nfstat size: 8\ncontents: one\ntwo\nremoved again: ok\n";

  // The primary: a checkpoint before the unlink (a), one after it (b), on to the end.
  std::vector<uint8_t> a, b;
  std::unique_ptr<Vm> vm;
  ck_assert(Vm::create(o, &vm).ok());
  ck_assert(vm->load(img, prog, {prog}, {}).ok());
  ck_assert(run(*vm, true).end == RunResult::End::kStopped);
  ck_assert(vm->save(&a).ok());
  vm.reset();
  restore(a, dir + "/primary.out", &vm);
  ck_assert(run(*vm, true).end == RunResult::End::kStopped);
  ck_assert(vm->save(&b).ok());
  vm.reset();
  restore(b, dir + "/primary.out", &vm);
  RunResult r = run(*vm, false);
  vm.reset();
  ck_assert_msg(r.end == RunResult::End::kExited && r.code == 0, "%s", r.message.c_str());
  std::string got = vmha_test::slurp(dir + "/primary.out");
  ck_assert_str_eq(got.c_str(), expected.c_str());

  // Backups that take over from either checkpoint, after the primary went on.
  for (const auto* state : {&b, &a}) {
    std::string out = dir + (state == &a ? "/from_a.out" : "/from_b.out");
    restore(*state, out, &vm);
    r = run(*vm, false);
    vm.reset();
    ck_assert_msg(r.end == RunResult::End::kExited && r.code == 0, "%s: %s", out.c_str(), r.message.c_str());
    got = vmha_test::slurp(out);
    ck_assert_str_eq(got.c_str(), expected.c_str());
  }
  close(out_fd);
}
END_TEST

int main() {
  Suite* s = suite_create("vmha_state");
  TCase* tc = tcase_create("format");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, reader_reports_offset_and_expectation);
  tcase_add_test(tc, wrong_magic_and_version_are_refused);
  tcase_add_test(tc, round_trip_is_identical);
  tcase_add_test(tc, truncated_state_is_refused);
  tcase_add_test(tc, read_only_descriptor_is_reopened_through_the_policy);
  tcase_add_test(tc, version_1_state_restores_and_saves_unchanged);
  tcase_add_test(tc, version_1_state_cut_in_any_section_is_refused);
  tcase_add_test(tc, pause_save_resume_from_another_thread);
  tcase_add_test(tc, unlinked_open_file_restores_where_the_run_went_on);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
