// The vCPU section of the VM state: general, segment/control and FPU
// registers, the XSAVE image when KVM gives one, and the MSRs KVM holds.
#include <sys/ioctl.h>

#include <cstring>
#include <memory>

#include "vmha/state/vm_state_codec.h"
#include "vmha/vmm/layout.h"

namespace vmha {

using namespace layout;

namespace {

constexpr uint32_t kSavedMsrs[] = {0xc0000081, 0xc0000082, 0xc0000083, 0xc0000084, 0xc0000100, 0xc0000101, 0xc0000102};
constexpr uint32_t kMaxMsrs = 64;

}  // namespace

Status VmStateCodec::encode_vcpu(ByteWriter& w, Vm& vm) {
  if (Status s = vm.flush_sync_regs(); !s.ok()) return s;
  kvm_regs regs;
  kvm_sregs sregs;
  kvm_fpu fpu;
  if (ioctl(vm.vcpu_fd_, KVM_GET_REGS, &regs) < 0) return Status::error(errno_text("KVM_GET_REGS"));
  if (ioctl(vm.vcpu_fd_, KVM_GET_SREGS, &sregs) < 0) return Status::error(errno_text("KVM_GET_SREGS"));
  if (ioctl(vm.vcpu_fd_, KVM_GET_FPU, &fpu) < 0) return Status::error(errno_text("KVM_GET_FPU"));
  w.pod(regs);
  w.pod(sregs);
  w.pod(fpu);
  // The XSAVE image too, restored last: on this host KVM_GET_FPU reports
  // MXCSR as 0, so the legacy FPU record alone would restore a wrong MXCSR.
  auto xsave = std::make_unique<XsaveArea>();
  bool has_xsave = ioctl(vm.vcpu_fd_, kKvmGetXsave, xsave.get()) == 0;
  // Bytes 464..511 of the legacy area are left to software, not CPU state;
  // some hosts' KVM leaves values there. Zero, so the same guest state is
  // the same bytes on every host (and tests/unit/data/vm_state_v1.bin
  // saves back unchanged).
  if (has_xsave) std::memset(xsave->bytes + kXsaveSoftwareBytes, 0, kXsaveLegacyBytes - kXsaveSoftwareBytes);
  w.u32(has_xsave);
  if (has_xsave) w.pod(*xsave);
  // Each MSR on its own: this KVM refuses some (see vm_setup.cc); only the
  // ones it holds are saved.
  std::vector<std::pair<uint32_t, uint64_t>> saved;
  for (uint32_t index : kSavedMsrs) {
    KvmMsrList<1> m;
    m.entries[0].index = index;
    if (ioctl(vm.vcpu_fd_, kKvmGetMsrs, &m) == 1) saved.emplace_back(index, m.entries[0].data);
  }
  w.u32(static_cast<uint32_t>(saved.size()));
  for (const auto& [index, value] : saved) {
    w.u32(index);
    w.u64(value);
  }
  return Status();
}

void VmStateCodec::decode_vcpu(ByteReader& r, VcpuRecord* cpu) {
  r.pod(&cpu->regs, "general registers");
  r.pod(&cpu->sregs, "segment and control registers");
  r.pod(&cpu->fpu, "FPU/SSE registers");
  cpu->has_xsave = r.u32("XSAVE flag");
  if (cpu->has_xsave) r.pod(cpu->xsave.get(), "XSAVE image");
  uint32_t nmsrs = r.u32("MSR count");
  if (nmsrs > kMaxMsrs) r.fail("MSR count", "at most 64");
  for (uint32_t i = 0; i < nmsrs && r.ok(); ++i) {
    uint32_t idx = r.u32("MSR index");
    cpu->msrs.emplace_back(idx, r.u64("MSR value"));
  }
}

Status VmStateCodec::apply_vcpu(Vm& vm, const VcpuRecord& cpu) {
  // Set directly: kvm_run's copies are stale until the next KVM_RUN.
  if (Status s = vm.flush_sync_regs(); !s.ok()) return s;
  vm.regs_current_ = vm.sregs_current_ = false;
  if (ioctl(vm.vcpu_fd_, KVM_SET_SREGS, &cpu.sregs) < 0) return Status::error(errno_text("KVM_SET_SREGS"));
  if (ioctl(vm.vcpu_fd_, KVM_SET_REGS, &cpu.regs) < 0) return Status::error(errno_text("KVM_SET_REGS"));
  if (ioctl(vm.vcpu_fd_, KVM_SET_FPU, &cpu.fpu) < 0) return Status::error(errno_text("KVM_SET_FPU"));
  if (cpu.has_xsave && ioctl(vm.vcpu_fd_, kKvmSetXsave, cpu.xsave.get()) < 0)
    return Status::error(errno_text("KVM_SET_XSAVE"));
  for (const auto& m : cpu.msrs) (void)vm.set_msrs({&m, 1});  // as at start: some may be refused
  return Status();
}

}  // namespace vmha
