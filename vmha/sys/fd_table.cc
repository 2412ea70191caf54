#include "vmha/sys/fd_table.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace vmha {

std::string socket_type_name(int type) {
  switch (type) {
    case SOCK_STREAM:
      return "";
    case SOCK_DGRAM:
      return "dgram";
    case SOCK_SEQPACKET:
      return "seqpacket";
    default:
      return "type " + std::to_string(type);
  }
}

int socket_type_from_name(const std::string& path) {
  const std::string name = socket_prefix(path);
  if (name.empty() || name == "tcp4" || name == "tcp6") return SOCK_STREAM;
  if (name == "dgram") return SOCK_DGRAM;
  if (name == "seqpacket") return SOCK_SEQPACKET;
  return -1;
}

int socket_family_from_name(const std::string& path) {
  const std::string name = socket_prefix(path);
  return name == "tcp4" ? AF_INET : name == "tcp6" ? AF_INET6 : AF_UNIX;
}

std::string socket_prefix(const std::string& path) { return path.substr(0, path.find(':')); }

std::string socket_bound_name(const std::string& path) {
  size_t colon = path.find(':');
  return colon == std::string::npos ? "" : path.substr(colon + 1);
}

FdTable::~FdTable() { close_all(); }

FdEntry* FdTable::get(int fd) {
  if (fd < 0 || fd >= static_cast<int>(slots_.size()) || slots_[fd].host_fd < 0) return nullptr;
  return &slots_[fd];
}

int FdTable::install(const FdEntry& e, int min_fd) {
  for (int fd = std::max(min_fd, 0); fd < kMaxFds; ++fd) {
    if (fd >= static_cast<int>(slots_.size())) slots_.resize(fd + 1);
    if (slots_[fd].host_fd < 0) {
      slots_[fd] = e;
      if (e.kind == FdKind::kUnixListener) names_->acquire(e.channel);
      return fd;
    }
  }
  return -EMFILE;
}

int FdTable::install_at(int fd, const FdEntry& e) {
  if (fd < 0 || fd >= kMaxFds) return -EBADF;
  close(fd);
  if (fd >= static_cast<int>(slots_.size())) slots_.resize(fd + 1);
  slots_[fd] = e;
  if (e.kind == FdKind::kUnixListener) names_->acquire(e.channel);
  return fd;
}

int FdTable::close(int fd) {
  FdEntry* e = get(fd);
  if (!e) return -EBADF;
  ::close(e->host_fd);
  if (e->kind == FdKind::kUnixListener) names_->release(e->channel);
  epolls_->forget(this, fd);
  *e = FdEntry{};
  return 0;
}

void FdTable::share(FdEntry& e) {
  if (reopened_alone(e.kind) && e.channel < 0) e.channel = next_channel();
}

void FdTable::fork_from(FdTable& parent) {
  close_all();
  channels_ = parent.channels_;
  names_ = parent.names_;
  epolls_ = parent.epolls_;
  slots_.resize(parent.slots_.size());
  for (size_t fd = 0; fd < parent.slots_.size(); ++fd) {
    FdEntry& e = parent.slots_[fd];
    if (e.host_fd < 0) continue;
    share(e);
    FdEntry copy = e;
    copy.host_fd = fcntl(e.host_fd, F_DUPFD_CLOEXEC, 0);
    if (copy.host_fd < 0) continue;
    slots_[fd] = copy;
    if (copy.kind == FdKind::kUnixListener) names_->acquire(copy.channel);
  }
}

void FdTable::close_on_exec() {
  for (int fd = 0; fd < static_cast<int>(slots_.size()); ++fd)
    if (slots_[fd].host_fd >= 0 && slots_[fd].cloexec) close(fd);
}

void FdTable::close_all() {
  for (int fd = 0; fd < static_cast<int>(slots_.size()); ++fd) close(fd);
  slots_.clear();
}

}  // namespace vmha
