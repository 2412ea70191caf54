// Delivering guest signals as x86-64 Linux does: at a safe point (after a
// system call, or when a kick brought the vCPU out of KVM_RUN), a signal with
// a handler gets an rt_sigframe on the guest stack (below the 128-byte red
// zone, or on the alternate stack with SA_ONSTACK): the return address
// (sa_restorer), a ucontext with the interrupted registers, the mask to
// restore and the alternate stack, the siginfo, and the FXSAVE image the
// sigcontext points to. The handler starts with rdi = signal, rsi = &info,
// rdx = &uc and a clean FPU; rt_sigreturn puts everything back.
// A signal whose default action ends the process ends the guest (core dumps
// are not written). A call cut short by the kick fails with EINTR or runs
// again, as Linux decides it (sys/signal_calls.h).
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "vmha/sys/signal_calls.h"
#include "vmha/vmm/layout.h"
#include "vmha/vmm/vm.h"

namespace vmha {

using namespace layout;

namespace {

// The kernel's struct sigcontext (64-bit), ucontext and rt_sigframe.
struct SigContext {
  uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
  uint64_t rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags;
  uint16_t cs, gs, fs, ss;
  uint64_t err, trapno, oldmask, cr2;
  uint64_t fpstate;  // the FXSAVE image, 0 when none
  uint64_t reserved[8];
};
static_assert(sizeof(SigContext) == 256);

struct UContext {
  uint64_t flags, link;
  GuestStack stack;
  SigContext mc;
  uint64_t sigmask;
};
static_assert(sizeof(UContext) == 304);

struct RtSigframe {
  uint64_t pretcode;  // sa_restorer: the handler returns into rt_sigreturn
  UContext uc;
  GuestSiginfo info;
};
static_assert(sizeof(RtSigframe) == 440);

constexpr uint64_t kUcSigcontextSs = 2, kUcStrictRestoreSs = 4;
constexpr uint64_t kRedZone = 128;
constexpr uint64_t kFxSize = 512;
constexpr uint64_t kRflagsRf = 1ull << 16;
// The flags a signal frame may change (the kernel's FIX_EFLAGS).
constexpr uint64_t kFixEflags = 0x40000 | 0x800 | kRflagsDf | kRflagsTf | 0x80 | 0x40 | 0x10 | 0x4 | 0x1 | kRflagsRf;
constexpr size_t kFxMxcsr = 24;

struct XsaveImage {
  uint8_t bytes[4096];
};

std::string signal_text(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

// Why the guest ends: said for signals from outside the guest and its
// timers; one it sends itself ends it as quietly as before.
std::string ending_message(int sig, const GuestSiginfo& info) {
  int32_t pid = 0;
  std::memcpy(&pid, info.fields, 4);
  const bool sent = info.code == SI_USER || info.code == SI_TKILL || info.code == SI_QUEUE;
  if (sent && pid == getpid()) return "";
  if (sent && pid > 0) return signal_text(sig) + " (sent to vmha by pid " + std::to_string(pid) + ")";
  return signal_text(sig);
}

}  // namespace

Status Vm::start_signals() {
  if (opts_.relay_host_signals) relay_host_signals();
  proc_->signals.timers_changed = true;
  return kick_.start(&run_->immediate_exit);
}

// A signal held at the syscall stub: the kick that cuts the call if it blocks.
constexpr int64_t kKickLaterNs = 2000000;

Status Vm::deliver_signals(RunResult* end) {
  SignalState& s = proc_->signals;
  if (proc_ == &tree_->root())
    collect_signals(s);  // host signals go to the first process
  else
    s.expire_timers();
  // One re-aim after collecting: a host signal that lands after the collect
  // finds the kick re-armed by aim itself (VcpuKick::aim), so it is not lost.
  if (VcpuKick::take_rekick() || s.timers_changed) {
    s.timers_changed = false;
    kick_.aim(next_kick_ns());
  }
  for (int n = 0; n < kMaxSignal && !proc_->exit.requested; ++n) {
    uint64_t ready = s.deliverable(proc_->sigmask, proc_->sigactions);
    if (!ready) break;
    if (n == 0) {
      // A kick or a pause can cut KVM_RUN between the guest's `syscall` and
      // the stub's OUT: the guest is inside the call, where no handler may
      // run (one built there returned into the stub, and the call then ran
      // as if the signal had come before it: a read got the handler's byte
      // instead of EINTR, a sleep ran its full time). The call is served
      // first: a kick one period later cuts it if it blocks (one now would
      // cut KVM_RUN again before the OUT), and the signal then ends it with
      // EINTR or restarts it, as SA_RESTART says.
      kvm_regs r;
      if (Status st = get_regs(&r); !st.ok()) return st;
      if (r.rip == kSyscallStubVa) {
        kick_.aim(kKickLaterNs);
        break;
      }
    }
    GuestSiginfo info;
    int sig = s.take(ready, &info);
    if (Status st = deliver_one(sig, info, end); !st.ok()) return st;
  }
  return Status();
}

namespace {

// The guest's FXSAVE image, from the XSAVE image when KVM gives one (its
// KVM_GET_FPU reports MXCSR as 0 on some hosts), else from KVM_GET_FPU.
bool read_fx(int vcpu_fd, uint8_t* fx) {
  auto x = std::make_unique<XsaveImage>();
  if (ioctl(vcpu_fd, kKvmGetXsave, x.get()) == 0) {
    std::memcpy(fx, x->bytes, kFxSize);
    return true;
  }
  kvm_fpu f;
  if (ioctl(vcpu_fd, KVM_GET_FPU, &f) < 0) return false;
  std::memset(fx, 0, kFxSize);
  std::memcpy(fx + 0, &f.fcw, 2);
  std::memcpy(fx + 2, &f.fsw, 2);
  fx[4] = f.ftwx;
  std::memcpy(fx + 6, &f.last_opcode, 2);
  std::memcpy(fx + 8, &f.last_ip, 8);
  std::memcpy(fx + 16, &f.last_dp, 8);
  std::memcpy(fx + kFxMxcsr, &f.mxcsr, 4);
  std::memcpy(fx + 32, f.fpr, 128);
  std::memcpy(fx + 160, f.xmm, 256);
  return true;
}

bool write_fx(int vcpu_fd, const uint8_t* in) {
  uint8_t fx[kFxSize];
  std::memcpy(fx, in, kFxSize);
  uint32_t mxcsr;
  std::memcpy(&mxcsr, fx + kFxMxcsr, 4);
  mxcsr &= 0xffff;  // reserved bits would make the restore fault
  std::memcpy(fx + kFxMxcsr, &mxcsr, 4);
  auto x = std::make_unique<XsaveImage>();
  if (ioctl(vcpu_fd, kKvmGetXsave, x.get()) == 0) {
    std::memcpy(x->bytes, fx, 464);  // the rest of the legacy area is the software's
    x->bytes[512] |= 3;              // XSTATE_BV: x87 and SSE state are in the image
    return ioctl(vcpu_fd, kKvmSetXsave, x.get()) == 0;
  }
  kvm_fpu f{};
  std::memcpy(&f.fcw, fx + 0, 2);
  std::memcpy(&f.fsw, fx + 2, 2);
  f.ftwx = fx[4];
  std::memcpy(&f.last_opcode, fx + 6, 2);
  std::memcpy(&f.last_ip, fx + 8, 8);
  std::memcpy(&f.last_dp, fx + 16, 8);
  f.mxcsr = mxcsr;
  std::memcpy(f.fpr, fx + 32, 128);
  std::memcpy(f.xmm, fx + 160, 256);
  return ioctl(vcpu_fd, KVM_SET_FPU, &f) == 0;
}

}  // namespace

Status Vm::deliver_one(int sig, const GuestSiginfo& info, RunResult* end) {
  KernelSigaction& act = proc_->sigactions[sig];
  if (act.handler == kSigDfl || sig == SIGKILL) {  // the ignoring defaults were dropped before
    proc_->die_by_signal(sig);
    end->message = ending_message(sig, info);
    return Status();
  }
  kvm_regs r;
  if (Status s = get_regs(&r); !s.ok()) return s;
  if (restart_ && r.rip + 2 == r.rcx) {
    // The guest sits before a call that was cut short: EINTR, or again after the handler.
    restart_ = false;
    SyscallArgs a{r.rax, {r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9}};
    if (!interrupted_call_restarts(*proc_, a, act.flags & kSaRestart)) {
      r.rax = static_cast<uint64_t>(-EINTR);
      r.rip = r.rcx;
    }
  }
  SignalState& s = proc_->signals;
  auto segv = [&](const char* why) {
    proc_->die_by_signal(SIGSEGV);
    end->message = "SIGSEGV: " + signal_text(sig) + " could not be delivered: " + why;
    return Status();
  };
  if (!(act.flags & kSaRestorer)) return segv("its handler has no sa_restorer (SA_RESTORER)");

  // Where the frame goes.
  const GuestStack& alt = s.altstack;
  const bool on_alt = alt.flags != SS_DISABLE && r.rsp > alt.sp && r.rsp - alt.sp <= alt.size;
  uint64_t sp = r.rsp - kRedZone;
  if ((act.flags & kSaOnstack) && alt.flags != SS_DISABLE && !on_alt) sp = alt.sp + alt.size;
  const uint64_t fx_va = (sp - kFxSize) & ~uint64_t{63};
  const uint64_t frame_va = ((fx_va - sizeof(RtSigframe)) & ~uint64_t{15}) - 8;  // as after a call

  uint8_t fx[kFxSize];
  if (!read_fx(vcpu_fd_, fx)) return Status::error(errno_text("reading the FPU state for a signal frame"));
  std::memset(fx + 464, 0, kFxSize - 464);  // no XSAVE magic: a plain FXSAVE image

  const uint64_t saved_mask = s.saved_mask.value_or(proc_->sigmask);
  RtSigframe f{};
  f.pretcode = act.restorer;
  f.uc.flags = kUcSigcontextSs | kUcStrictRestoreSs;
  f.uc.stack = GuestStack{alt.sp, on_alt ? SS_ONSTACK : alt.flags, 0, alt.size};
  SigContext& c = f.uc.mc;
  c = SigContext{r.r8,  r.r9,    r.r10, r.r11, r.r12,      r.r13, r.r14, r.r15,    r.rdi,   r.rsi,
                 r.rbp, r.rbx,   r.rdx, r.rax, r.rcx,      r.rsp, r.rip, r.rflags, kUserCs, 0,
                 0,     kUserDs, 0,     0,     saved_mask, 0,     fx_va, {}};
  f.uc.sigmask = saved_mask;
  f.info = info;
  if (!as_->copy_out(fx_va, fx, kFxSize) || !as_->copy_out(frame_va, &f, sizeof f))
    return segv("the stack has no room for its frame");

  // The handler's state.
  s.saved_mask.reset();
  proc_->sigmask |= act.mask | ((act.flags & kSaNodefer) ? 0 : sigbit(sig));
  proc_->sigmask &= ~kUnblockable;
  const uint64_t handler = act.handler;
  if (act.flags & kSaResethand) act.handler = kSigDfl;
  r.rdi = static_cast<uint64_t>(sig);
  r.rsi = frame_va + offsetof(RtSigframe, info);
  r.rdx = frame_va + offsetof(RtSigframe, uc);
  r.rax = 0;
  r.rsp = frame_va;
  r.rip = handler;
  r.rflags &= ~(kRflagsDf | kRflagsTf | kRflagsRf);
  if (Status s = set_regs(r); !s.ok()) return s;
  uint8_t clean[kFxSize] = {};
  std::memcpy(clean, &kFcwDefault, 2);
  std::memcpy(clean + kFxMxcsr, &kMxcsrDefault, 4);
  if (!write_fx(vcpu_fd_, clean)) return Status::error(errno_text("resetting the FPU for a signal handler"));
  return Status();
}

bool Vm::sigreturn(kvm_regs& r) {
  RtSigframe f;
  if (!as_->copy_in(&f, r.rsp - 8, sizeof f)) return false;  // `ret` popped pretcode
  const SigContext& c = f.uc.mc;
  if (c.fpstate) {
    uint8_t fx[kFxSize];
    if (!as_->copy_in(fx, c.fpstate, kFxSize) || !write_fx(vcpu_fd_, fx)) return false;
  }
  r.r8 = c.r8, r.r9 = c.r9, r.r10 = c.r10, r.r11 = c.r11, r.r12 = c.r12, r.r13 = c.r13, r.r14 = c.r14, r.r15 = c.r15;
  r.rdi = c.rdi, r.rsi = c.rsi, r.rbp = c.rbp, r.rbx = c.rbx, r.rdx = c.rdx, r.rax = c.rax, r.rcx = c.rcx;
  r.rsp = c.rsp, r.rip = c.rip;
  r.rflags = kRflagsIf | kRflagsFixed | (c.eflags & kFixEflags);
  proc_->sigmask = f.uc.sigmask & ~kUnblockable;
  // The alternate stack as the frame says (errors ignored, as Linux does).
  SignalState& s = proc_->signals;
  const GuestStack& st = f.uc.stack;
  bool on_alt = s.altstack.flags != SS_DISABLE && r.rsp > s.altstack.sp && r.rsp - s.altstack.sp <= s.altstack.size;
  if (!on_alt) {
    if (st.flags & SS_DISABLE)
      s.altstack = GuestStack{};
    else if (st.size >= 2048)
      s.altstack = GuestStack{st.sp, 0, 0, st.size};
  }
  return true;
}

}  // namespace vmha
