#include "vmha/sys/socket_addr.h"

#include <sys/stat.h>
#include <sys/un.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <functional>

namespace vmha {

namespace {
constexpr size_t kPathAt = offsetof(sockaddr_un, sun_path);
}

int read_socket_name(Process& p, uint64_t va, uint64_t len, SocketName* out) {
  if (len <= kPathAt || len > sizeof(sockaddr_un)) return -EINVAL;
  sockaddr_un sa{};
  if (!p.as->copy_in(&sa, va, len)) return -EFAULT;
  if (sa.sun_family != AF_UNIX) return -EINVAL;
  const size_t n = len - kPathAt;
  if (sa.sun_path[0] == '\0') {
    out->abstract = true;
    out->key = out->path = "@" + std::string(sa.sun_path + 1, n - 1);  // as ss(8) shows it
    return 0;
  }
  out->path.assign(sa.sun_path, strnlen(sa.sun_path, n));
  out->resolved = resolve_guest_path(p, out->path, true, &out->where);
  if (out->resolved == 0) out->key = out->where.recorded;
  return 0;
}

socklen_t socket_address(const std::string& key, sockaddr_storage* out) {
  *out = {};
  auto* sa = reinterpret_cast<sockaddr_un*>(out);
  sa->sun_family = AF_UNIX;
  if (key.empty()) return sizeof(sa_family_t);
  const size_t n = std::min(key.size(), sizeof sa->sun_path - 1);
  if (key[0] == '@') {
    std::memcpy(sa->sun_path + 1, key.data() + 1, n - 1);  // abstract: no terminating NUL
    return static_cast<socklen_t>(kPathAt + n);
  }
  std::memcpy(sa->sun_path, key.data(), n);
  return static_cast<socklen_t>(kPathAt + n + 1);
}

int64_t refuse_outside(Process& p, const SocketName& n, const char* call) {
  if (!n.abstract) {
    // vmha runs as the job's user: this tells the guest no more than its user may know.
    const std::string host = n.path[0] == '/' ? n.path : p.root.root_path() + "/" + n.path;
    struct stat st;
    if (stat(host.c_str(), &st) != 0) return -errno;
    if (!S_ISSOCK(st.st_mode)) return -ECONNREFUSED;  // Linux's answer for a file that is no socket
  }
  constexpr uint64_t kServiceKey = uint64_t{1} << 41;  // log_once keys beside system call numbers
  p.log_once(kServiceKey | (std::hash<std::string>{}(n.path) & 0xffffffffu),
             std::string(call) + " to " + n.path +
                 " refused: a protected job cannot use a service outside its VM (a backup could not replay its "
                 "replies): returning ECONNREFUSED to the guest");
  return -ECONNREFUSED;
}

bool give_address(Process& p, uint64_t addr_va, uint64_t len_va, const sockaddr_storage& from, socklen_t got) {
  if (!addr_va || !len_va) return true;
  socklen_t room = 0;
  if (!p.as->copy_in(&room, len_va, sizeof room)) return false;
  return p.as->copy_out(addr_va, &from, std::min(room, got)) && p.as->copy_out(len_va, &got, sizeof got);
}

}  // namespace vmha
