// epoll: a host epoll instance per guest one, watching the host descriptors
// behind the guest's; the events come back with the guest's own data, so
// nothing is translated on the way out. What each instance watches is kept
// by vmha too (epoll_sets.h) for checkpoints. A wait behaves as poll's does
// (guest_io.h: wait_for_ready): it gives the vCPU up while another guest
// thread or process could run, and restarts after an epoch pause with what
// is left of its timeout. epoll_pwait's mask is in force while it waits, as
// pselect6's is.
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <vector>

#include "vmha/output/output_sink.h"
#include "vmha/sys/guest_io.h"
#include "vmha/sys/syscall_table.h"
#include "vmha/sys/threads.h"

namespace vmha {

namespace {

constexpr int kMaxEvents = 1024;  // per wait; Linux allows more, a guest gets the rest next time

int64_t create(Process& p, int flags) {
  if (flags & ~EPOLL_CLOEXEC) return -EINVAL;
  FdEntry e;
  e.kind = FdKind::kEpoll;
  e.host_fd = epoll_create1(EPOLL_CLOEXEC);
  if (e.host_fd < 0) return -errno;
  e.cloexec = flags & EPOLL_CLOEXEC;
  e.channel = p.fds.next_channel();  // how its interest list and a restore know it
  int g = p.fds.install(e);
  if (g < 0) close(e.host_fd);
  return g;
}
int64_t sys_epoll_create(Process& p, const SyscallArgs& a) {
  return static_cast<int>(a.a[0]) <= 0 ? -EINVAL : create(p, 0);
}
int64_t sys_epoll_create1(Process& p, const SyscallArgs& a) { return create(p, static_cast<int>(a.a[0])); }

int64_t sys_epoll_ctl(Process& p, const SyscallArgs& a) {
  const int epfd = static_cast<int>(a.a[0]), op = static_cast<int>(a.a[1]), fd = static_cast<int>(a.a[2]);
  FdEntry* ep = p.fds.get(epfd);
  FdEntry* target = p.fds.get(fd);
  if (!ep || !target) return -EBADF;
  if (ep->kind != FdKind::kEpoll || epfd == fd) return -EINVAL;
  // An epoll inside an epoll would need its own interest list restored first.
  if (target->kind == FdKind::kEpoll) return -EINVAL;
  epoll_event ev{};
  if (op != EPOLL_CTL_DEL && !p.as->copy_in(&ev, a.a[3], sizeof ev)) return -EFAULT;
  if (epoll_ctl(ep->host_fd, op, target->host_fd, &ev) < 0) return -errno;
  if (op == EPOLL_CTL_DEL)
    p.fds.epolls().erase(ep->channel, &p.fds, fd);
  else
    p.fds.epolls().set(ep->channel, &p.fds, fd, ev);
  return 0;
}

// epoll_wait, epoll_pwait and epoll_pwait2: timeout_ns -1 for none; mask
// (nullptr: none) in force while it waits.
int64_t wait(Process& p, const SyscallArgs& a, int64_t timeout_ns, const uint64_t* mask) {
  FdEntry* ep = p.fds.get(static_cast<int>(a.a[0]));
  if (!ep) return -EBADF;
  if (ep->kind != FdKind::kEpoll) return -EINVAL;
  const int max = static_cast<int>(a.a[2]);
  if (max <= 0) return -EINVAL;
  std::vector<epoll_event> events(static_cast<size_t>(std::min(max, kMaxEvents)));
  const uint64_t before = p.sigmask;
  if (mask)
    if (int64_t r = apply_wait_mask(p, *mask); r < 0) return r;
  const int host = ep->host_fd;
  const int64_t r = wait_for_ready(
      p, timeout_ns, [&](int ms) { return epoll_wait(host, events.data(), static_cast<int>(events.size()), ms); });
  p.sigmask = before;  // before the call again, if it runs again
  if (r <= 0) return r;
  return p.as->copy_out(a.a[1], events.data(), static_cast<uint64_t>(r) * sizeof(epoll_event)) ? r : -EFAULT;
}

int64_t sys_epoll_wait(Process& p, const SyscallArgs& a) {
  const int ms = static_cast<int>(a.a[3]);
  return wait(p, a, ms < 0 ? -1 : ms * 1000000LL, nullptr);
}

// The mask of epoll_pwait/epoll_pwait2 at `va` (size must be 8), or nullptr.
int read_mask(Process& p, uint64_t va, uint64_t size, uint64_t* mask, const uint64_t** out) {
  *out = nullptr;
  if (!va) return 0;
  if (size != sizeof *mask) return -EINVAL;
  if (!p.as->copy_in(mask, va, sizeof *mask)) return -EFAULT;
  *out = mask;
  return 0;
}

int64_t sys_epoll_pwait(Process& p, const SyscallArgs& a) {
  uint64_t mask;
  const uint64_t* m;
  if (int rc = read_mask(p, a.a[4], a.a[5], &mask, &m)) return rc;
  const int ms = static_cast<int>(a.a[3]);
  return wait(p, a, ms < 0 ? -1 : ms * 1000000LL, m);
}

int64_t sys_epoll_pwait2(Process& p, const SyscallArgs& a) {
  uint64_t mask;
  const uint64_t* m;
  if (int rc = read_mask(p, a.a[4], a.a[5], &mask, &m)) return rc;
  int64_t timeout_ns = -1;
  if (a.a[3]) {
    timespec ts;
    if (!p.as->copy_in(&ts, a.a[3], sizeof ts)) return -EFAULT;
    if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000) return -EINVAL;
    timeout_ns = std::min<int64_t>(ts.tv_sec, INT64_MAX / 1000000000 - 1) * 1000000000 + ts.tv_nsec;
  }
  return wait(p, a, timeout_ns, m);
}

const SyscallDef kDefs[] = {
    {SYS_epoll_create, "epoll_create", sys_epoll_create}, {SYS_epoll_create1, "epoll_create1", sys_epoll_create1},
    {SYS_epoll_ctl, "epoll_ctl", sys_epoll_ctl},          {SYS_epoll_wait, "epoll_wait", sys_epoll_wait},
    {SYS_epoll_pwait, "epoll_pwait", sys_epoll_pwait},    {SYS_epoll_pwait2, "epoll_pwait2", sys_epoll_pwait2},
};

}  // namespace

std::span<const SyscallDef> epoll_syscalls() { return kDefs; }

}  // namespace vmha
