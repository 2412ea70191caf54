// Vm::save and Vm::restore: the VM state format of vm_state.h.
#include "vmha/state/vm_state.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <memory>

#include "vmha/state/byte_stream.h"
#include "vmha/vmm/layout.h"
#include "vmha/vmm/vm.h"

namespace vmha {

using namespace layout;

namespace {

// struct kvm_xsave as the kernel sizes it (4096 bytes; see layout.h).
struct XsaveArea {
  uint8_t bytes[4096] = {};
};

constexpr uint32_t kSavedMsrs[] = {0xc0000081, 0xc0000082, 0xc0000083, 0xc0000084,
                                   0xc0000100, 0xc0000101, 0xc0000102};

// Bytes waiting in a pipe or socket, read without consuming them.
Status peek_pending(const FdEntry& e, std::string* out) {
  int n = 0;
  if (ioctl(e.host_fd, FIONREAD, &n) < 0) return Status::error(errno_text("FIONREAD"));
  out->assign(static_cast<size_t>(n), '\0');
  if (n == 0) return Status();
  if (e.kind == FdKind::kSocket) {
    ssize_t got = recv(e.host_fd, out->data(), n, MSG_PEEK | MSG_DONTWAIT);
    if (got != n) return Status::error(errno_text("recv(MSG_PEEK) of a guest socket"));
    return Status();
  }
  int tmp[2];
  if (pipe2(tmp, O_CLOEXEC) < 0) return Status::error(errno_text("pipe2"));
  fcntl(tmp[1], F_SETPIPE_SZ, n);
  ssize_t got = tee(e.host_fd, tmp[1], n, SPLICE_F_NONBLOCK);
  ssize_t r = got == n ? read(tmp[0], out->data(), n) : -1;
  close(tmp[0]);
  close(tmp[1]);
  if (r != n) return Status::error("cannot copy the data waiting in a guest pipe");
  return Status();
}

}  // namespace

Status Vm::save(std::vector<uint8_t>* out, bool with_memory) {
  if (running_.load() && !parked_) return Status::error("save: the vCPU is running (pause it first)");
  out->clear();
  ByteWriter w(*out);
  w.bytes(kStateMagic, 8);
  w.u32(kStateVersion);
  w.u64(mem_->size());

  if (Status s = flush_sync_regs(); !s.ok()) return s;
  kvm_regs regs;
  kvm_sregs sregs;
  kvm_fpu fpu;
  if (ioctl(vcpu_fd_, KVM_GET_REGS, &regs) < 0) return Status::error(errno_text("KVM_GET_REGS"));
  if (ioctl(vcpu_fd_, KVM_GET_SREGS, &sregs) < 0) return Status::error(errno_text("KVM_GET_SREGS"));
  if (ioctl(vcpu_fd_, KVM_GET_FPU, &fpu) < 0) return Status::error(errno_text("KVM_GET_FPU"));
  w.pod(regs);
  w.pod(sregs);
  w.pod(fpu);
  // The XSAVE image too, restored last: on this host KVM_GET_FPU reports
  // MXCSR as 0, so the legacy FPU record alone would restore a wrong MXCSR.
  auto xsave = std::make_unique<XsaveArea>();
  bool has_xsave = ioctl(vcpu_fd_, kKvmGetXsave, xsave.get()) == 0;
  w.u32(has_xsave);
  if (has_xsave) w.pod(*xsave);
  // Each MSR on its own: this KVM refuses some (see vm_setup.cc); only the
  // ones it holds are saved.
  std::vector<std::pair<uint32_t, uint64_t>> saved;
  for (uint32_t index : kSavedMsrs) {
    KvmMsrList<1> m;
    m.entries[0].index = index;
    if (ioctl(vcpu_fd_, kKvmGetMsrs, &m) == 1) saved.emplace_back(index, m.entries[0].data);
  }
  w.u32(static_cast<uint32_t>(saved.size()));
  for (const auto& [index, value] : saved) { w.u32(index); w.u64(value); }

  // VMM state.
  w.u64(pt_->root(0));
  w.u64(pt_->root(1));
  w.u32(pt_->current());
  w.u64(tables_.first_frame);
  w.u64(as_->brk_start());
  w.u64(as_->brk_current());
  w.u32(static_cast<uint32_t>(as_->vmas().size()));
  for (const auto& [start, v] : as_->vmas()) { w.u64(v.start); w.u64(v.end); w.u32(v.prot); w.u32(v.flags); }
  w.u64(proc_->fs_base);
  w.u64(proc_->sigmask);
  w.pod(proc_->sigactions);
  w.u64(syscalls_);
  w.u32(cpl_checked_ | (syscall_enters_cpl0_ << 1));
  w.u64(hwcap_);
  const auto& fds = proc_->fds.entries();
  uint32_t nfds = 0;
  for (const FdEntry& e : fds) nfds += e.host_fd >= 0;
  w.u32(nfds);
  for (size_t fd = 0; fd < fds.size(); ++fd) {
    const FdEntry& e = fds[fd];
    if (e.host_fd < 0) continue;
    w.u32(static_cast<uint32_t>(fd));
    w.u32(static_cast<uint32_t>(e.kind));
    w.str(e.path);
    int flags = e.open_flags;
    if (e.kind == FdKind::kPipe || e.kind == FdKind::kSocket) flags = fcntl(e.host_fd, F_GETFL);
    w.u32(static_cast<uint32_t>(flags));
    w.u32(e.cloexec);
    w.u32(static_cast<uint32_t>(e.stream));
    w.u32(static_cast<uint32_t>(e.channel));
    w.u32(static_cast<uint32_t>(e.end));
    off_t off = lseek(e.host_fd, 0, SEEK_CUR);
    w.u64(off < 0 ? 0 : static_cast<uint64_t>(off));
    std::string pending;
    if (e.kind == FdKind::kSocket || (e.kind == FdKind::kPipe && e.end == 0))
      if (Status s = peek_pending(e, &pending); !s.ok()) return s;
    w.str(pending);
  }
  w.u32(static_cast<uint32_t>(proc_->fds.channels()));

  // Guest memory: allocator, then every non-zero frame in use.
  w.u64(mem_->bump());
  w.u32(static_cast<uint32_t>(mem_->free_list().size()));
  for (uint64_t f : mem_->free_list()) w.u64(f);
  std::vector<bool> is_free(mem_->bump() / kPageSize);
  for (uint64_t f : mem_->free_list()) is_free[f / kPageSize] = true;
  static const uint8_t zero[kPageSize] = {};
  size_t count_at = out->size();
  w.u64(0);
  uint64_t pages = 0;
  for (uint64_t gpa = kPageSize; with_memory && gpa < mem_->bump(); gpa += kPageSize) {
    if (is_free[gpa / kPageSize] || std::memcmp(mem_->host(gpa), zero, kPageSize) == 0) continue;
    w.u64(gpa);
    w.bytes(mem_->host(gpa), kPageSize);
    ++pages;
  }
  std::memcpy(out->data() + count_at, &pages, 8);
  w.bytes(kStateEndMagic, 8);
  return Status();
}

Status Vm::restore(const VmOptions& opts_in, std::span<const uint8_t> state, std::unique_ptr<Vm>* out) {
  ByteReader r(state);
  char magic[8];
  if (!r.bytes(magic, 8, "magic") || std::memcmp(magic, kStateMagic, 8) != 0)
    return Status::error("not a vmha VM state (no VMHASTAT magic at byte 0)");
  uint32_t version = r.u32("version");
  if (version != kStateVersion)
    return Status::error("VM state version " + std::to_string(version) + " is not supported (this vmha reads version " +
                         std::to_string(kStateVersion) + ")");
  VmOptions opts = opts_in;
  opts.memory_bytes = r.u64("memory size");
  if (!r.ok()) return Status::error("VM state " + r.error());
  if (opts.memory_bytes % (2u << 20)) return Status::error("VM state: memory size " + std::to_string(opts.memory_bytes) + " is not a multiple of 2 MiB");
  if (Status s = check_memory_mib(opts.memory_bytes >> 20); !s.ok()) return Status::error("VM state: " + s.message());

  kvm_regs regs;
  kvm_sregs sregs;
  kvm_fpu fpu;
  r.pod(&regs, "general registers");
  r.pod(&sregs, "segment and control registers");
  r.pod(&fpu, "FPU/SSE registers");
  auto xsave = std::make_unique<XsaveArea>();
  bool has_xsave = r.u32("XSAVE flag");
  if (has_xsave) r.pod(xsave.get(), "XSAVE image");
  uint32_t nmsrs = r.u32("MSR count");
  if (nmsrs > 64) r.fail("MSR count", "at most 64");
  std::vector<std::pair<uint32_t, uint64_t>> msrs;
  for (uint32_t i = 0; i < nmsrs && r.ok(); ++i) {
    uint32_t idx = r.u32("MSR index");
    msrs.emplace_back(idx, r.u64("MSR value"));
  }

  std::unique_ptr<Vm> vm(new Vm());
  if (!r.ok()) return Status::error("VM state " + r.error());
  if (Status s = vm->open_kvm(opts); !s.ok()) return s;
  uint64_t size = vm->mem_->size();
  auto frame_ok = [&](uint64_t gpa) { return gpa && gpa % kPageSize == 0 && gpa < size; };

  uint64_t root0 = r.u64("page-table root"), root1 = r.u64("page-table root");
  uint32_t cur = r.u32("current root");
  vm->tables_.first_frame = r.u64("kernel frames");
  if (r.ok() && (!frame_ok(root0) || !frame_ok(root1) || cur > 1 || !frame_ok(vm->tables_.first_frame)))
    r.fail("page-table roots", "page-aligned frames inside guest memory");
  vm->pt_->set_roots(root0, root1, static_cast<int>(cur));
  uint64_t brk_start = r.u64("brk start"), brk_cur = r.u64("brk");
  vm->as_->set_brk(brk_start, brk_cur);
  uint32_t nvmas = r.u32("mapping count");
  if (nvmas > (1u << 20)) r.fail("mapping count", "at most 1048576");
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
  vm->as_->set_vmas(std::move(vmas));
  Process& p = *vm->proc_;
  p.fs_base = r.u64("FS base");
  p.sigmask = r.u64("signal mask");
  r.pod(&p.sigactions, "signal actions");
  vm->syscalls_ = r.u64("system call count");
  uint32_t cpl = r.u32("syscall CPL");
  vm->cpl_checked_ = cpl & 1;
  vm->syscall_enters_cpl0_ = cpl & 2;
  vm->hwcap_ = r.u64("hwcap");

  // File descriptors: reopen files by path, recreate pipes and socketpairs
  // per channel with the bytes that were in flight.
  uint32_t nfds = r.u32("fd count");
  if (nfds > FdTable::kMaxFds) r.fail("fd count", "at most 1024");
  struct Pair { int host[2] = {-1, -1}; bool filled[2] = {false, false}; FdKind kind; };
  std::map<int, Pair> pairs;
  std::string problem;
  for (uint32_t i = 0; i < nfds && r.ok(); ++i) {
    int fd = static_cast<int>(r.u32("fd"));
    FdEntry e;
    e.kind = static_cast<FdKind>(r.u32("fd kind"));
    e.path = r.str("fd path");
    e.open_flags = static_cast<int>(r.u32("fd flags"));
    e.cloexec = r.u32("fd cloexec");
    e.stream = static_cast<int>(r.u32("fd stream"));
    e.channel = static_cast<int>(r.u32("fd channel"));
    e.end = static_cast<int>(r.u32("fd end"));
    uint64_t offset = r.u64("fd offset");
    std::string pending = r.str("fd pending data");
    if (!r.ok()) break;
    if (fd < 0 || fd >= FdTable::kMaxFds || e.end < 0 || e.end > 1) { r.fail("fd", "a descriptor below 1024"); break; }
    switch (e.kind) {
      case FdKind::kStdStream:
        if (e.stream < 0 || e.stream > 2) { r.fail("fd stream", "0, 1 or 2"); break; }
        e.host_fd = fcntl(opts.std_fds[e.stream], F_DUPFD_CLOEXEC, 0);
        break;
      case FdKind::kFile:
        e.host_fd = p.root.open_beneath(p.root.root_fd(), e.path, e.open_flags & ~(O_CREAT | O_TRUNC | O_EXCL), 0);
        if (e.host_fd < 0) problem = "cannot reopen guest fd " + std::to_string(fd) + " (" + e.path + "): " + std::strerror(-e.host_fd);
        else lseek(e.host_fd, static_cast<off_t>(offset), SEEK_SET);
        break;
      case FdKind::kDevice:
        e.host_fd = open(e.path.c_str(), (e.open_flags & O_ACCMODE) | O_CLOEXEC);
        break;
      case FdKind::kPipe:
      case FdKind::kSocket: {
        Pair& pr = pairs[e.channel];
        if (pr.host[0] < 0) {
          int rc = e.kind == FdKind::kPipe ? pipe2(pr.host, O_CLOEXEC)
                                           : socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pr.host);
          if (rc < 0) { problem = errno_text("recreating a guest pipe"); break; }
          pr.kind = e.kind;
        }
        e.host_fd = fcntl(pr.host[e.end], F_DUPFD_CLOEXEC, 0);
        fcntl(e.host_fd, F_SETFL, e.open_flags);
        if (!pr.filled[e.end] && !pending.empty()) {
          int into = e.kind == FdKind::kPipe ? pr.host[1] : pr.host[1 - e.end];
          if (write(into, pending.data(), pending.size()) != static_cast<ssize_t>(pending.size()))
            problem = "cannot refill a guest pipe";
        }
        pr.filled[e.end] = true;
        break;
      }
      default:
        r.fail("fd kind", "0..4");
    }
    if (!problem.empty()) break;
    if (e.host_fd >= 0) p.fds.install_at(fd, e);
  }
  for (auto& [ch, pr] : pairs) { close(pr.host[0]); close(pr.host[1]); }
  if (!problem.empty()) return Status::error("restore: " + problem);
  p.fds.set_next_channel(static_cast<int>(r.u32("channel count")));

  uint64_t bump = r.u64("allocator bump");
  uint32_t nfree = r.u32("free frame count");
  if (r.ok() && (bump > size || bump % kPageSize || nfree > bump / kPageSize)) r.fail("allocator", "a state inside guest memory");
  std::vector<uint64_t> free_list;
  for (uint32_t i = 0; i < nfree && r.ok(); ++i) {
    uint64_t f = r.u64("free frame");
    if (r.ok() && !frame_ok(f)) r.fail("free frame", "a frame inside guest memory");
    free_list.push_back(f);
  }
  vm->mem_->set_allocator(bump, std::move(free_list));
  uint64_t pages = r.u64("frame count");
  if (r.ok() && pages > size / kPageSize) r.fail("frame count", "at most the guest's frames");
  for (uint64_t i = 0; i < pages && r.ok(); ++i) {
    uint64_t gpa = r.u64("frame address");
    const uint8_t* data = r.view(kPageSize, "frame bytes");
    if (!r.ok()) break;
    if (!frame_ok(gpa) || gpa >= bump) { r.fail("frame address", "an allocated frame"); break; }
    vm->mem_->write(gpa, data, kPageSize);
  }
  char end[8];
  if (r.bytes(end, 8, "end marker") && std::memcmp(end, kStateEndMagic, 8) != 0) r.fail("end marker", "VMHAEND!");
  if (r.ok() && !r.at_end()) r.fail("end", "nothing after the end marker");
  if (!r.ok()) return Status::error("VM state " + r.error());

  if (ioctl(vm->vcpu_fd_, KVM_SET_SREGS, &sregs) < 0) return Status::error(errno_text("KVM_SET_SREGS"));
  if (ioctl(vm->vcpu_fd_, KVM_SET_REGS, &regs) < 0) return Status::error(errno_text("KVM_SET_REGS"));
  if (ioctl(vm->vcpu_fd_, KVM_SET_FPU, &fpu) < 0) return Status::error(errno_text("KVM_SET_FPU"));
  if (has_xsave && ioctl(vm->vcpu_fd_, kKvmSetXsave, xsave.get()) < 0) return Status::error(errno_text("KVM_SET_XSAVE"));
  for (const auto& m : msrs) (void)vm->set_msrs({&m, 1});  // as at start: some may be refused
  *out = std::move(vm);
  return Status();
}

}  // namespace vmha
