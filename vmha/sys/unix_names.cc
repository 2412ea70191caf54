#include "vmha/sys/unix_names.h"

#include "vmha/sys/fd_table.h"

#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace vmha {

UnixNames::~UnixNames() {
  for (auto& [ch, l] : listeners_) {
    for (PendingConnection& c : l.queue) close(c.host_fd);
    close(l.ready_fd);
  }
}

int UnixNames::bound(const std::string& name) const {
  auto it = names_.find(name_key(name));
  return it == names_.end() ? -1 : it->second;
}

int UnixNames::listen(int channel, const std::string& name, const std::string& prefix, int backlog) {
  UnixListener& l = listeners_[channel];
  if (l.ready_fd < 0) {
    l.ready_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (l.ready_fd < 0) {
      int err = errno;
      listeners_.erase(channel);
      return -err;
    }
    l.type = socket_type_from_name(prefix);
    l.prefix = prefix;
    l.name = name;
  }
  l.backlog = backlog < 0 ? 0 : backlog;
  return l.ready_fd;
}

UnixListener* UnixNames::listener(int channel) {
  auto it = listeners_.find(channel);
  return it == listeners_.end() ? nullptr : &it->second;
}

int UnixNames::connect(UnixListener& l, int channel_for_pair, int* connector_fd) {
  // Linux queues one connection more than the backlog.
  if (l.queue.size() > static_cast<size_t>(l.backlog)) return -EAGAIN;
  int sv[2];
  if (socketpair(AF_UNIX, l.type | SOCK_CLOEXEC, 0, sv) < 0) return -errno;
  l.queue.push_back({sv[1], channel_for_pair});
  set_ready(l);
  *connector_fd = sv[0];
  return 0;
}

PendingConnection UnixNames::accept(UnixListener& l) {
  if (l.queue.empty()) return {};
  PendingConnection c = l.queue.front();
  l.queue.pop_front();
  set_ready(l);
  return c;
}

void UnixNames::requeue(UnixListener& l, PendingConnection c) {
  l.queue.push_back(c);
  set_ready(l);
}

void UnixNames::set_ready(UnixListener& l) {
  // The counter drained (EAGAIN when it was 0), then 1 while connections wait.
  uint64_t v;
  ssize_t r = read(l.ready_fd, &v, sizeof v);
  v = 1;
  if (!l.queue.empty()) r = write(l.ready_fd, &v, sizeof v);
  (void)r;
}

int UnixNames::free_port() {
  constexpr int kFirst = 32768, kLast = 60999;
  for (int tries = 0; tries <= kLast - kFirst; ++tries) {
    const int port = next_port_;
    next_port_ = port == kLast ? kFirst : port + 1;
    if (!listener(bound("tcp:" + std::to_string(port)))) return port;
  }
  return 0;
}

void UnixNames::acquire(int channel) {
  if (UnixListener* l = listener(channel)) ++l->refs;
}

void UnixNames::release(int channel) {
  UnixListener* l = listener(channel);
  if (!l || --l->refs > 0) return;
  for (PendingConnection& c : l->queue) close(c.host_fd);
  close(l->ready_fd);
  auto it = names_.find(name_key(l->name));
  if (it != names_.end() && it->second == channel) names_.erase(it);
  listeners_.erase(channel);
}

}  // namespace vmha
