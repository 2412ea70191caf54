#include "vmha/sys/socket_addr.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "vmha/sys/guest_paths.h"

namespace vmha {

namespace {
constexpr size_t kPathAt = offsetof(sockaddr_un, sun_path);

// A TCP address: "tcp:PORT/ADDRESS".
int read_inet_name(Process& p, uint64_t va, uint64_t len, int family, SocketName* out) {
  sockaddr_storage ss{};
  const size_t need = family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
  if (len < need || len > sizeof ss) return -EINVAL;
  if (!p.as->copy_in(&ss, va, need)) return -EFAULT;
  char text[INET6_ADDRSTRLEN] = "";
  if (ss.ss_family == AF_INET && family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    out->port = ntohs(in->sin_port);
    const uint32_t a = ntohl(in->sin_addr.s_addr);
    out->local = a == INADDR_ANY || (a >> 24) == 127;
  } else if (ss.ss_family == AF_INET6 && family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
    out->port = ntohs(in6->sin6_port);
    const in6_addr& a = in6->sin6_addr;
    out->local = IN6_IS_ADDR_UNSPECIFIED(&a) || IN6_IS_ADDR_LOOPBACK(&a) ||
                 (IN6_IS_ADDR_V4MAPPED(&a) && (a.s6_addr[12] == 127 || (a.s6_addr32[3] == 0)));
  } else {
    return ss.ss_family == AF_UNIX ? -EINVAL : -EAFNOSUPPORT;
  }
  out->inet = true;
  out->path =
      (family == AF_INET6 ? "[" + std::string(text) + "]" : std::string(text)) + ":" + std::to_string(out->port);
  out->key = "tcp:" + std::to_string(out->port) + "/" + text;
  return 0;
}

}  // namespace

int read_socket_name(Process& p, uint64_t va, uint64_t len, int family, SocketName* out) {
  if (family != AF_UNIX) return read_inet_name(p, va, len, family, out);
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
  if (out->resolved == 0) out->key = (out->where.recorded[0] == '/' ? "" : "./") + out->where.recorded;
  return 0;
}

socklen_t socket_address(const std::string& name, int family, sockaddr_storage* out) {
  *out = {};
  if (family == AF_INET || family == AF_INET6) {
    int port = 0;
    std::string text = family == AF_INET ? "127.0.0.1" : "::1";
    if (name.compare(0, 4, "tcp:") == 0) {
      const size_t slash = name.find('/');
      port = std::atoi(name.c_str() + 4);
      if (slash != std::string::npos) text = name.substr(slash + 1);
    }
    if (family == AF_INET) {
      auto* in = reinterpret_cast<sockaddr_in*>(out);
      in->sin_family = AF_INET;
      in->sin_port = htons(static_cast<uint16_t>(port));
      inet_pton(AF_INET, text.c_str(), &in->sin_addr);
      return sizeof *in;
    }
    auto* in6 = reinterpret_cast<sockaddr_in6*>(out);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET6, text.c_str(), &in6->sin6_addr);
    return sizeof *in6;
  }
  auto* sa = reinterpret_cast<sockaddr_un*>(out);
  sa->sun_family = AF_UNIX;
  if (name.empty()) return sizeof(sa_family_t);
  const bool abstract = name[0] == '@';
  const std::string key = name.compare(0, 2, "./") == 0 ? name.substr(2) : name;
  const size_t n = std::min(key.size(), sizeof sa->sun_path - 1);
  if (abstract) {
    std::memcpy(sa->sun_path + 1, key.data() + 1, n - 1);  // abstract: no terminating NUL
    return static_cast<socklen_t>(kPathAt + n);
  }
  std::memcpy(sa->sun_path, key.data(), n);
  return static_cast<socklen_t>(kPathAt + n + 1);
}

int64_t refuse_outside(Process& p, const SocketName& n, const char* call) {
  constexpr uint64_t kServiceKey = uint64_t{1} << 41;  // log_once keys beside system call numbers
  if (n.inet) {
    p.log_once(kServiceKey | (std::hash<std::string>{}(n.path) & 0xffffffffu),
               std::string(call) + " to " + n.path + " refused: " +
                   (n.local ? "no process of the job listens there (the host's own services are outside the VM)"
                            : "network from the guest is not supported, only connections between the job's own "
                              "processes") +
                   ": returning ECONNREFUSED to the guest");
    return -ECONNREFUSED;
  }
  if (!n.abstract) {
    // Through the policy, as stat would look: outside it EACCES whether or
    // not something is there (the guest learns nothing of the host's
    // files); inside it what Linux answers.
    Resolved r;
    // Quietly: glibc looks for nscd's socket at every user lookup.
    if (int e = resolve_guest_path(p, n.path, true, &r)) return e;
    int fd = p.root.open_beneath(r.dir, r.rel, O_PATH, 0);
    if (fd < 0) return fd;
    struct stat st;
    const int rc = fstat(fd, &st);
    close(fd);
    if (rc != 0 || !S_ISSOCK(st.st_mode)) return -ECONNREFUSED;  // Linux's answer for a file that is no socket
  }
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

