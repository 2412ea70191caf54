// Mapping changes reach KVM: a guest that moves (mremap), unmaps and remaps
// and write-protects its memory (tests/vmha/remap_probe.c) sees each address
// reach the right frame, both on the VM's own memory and on caller memory
// (the replication transport's region, where freed frames are zeroed by the
// VMM rather than by MADV_DONTNEED). KVM here shadows the guest page tables
// and must be made to forget translations the VMM removed.
#include <signal.h>
#include <sys/mman.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/vmha/vmha_test_util.h"
#include "vmha/vmm/vm.h"

#include <check.h>

using namespace vmha;

namespace {

constexpr uint64_t kMemory = 256ull << 20;

enum class Memory { kOwn, kCallerShared, kCallerPrivate };
const char* memory_name(Memory m) {
  return m == Memory::kOwn ? "own memory" : m == Memory::kCallerShared ? "caller shared memory" : "caller private memory";
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

}  // namespace

int main() {
  vmha_test::require_kvm();
  Suite* s = suite_create("vmha_mappings");
  TCase* tc = tcase_create("mappings");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, moved_and_reused_frames_reach_the_right_address, 0, 3);
  tcase_add_loop_test(tc, write_protected_page_faults, 0, 3);
  suite_add_tcase(s, tc);
  SRunner* sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
