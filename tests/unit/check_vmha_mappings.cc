// Mapping changes reach KVM: a guest that moves (mremap), unmaps and remaps
// and write-protects its memory (tests/vmha/remap_probe.c) sees each address
// reach the right frame, both on the VM's own memory and on caller memory
// (the replication transport's region, where freed frames are zeroed by the
// VMM rather than by MADV_DONTNEED). KVM here shadows the guest page tables
// and must be made to forget translations the VMM removed. Memory calls at
// the edges of lengths and of the address space fail cleanly, and --memory
// is checked against its range.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/vmha/vmha_test_util.h"
#include "vmha/vmm/vm.h"

#include <check.h>
#include "tests/unit/run_suite.h"

using namespace vmha;

namespace {

constexpr uint64_t kMemory = 256ull << 20;

enum class Memory { kOwn, kCallerShared, kCallerPrivate };
const char* memory_name(Memory m) {
  return m == Memory::kOwn            ? "own memory"
         : m == Memory::kCallerShared ? "caller shared memory"
                                      : "caller private memory";
}

RunResult run_probe(Memory m, const std::vector<std::string>& args) {
  std::string prog = vmha_test::builddir() + "/tests/vmha/remap_probe";
  ElfImage img;
  Status s = read_elf_file(prog, &img);
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  VmOptions o;
  o.memory_bytes = kMemory;
  void* base = nullptr;
  if (m != Memory::kOwn) {
    int share = m == Memory::kCallerShared ? MAP_SHARED : MAP_PRIVATE;
    base = mmap(nullptr, kMemory, PROT_READ | PROT_WRITE, share | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ck_assert(base != MAP_FAILED);
    o.memory_base = static_cast<uint8_t*>(base);
  }
  RunResult r;
  {
    std::unique_ptr<Vm> vm;
    s = Vm::create(o, &vm);
    ck_assert_msg(s.ok(), "%s", s.message().c_str());
    std::vector<std::string> argv = {prog};
    argv.insert(argv.end(), args.begin(), args.end());
    s = vm->load(img, prog, argv, {});
    ck_assert_msg(s.ok(), "%s", s.message().c_str());
    r = vm->run();
  }
  if (base) munmap(base, kMemory);
  return r;
}

START_TEST(moved_and_reused_frames_reach_the_right_address) {
  Memory m = static_cast<Memory>(_i);
  RunResult r = run_probe(m, {});
  ck_assert_msg(r.end == RunResult::End::kExited && r.code == 0,
                "remap_probe on %s: end %d code %d (%s); codes: 2 moved frames changed, 3 new mapping at the "
                "old address lost its data, 4 it read old data, 5 it wrote into another mapping",
                memory_name(m), static_cast<int>(r.end), r.code, r.message.c_str());
}
END_TEST

START_TEST(write_protected_page_faults) {
  Memory m = static_cast<Memory>(_i);
  RunResult r = run_probe(m, {"ro"});
  ck_assert_msg(r.end == RunResult::End::kSignaled && r.code == SIGSEGV,
                "write to a page made read-only on %s: end %d code %d (%s), expected SIGSEGV", memory_name(m),
                static_cast<int>(r.end), r.code, r.message.c_str());
}
END_TEST

// Memory calls at the edges (tests/vmha/mem_edge_probe.c): brk(-1) used to
// unmap the whole guest (page round-up wrapped to 0), MAP_FIXED at the top
// page wrapped and succeeded, and mmap/brk/munmap/madvise of 64 TiB stepped
// through every page (about 40 s each) before failing. Every check is the
// probe's own; the time bound is only the suite's timeout.
START_TEST(edge_lengths_and_wrapping_ranges_fail_cleanly) {
  std::string dir = vmha_test::make_temp_dir();
  std::string prog = vmha_test::builddir() + "/tests/vmha/mem_edge_probe", out = dir + "/out";
  ElfImage img;
  Status s = read_elf_file(prog, &img);
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ck_assert_int_ge(fd, 0);
  VmOptions o;
  o.memory_bytes = kMemory;
  o.std_fds[1] = fd;
  RunResult r;
  {
    std::unique_ptr<Vm> vm;
    s = Vm::create(o, &vm);
    ck_assert_msg(s.ok(), "%s", s.message().c_str());
    s = vm->load(img, prog, {prog}, {});
    ck_assert_msg(s.ok(), "%s", s.message().c_str());
    r = vm->run();
  }
  close(fd);
  std::string text = vmha_test::slurp(out);
  ck_assert_msg(r.end == RunResult::End::kExited && r.code == 0, "mem_edge_probe: end %d code %d (%s)\n%s",
                static_cast<int>(r.end), r.code, r.message.c_str(), text.c_str());
  ck_assert_msg(text.find("static data intact: ok") != std::string::npos, "the probe stopped early:\n%s", text.c_str());
}
END_TEST

// `vmha run --memory` outside the valid range is refused up front with the
// range in the message (0 used to fail inside mmap; huge values wrapped when
// shifted to bytes); the smallest valid size runs a program.
START_TEST(memory_option_outside_the_range_is_refused) {
  std::string dir = vmha_test::make_temp_dir();
  std::string prog = vmha_test::builddir() + "/tests/vmha/mem_edge_probe";
  for (const char* mib : {"0", "15", "1048577", "17592186044416", "18446744073709551615"}) {
    vmha_test::Captured c = vmha_test::run_capture({vmha_test::vmha_bin(), "run", "--memory", mib, "--", prog}, dir);
    ck_assert_msg(c.exit_code() == 125, "--memory %s: exit %d: %s", mib, c.exit_code(), c.err.c_str());
    ck_assert_msg(c.err.find("16 to 1048576 MiB") != std::string::npos, "--memory %s: no range in: %s", mib,
                  c.err.c_str());
  }
  vmha_test::Captured c = vmha_test::run_capture({vmha_test::vmha_bin(), "run", "--memory", "16", "--", prog}, dir);
  ck_assert_msg(c.exit_code() == 0, "--memory 16: exit %d: %s%s", c.exit_code(), c.out.c_str(), c.err.c_str());
}
END_TEST

}  // namespace

int main() {
  vmha_test::require_kvm();
  Suite* s = suite_create("vmha_mappings");
  TCase* tc = tcase_create("mappings");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, moved_and_reused_frames_reach_the_right_address, 0, 3);
  tcase_add_loop_test(tc, write_protected_page_faults, 0, 3);
  tcase_add_test(tc, edge_lengths_and_wrapping_ranges_fail_cleanly);
  tcase_add_test(tc, memory_option_outside_the_range_is_refused);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
