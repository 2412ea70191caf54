// The VMM sections of the VM state: page-table roots, the guest's mappings
// and brk, and the process fields the VMM keeps (FS base, signal state,
// system-call state, hwcap).
#include <map>

#include "vmha/state/vm_state_codec.h"
#include "vmha/vmm/layout.h"

namespace vmha {

using namespace layout;

namespace {

constexpr uint32_t kMaxMappings = 1u << 20;

}  // namespace

void VmStateCodec::encode_page_tables(ByteWriter& w, const Vm& vm) {
  w.u64(vm.pt_->root(0));
  w.u64(vm.pt_->root(1));
  w.u32(vm.pt_->current());
  w.u64(vm.tables_.first_frame);
}

void VmStateCodec::decode_page_tables(ByteReader& r, Vm& vm) {
  uint64_t root0 = r.u64("page-table root"), root1 = r.u64("page-table root");
  uint32_t cur = r.u32("current root");
  vm.tables_.first_frame = r.u64("kernel frames");
  if (r.ok() &&
      (!frame_inside(vm, root0) || !frame_inside(vm, root1) || cur > 1 || !frame_inside(vm, vm.tables_.first_frame)))
    r.fail("page-table roots", "page-aligned frames inside guest memory");
  vm.pt_->set_roots(root0, root1, static_cast<int>(cur));
}

void VmStateCodec::encode_mappings(ByteWriter& w, const Vm& vm) {
  w.u64(vm.as_->brk_start());
  w.u64(vm.as_->brk_current());
  w.u32(static_cast<uint32_t>(vm.as_->vmas().size()));
  for (const auto& [start, v] : vm.as_->vmas()) {
    w.u64(v.start);
    w.u64(v.end);
    w.u32(v.prot);
    w.u32(v.flags);
  }
}

void VmStateCodec::decode_mappings(ByteReader& r, Vm& vm) {
  uint64_t brk_start = r.u64("brk start"), brk_cur = r.u64("brk");
  vm.as_->set_brk(brk_start, brk_cur);
  uint32_t nvmas = r.u32("mapping count");
  if (nvmas > kMaxMappings) r.fail("mapping count", "at most 1048576");
  std::map<uint64_t, Vma> vmas;
  for (uint32_t i = 0; i < nvmas && r.ok(); ++i) {
    Vma v;
    v.start = r.u64("mapping start");
    v.end = r.u64("mapping end");
    v.prot = static_cast<int>(r.u32("mapping protection"));
    v.flags = static_cast<int>(r.u32("mapping flags"));
    if (r.ok() && (v.start >= v.end || v.end > kUserTop || v.start % kPageSize || v.end % kPageSize))
      r.fail("mapping", "a page-aligned user range");
    vmas[v.start] = v;
  }
  vm.as_->set_vmas(std::move(vmas));
}

void VmStateCodec::encode_process(ByteWriter& w, const Vm& vm) {
  w.u64(vm.proc_->fs_base);
  w.u64(vm.proc_->sigmask);
  w.pod(vm.proc_->sigactions);
  w.u64(vm.syscalls_);
  w.u32(vm.cpl_checked_ | (vm.syscall_enters_cpl0_ << 1));
  w.u64(vm.hwcap_);
}

void VmStateCodec::decode_process(ByteReader& r, Vm& vm) {
  Process& p = *vm.proc_;
  p.fs_base = r.u64("FS base");
  p.sigmask = r.u64("signal mask");
  r.pod(&p.sigactions, "signal actions");
  vm.syscalls_ = r.u64("system call count");
  uint32_t cpl = r.u32("syscall CPL");
  vm.cpl_checked_ = cpl & 1;
  vm.syscall_enters_cpl0_ = cpl & 2;
  vm.hwcap_ = r.u64("hwcap");
}

}  // namespace vmha
