// AF_UNIX addresses as the guest passes them (struct sockaddr_un in its
// memory) and gets them back, for the socket system calls.
#pragma once
#include <sys/socket.h>

#include <cstdint>
#include <string>

#include "vmha/sys/guest_paths.h"
#include "vmha/sys/process.h"

namespace vmha {

// The name a guest sockaddr_un gives: `key` is a path as the policy records
// it (empty when it lies outside the policy; `where`: how it resolved) or
// "@..." for the abstract namespace; `path` the path as given.
struct SocketName {
  std::string key, path;
  bool abstract = false;
  Resolved where;
  int resolved = 0;  // 0 or resolve_guest_path's -errno
};

// -EINVAL for a length or family that is no AF_UNIX name, -EFAULT.
int read_socket_name(Process& p, uint64_t va, uint64_t len, SocketName* out);

// A name that no socket of the guest's is bound to: where nothing listens,
// the error a native connect gets (ENOENT, ECONNREFUSED for a file that is
// no socket), silently; a service that listens outside the VM is refused
// (ECONNREFUSED), reported once under `call`'s name.
int64_t refuse_outside(Process& p, const SocketName& n, const char* call);

// The sockaddr_un of a name as read_socket_name keys it ("" : unnamed) and its length.
socklen_t socket_address(const std::string& key, sockaddr_storage* out);

// Copies an address to a guest (addr, addrlen) pair, truncated to the room
// *addrlen says, and the full length into *addrlen. Nothing when addr_va is 0.
bool give_address(Process& p, uint64_t addr_va, uint64_t len_va, const sockaddr_storage& from, socklen_t got);

}  // namespace vmha
