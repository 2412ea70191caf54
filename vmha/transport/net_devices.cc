#include "vmha/transport/net_devices.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

namespace vmha {
namespace {

Result<in_addr> resolve_host(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || res == nullptr) return Status::error("cannot resolve host '" + host + "': " + ::gai_strerror(rc));
  in_addr a = reinterpret_cast<const sockaddr_in*>(res->ai_addr)->sin_addr;
  ::freeaddrinfo(res);
  return a;
}

// The interface holding local address `a`; empty if none does.
std::string interface_with(in_addr a) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return "";
  std::string name;
  for (ifaddrs* i = list; i != nullptr && name.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    if (reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr == a.s_addr) name = i->ifa_name;
  }
  ::freeifaddrs(list);
  return name;
}

// The source address the kernel picks to reach `a` (a UDP connect sends nothing).
Result<in_addr> source_address_for(in_addr a) {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr = a;
  to.sin_port = htons(9);
  sockaddr_in from{};
  socklen_t len = sizeof from;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&from), &len) != 0) {
    int e = errno;
    ::close(fd);
    char text[INET_ADDRSTRLEN] = "?";
    ::inet_ntop(AF_INET, &a, text, sizeof text);
    return Status::error(std::string("no route to ") + text + ": " + std::strerror(e));
  }
  ::close(fd);
  return from.sin_addr;
}

}  // namespace

Result<std::string> interface_for_address(const std::string& address) {
  std::string host = address;
  if (auto colon = address.rfind(':'); colon != std::string::npos) host = address.substr(0, colon);
  auto a = resolve_host(host);
  if (!a.ok()) return a.status().context("address '" + address + "': ");
  if (a.value().s_addr == htonl(INADDR_ANY)) return std::string();
  std::string name = interface_with(a.value());
  if (!name.empty()) return name;
  auto src = source_address_for(a.value());
  if (!src.ok()) return src.status().context("address '" + address + "': ");
  name = interface_with(src.value());
  if (name.empty())
    return Status::error("address '" + address +
                         "': no local interface holds the source address the kernel chose for it");
  return name;
}

std::string ucx_net_devices(const std::string& interface, const std::string& sysfs) {
  std::vector<std::string> devices{interface};
  std::vector<std::string> rdma;
  try {
    std::error_code ec;
    for (const auto& dev : std::filesystem::directory_iterator(sysfs + "/class/infiniband", ec)) {
      std::error_code ec2;
      for (const auto& port : std::filesystem::directory_iterator(dev.path() / "ports", ec2))
        rdma.push_back(dev.path().filename().string() + ":" + port.path().filename().string());
    }
  } catch (const std::filesystem::filesystem_error&) {
    // A device vanished while we listed them: keep what we found.
  }
  std::sort(rdma.begin(), rdma.end());
  devices.insert(devices.end(), rdma.begin(), rdma.end());
  std::string out;
  for (const auto& d : devices) out += (out.empty() ? "" : ",") + d;
  return out;
}

}  // namespace vmha
