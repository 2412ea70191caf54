#include "vmha/sys/guest_io.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <utility>

#include "vmha/common/iov_io.h"
#include "vmha/sys/process_tree.h"
#include "vmha/sys/signal_kick.h"
#include "vmha/sys/signal_state.h"

namespace vmha {

bool gather_guest_iovec(Process& p, uint64_t iov_va, uint64_t count, bool write, std::vector<iovec>& out) {
  out.clear();
  if (count > 1024) return false;
  std::vector<iovec> guest(count), piece;
  if (count && !p.as->copy_in(guest.data(), iov_va, count * sizeof(iovec))) return false;
  for (const iovec& g : guest) {
    if (!g.iov_len) continue;
    if (!p.as->gather(reinterpret_cast<uint64_t>(g.iov_base), g.iov_len, write, piece)) return false;
    out.insert(out.end(), piece.begin(), piece.end());
  }
  return true;
}

bool would_yield(Process& p, const FdEntry& e, short events) {
  if (e.kind != FdKind::kPipe && !is_guest_socket(e.kind) && e.kind != FdKind::kStdStream) return false;
  if (!p.tree || !p.tree->others_runnable(p)) return false;
  pollfd pfd{e.host_fd, events, 0};
  return poll(&pfd, 1, 0) == 0;
}

int64_t apply_wait_mask(Process& p, uint64_t mask) {
  const uint64_t before = p.sigmask;
  p.sigmask = mask & ~kUnblockable;
  collect_signals(p.signals);
  if (p.signals.deliverable(p.sigmask, p.sigactions)) {
    if (!p.signals.saved_mask) p.signals.saved_mask = before;
    return -EINTR;
  }
  return 0;
}

int64_t wait_for_ready(Process& p, int64_t timeout_ns, const std::function<int(int)>& look) {
  auto restarted = std::exchange(p.call_deadline, std::nullopt);
  timespec now{}, deadline{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  int left = -1;
  if (timeout_ns >= 0) {
    if (restarted) {
      deadline = restarted->at;
    } else {
      const int64_t at = static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec + timeout_ns;
      deadline = {at / 1000000000, at % 1000000000};
    }
    const int64_t ns = (deadline.tv_sec - now.tv_sec) * 1000000000LL + (deadline.tv_nsec - now.tv_nsec);
    left = ns <= 0 ? 0 : static_cast<int>(std::min<int64_t>((ns + 999999) / 1000000, INT32_MAX));
  }
  const bool share = left != 0 && p.tree && p.tree->others_runnable(p);
  const int r = look(share ? 0 : left);
  if ((r == 0 && share) || (r < 0 && errno == EINTR)) {
    if (timeout_ns >= 0) p.call_deadline = Process::CallDeadline{CLOCK_MONOTONIC, deadline};
    return r == 0 ? kRetryLater : kWaitForRelease;
  }
  return r < 0 ? -errno : r;
}

int64_t write_for_guest(Process& p, int fd, const std::vector<iovec>& iov, off_t offset) {
  FdEntry* e = p.fds.get(fd);
  if (!e) return -EBADF;
  // Opened for reading only (confinement.h, proc_views.h).
  if (e->kind == FdKind::kReadOnly || e->kind == FdKind::kProcFds) return -EBADF;
  if (e->kind == FdKind::kUnixListener) return -ENOTCONN;  // its host fd is an eventfd (unix_names.h)
  if (e->kind == FdKind::kEpoll) return -EINVAL;
  ssize_t n;
  if (e->kind == FdKind::kPipe || is_guest_socket(e->kind)) {
    if (offset < 0 && p.tree && p.tree->others_runnable(p)) {
      // A full pipe whose reader is another guest process: let it run.
      pollfd pfd{e->host_fd, POLLOUT, 0};
      if (poll(&pfd, 1, 0) == 0) return kRetryLater;
    }
    n = write_pieces(e->host_fd, iov, offset);
    if (n < 0) n = -errno;
  } else {
    OutputTarget t{fd, e->host_fd, e->path};
    n = p.out->write(t, iov, offset);
  }
  if (n == -EPIPE) p.signals.raise(SIGPIPE, SI_USER);  // delivered (or ignored) after the call
  // A blocking write (a full pipe) cut by a kick wrote nothing: it runs again
  // after the pause, or fails with EINTR if a handler runs (signal_calls.h).
  if (n == -EINTR) return kWaitForRelease;
  return n;
}

}  // namespace vmha
