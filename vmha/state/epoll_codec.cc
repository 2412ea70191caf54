// What a guest epoll instance watches, for the fd table section
// (fd_codec.cc): each watched descriptor with its events and data, 16 bytes
// (descriptor, events, data), carried as the epoll record's pending bytes.
// A restore makes the host instance with the record and watches again once
// the whole table is open (a watched descriptor may come after it).
#include <sys/epoll.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "vmha/state/vm_state_codec.h"

namespace vmha {

void encode_epoll_interest(const EpollSets::Interest& interest, std::string* out) {
  out->clear();
  for (const auto& [fd, ev] : interest) {
    uint32_t head[2] = {static_cast<uint32_t>(fd), ev.events};
    uint64_t data = ev.data.u64;
    out->append(reinterpret_cast<const char*>(head), sizeof head);
    out->append(reinterpret_cast<const char*>(&data), sizeof data);
  }
}

std::string rewatch_epoll(ByteReader& r, Process& p, int epfd, const std::string& saved) {
  constexpr size_t kRecord = 16;
  FdEntry* ep = p.fds.get(epfd);
  if (!ep || ep->kind != FdKind::kEpoll || saved.size() % kRecord) {
    r.fail("epoll interest", "16 bytes per watched descriptor");
    return "";
  }
  for (size_t at = 0; at < saved.size(); at += kRecord) {
    uint32_t head[2];
    epoll_event ev{};
    std::memcpy(head, saved.data() + at, sizeof head);
    std::memcpy(&ev.data.u64, saved.data() + at + sizeof head, sizeof ev.data.u64);
    ev.events = head[1];
    const int fd = static_cast<int>(head[0]);
    const FdEntry* target = p.fds.get(fd);
    if (!target || target->kind == FdKind::kEpoll) {
      r.fail("epoll interest", "a descriptor the process has open");
      return "";
    }
    if (epoll_ctl(ep->host_fd, EPOLL_CTL_ADD, target->host_fd, &ev) < 0 && errno != EEXIST)
      return "cannot watch guest fd " + std::to_string(fd) + " again: " + std::strerror(errno);
    p.fds.epolls().set(ep->channel, &p.fds, fd, ev);
  }
  return "";
}

}  // namespace vmha
