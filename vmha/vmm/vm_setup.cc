// Building a VM: /dev/kvm, the memory slot, the dirty tracker (in KVM's
// required order), the vCPU, CPUID without XSAVE/AVX, and the long-mode CPU
// state a Linux process starts in.
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "vmha/sys/proc_views.h"
#include "vmha/vmm/layout.h"
#include "vmha/vmm/program_loader.h"
#include "vmha/vmm/vm.h"

namespace vmha {

using namespace layout;

Vm::~Vm() {
  helpers_.reset();  // joins their threads; the tracker unmaps their rings below
  if (tree_)
    for (auto& p : tree_->all())
      if (p) p->fds.close_all();
  if (run_) munmap(run_, run_size_);
  tracker_.reset();  // unmaps the ring before the vCPU fd closes
  if (vcpu_fd_ >= 0) close(vcpu_fd_);
  if (vm_fd_ >= 0) close(vm_fd_);
  if (kvm_fd_ >= 0) close(kvm_fd_);
}

Status Vm::open_kvm(const VmOptions& opts) {
  opts_ = opts;
  kvm_fd_ = open("/dev/kvm", O_RDWR | O_CLOEXEC);
  if (kvm_fd_ < 0) return Status::error(errno_text("/dev/kvm (vmha needs KVM)"));
  if (ioctl(kvm_fd_, KVM_GET_API_VERSION, 0) != KVM_API_VERSION)
    return Status::error("/dev/kvm: unexpected KVM API version");
  vm_fd_ = ioctl(kvm_fd_, KVM_CREATE_VM, 0);
  if (vm_fd_ < 0) return Status::error(errno_text("KVM_CREATE_VM"));
  if (Status s = opts.memory_base ? GuestMemory::create_at(opts.memory_base, opts.memory_bytes, &mem_)
                                  : GuestMemory::create(opts.memory_bytes, &mem_);
      !s.ok())
    return s;
  tracker_ = make_tracker(opts.tracker, mem_->size());
  tracker_->attach_log(&mem_->write_log());
  if (Status s = tracker_->attach_vm(vm_fd_); !s.ok()) return s;
  kvm_userspace_memory_region region{};
  region.slot = 0;
  region.flags = tracker_->memslot_flags();
  region.guest_phys_addr = 0;
  region.memory_size = mem_->size();
  region.userspace_addr = reinterpret_cast<uint64_t>(mem_->base());
  if (ioctl(vm_fd_, KVM_SET_USER_MEMORY_REGION, &region) < 0)
    return Status::error(errno_text("KVM_SET_USER_MEMORY_REGION"));
  ioctl(vm_fd_, KVM_SET_TSS_ADDR, 0xfffbd000ul);  // needed by some Intel hosts, harmless elsewhere
  vcpu_fd_ = ioctl(vm_fd_, KVM_CREATE_VCPU, 0);
  if (vcpu_fd_ < 0) return Status::error(errno_text("KVM_CREATE_VCPU"));
  int size = ioctl(kvm_fd_, KVM_GET_VCPU_MMAP_SIZE, 0);
  if (size <= 0) return Status::error(errno_text("KVM_GET_VCPU_MMAP_SIZE"));
  run_size_ = static_cast<size_t>(size);
  void* p = mmap(nullptr, run_size_, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu_fd_, 0);
  if (p == MAP_FAILED) return Status::error(errno_text("mmap of kvm_run"));
  run_ = static_cast<kvm_run*>(p);
  // Registers in the shared kvm_run page save two ioctls per system call.
  int sync = ioctl(kvm_fd_, KVM_CHECK_EXTENSION, KVM_CAP_SYNC_REGS);
  if (sync > 0 && (sync & KVM_SYNC_X86_REGS)) {
    sync_regs_ = true;
    run_->kvm_valid_regs = KVM_SYNC_X86_REGS;
    // Segment and control registers too: a switch between processes (CR3)
    // or threads (the FS base) then costs no ioctl for them.
    if (sync & KVM_SYNC_X86_SREGS) {
      sync_sregs_ = true;
      run_->kvm_valid_regs |= KVM_SYNC_X86_SREGS;
    }
  }
  if (Status s = tracker_->attach_vcpu(vcpu_fd_); !s.ok()) return s;
  if (Status s = setup_cpuid(vcpu_fd_); !s.ok()) return s;
  if (Status s = create_helpers(); !s.ok()) return s;

  auto pt = std::make_unique<PageTable>(*mem_);
  auto as = std::make_unique<AddressSpace>(*mem_, *pt);
  auto root = std::make_unique<Process>(*as);
  root->own_pt = std::move(pt);
  root->own_as = std::move(as);
  tree_ = std::make_unique<ProcessTree>(*mem_);
  proc_ = &tree_->add_root(std::move(root));
  as_ = proc_->as;
  pt_ = proc_->own_pt.get();
  proc_->log_unsupported = opts.log_unsupported;
  if (!opts.output) own_sink_ = std::make_unique<PassthroughSink>();
  proc_->out = opts.output ? opts.output : own_sink_.get();
  if (Status s = proc_->root.open_root(opts.workdir, opts.read_only, opts.run_id); !s.ok()) return s;

  // A no-op handler: its only job is to interrupt KVM_RUN for request_pause().
  static const bool installed = [] {
    struct sigaction sa {};
    sa.sa_handler = [](int) {};
    sigaction(SIGRTMIN + 5, &sa, nullptr);
    return true;
  }();
  (void)installed;
  return Status();
}

Status Vm::setup_cpuid(int fd) {
  auto entries = std::make_unique<KvmCpuidList>();
  if (ioctl(kvm_fd_, kKvmGetSupportedCpuid, entries.get()) < 0)
    return Status::error(errno_text("KVM_GET_SUPPORTED_CPUID"));
  for (uint32_t i = 0; i < entries->nent; ++i) {
    kvm_cpuid_entry2& e = entries->entries[i];
    if (e.function == cpuid::kLeafFeatures) {
      // No XSAVE state is managed for the guest: hide XSAVE, OSXSAVE, AVX, FMA, F16C.
      e.ecx &= ~(cpuid::k1EcxXsave | cpuid::k1EcxOsxsave | cpuid::k1EcxAvx | cpuid::k1EcxFma | cpuid::k1EcxF16c);
      hwcap_ = e.edx;
    } else if (e.function == cpuid::kLeafExtendedFeatures && e.index == 0) {
      // ... and what needs it: AVX2, AVX-512, AMX.
      e.ebx &= ~(cpuid::k7EbxAvx2 | cpuid::k7EbxAvx512F | cpuid::k7EbxAvx512Dq | cpuid::k7EbxAvx512Ifma |
                 cpuid::k7EbxAvx512Pf | cpuid::k7EbxAvx512Er | cpuid::k7EbxAvx512Cd | cpuid::k7EbxAvx512Bw |
                 cpuid::k7EbxAvx512Vl);
      e.ecx &= ~(cpuid::k7EcxAvx512Vbmi | cpuid::k7EcxAvx512Vbmi2 | cpuid::k7EcxVaes | cpuid::k7EcxVpclmulqdq |
                 cpuid::k7EcxAvx512Vnni | cpuid::k7EcxAvx512Bitalg | cpuid::k7EcxAvx512Vpopcntdq);
      e.edx &= ~(cpuid::k7EdxAmxBf16 | cpuid::k7EdxAmxTile | cpuid::k7EdxAmxInt8 | cpuid::k7EdxAvx5124Vnniw |
                 cpuid::k7EdxAvx5124Fmaps | cpuid::k7EdxAvx512Vp2intersect | cpuid::k7EdxAvx512Fp16);
    } else if (e.function == cpuid::kLeafXsave) {
      e.eax = e.ebx = e.ecx = e.edx = 0;
    }
  }
  if (ioctl(fd, kKvmSetCpuid2, entries.get()) < 0) return Status::error(errno_text("KVM_SET_CPUID2"));
  return Status();
}

Status Vm::set_msrs(int fd, std::span<const std::pair<uint32_t, uint64_t>> msrs) {
  KvmMsrList<16> m;
  if (msrs.size() > 16) return Status::error("KVM_SET_MSRS: too many MSRs");
  m.nmsrs = static_cast<uint32_t>(msrs.size());
  for (size_t i = 0; i < msrs.size(); ++i) {
    m.entries[i].index = msrs[i].first;
    m.entries[i].data = msrs[i].second;
  }
  int n = ioctl(fd, kKvmSetMsrs, &m);
  if (n < 0) return Status::error(errno_text("KVM_SET_MSRS"));
  if (n != static_cast<int>(msrs.size())) {
    char idx[16];
    snprintf(idx, sizeof idx, "%#x", msrs[n].first);
    return Status::error(std::string("KVM_SET_MSRS: MSR ") + idx + " refused");
  }
  return Status();
}

Status check_memory_mib(uint64_t mib) {
  if (mib >= kMinMemoryMib && mib <= kMaxMemoryMib) return Status();
  return Status::error("guest memory of " + std::to_string(mib) + " MiB is outside the valid range, " +
                       std::to_string(kMinMemoryMib) + " to " + std::to_string(kMaxMemoryMib) + " MiB (1 TiB)");
}

Status check_vcpus(long n) {
  if (n >= 0 && n <= kMaxVcpus) return Status();
  return Status::error(std::to_string(n) + " vCPUs is outside the valid range, 1 to " + std::to_string(kMaxVcpus) +
                       " (0: one per CPU vmha may run on)");
}

Status Vm::create(const VmOptions& opts, std::unique_ptr<Vm>* out) {
  uint64_t mib = (opts.memory_bytes >> 20) + ((opts.memory_bytes & ((1u << 20) - 1)) != 0);
  if (Status s = check_memory_mib(mib); !s.ok()) return s;
  if (Status s = check_vcpus(opts.vcpus); !s.ok()) return s;
  std::unique_ptr<Vm> vm(new Vm());
  if (Status s = vm->open_kvm(opts); !s.ok()) return s;
  if (!vm->pt_->init() || !install_cpu_tables(*vm->mem_, *vm->pt_, &vm->tables_))
    return Status::error("guest memory too small for the page tables");
  *out = std::move(vm);
  return Status();
}

Status Vm::set_initial_cpu(uint64_t entry, uint64_t sp) {
  kvm_sregs sregs;
  if (ioctl(vcpu_fd_, KVM_GET_SREGS, &sregs) < 0) return Status::error(errno_text("KVM_GET_SREGS"));
  sregs.cs = user_segment(kUserCs, true);
  sregs.ds = sregs.es = sregs.fs = sregs.gs = sregs.ss = user_segment(kUserDs, false);
  sregs.fs.base = sregs.gs.base = 0;
  kvm_segment tr{};
  tr.selector = kTss;
  tr.base = kTssVa;
  tr.limit = kTssSize + 0x400 / 8;  // the I/O bitmap covers ports 0..0x3ff
  tr.type = kSegTssBusy;
  tr.present = 1;
  sregs.tr = tr;
  kvm_segment ldt{};
  ldt.type = kSegLdt;
  ldt.unusable = 1;
  sregs.ldt = ldt;
  sregs.gdt.base = kGdtVa;
  sregs.gdt.limit = 0x4f;
  sregs.idt.base = kIdtVa;
  sregs.idt.limit = 32 * 16 - 1;
  sregs.cr0 = kCr0Pg | kCr0Am | kCr0Wp | kCr0Ne | kCr0Et | kCr0Mp | kCr0Pe;
  sregs.cr3 = pt_->cr3();
  sregs.cr4 = kCr4Pae | kCr4Osfxsr | kCr4Osxmmexcpt;
  sregs.efer = kEferSce | kEferLme | kEferLma | kEferNxe;
  if (ioctl(vcpu_fd_, KVM_SET_SREGS, &sregs) < 0) return Status::error(errno_text("KVM_SET_SREGS"));

  kvm_regs regs{};
  regs.rip = entry;
  regs.rsp = sp;
  regs.rflags = kRflagsIf | kRflagsFixed;
  if (ioctl(vcpu_fd_, KVM_SET_REGS, &regs) < 0) return Status::error(errno_text("KVM_SET_REGS"));

  kvm_fpu fpu{};
  fpu.fcw = kFcwDefault;
  fpu.mxcsr = kMxcsrDefault;
  if (ioctl(vcpu_fd_, KVM_SET_FPU, &fpu) < 0) return Status::error(errno_text("KVM_SET_FPU"));

  const std::pair<uint32_t, uint64_t> fs[] = {{kMsrFsBase, 0}};
  if (Status s = set_msrs(fs); !s.ok()) return s;
  return set_syscall_msrs(vcpu_fd_);
}

Status Vm::set_syscall_msrs(int fd) {
  // LSTAR is essential; this KVM refuses some of the others (STAR on
  // kvm_pvm), which only matter on hosts where SYSCALL really enters CPL0.
  const std::pair<uint32_t, uint64_t> essential[] = {{kMsrLstar, kSyscallStubVa}, {kMsrGsBase, 0}};
  if (Status s = set_msrs(fd, essential); !s.ok()) return s;
  const std::pair<uint32_t, uint64_t> optional[] = {
      {kMsrStar, (uint64_t(kUser32Cs & ~3) << 48) | (uint64_t(kKernelCs) << 32)},
      {kMsrCstar, kSyscallStubVa},
      {kMsrSfmask, kRflagsTf | kRflagsDf | kRflagsIf | kRflagsNt},  // cleared on entry, as Linux does
      {kMsrKernelGsBase, 0},
  };
  for (const auto& m : optional) (void)set_msrs(fd, {&m, 1});
  return Status();
}

Status Vm::load(const ElfImage& image, const std::string& exec_name, const std::vector<std::string>& argv,
                const std::vector<std::string>& envp) {
  ElfImage interp;
  if (!image.interpreter.empty())
    if (Status s = read_interpreter(proc_->root, image, exec_name, &interp); !s.ok()) return s;
  LoadedProgram prog;
  if (Status s = load_program(image, image.interpreter.empty() ? nullptr : &interp, exec_name, argv, envp, hwcap_, *as_,
                              &prog);
      !s.ok())
    return s;
  as_->take_flush();
  char cwd[PATH_MAX];
  proc_->exe = program_path(getcwd(cwd, sizeof cwd) ? cwd : "/", exec_name);
  for (int i = 0; i < 3; ++i) {
    FdEntry e;
    e.host_fd = fcntl(opts_.std_fds[i], F_DUPFD_CLOEXEC, 0);
    if (e.host_fd < 0) continue;  // closed in vmha: closed in the guest too
    e.kind = FdKind::kStdStream;
    e.stream = i;
    e.open_flags = fcntl(e.host_fd, F_GETFL) & kSetflFlags;  // the guest's view of F_SETFL's flags
    proc_->fds.install_at(i, e);
  }
  return set_initial_cpu(prog.entry, prog.stack_pointer);
}

}  // namespace vmha
