// Socket addresses as the guest passes them (struct sockaddr_un, _in or
// _in6 in its memory) and gets them back, for the socket system calls.
#pragma once
#include <sys/socket.h>

#include <cstdint>
#include <string>

#include "vmha/sys/guest_paths.h"
#include "vmha/sys/process.h"

namespace vmha {

// The name a guest address gives (sys/unix_names.h says how names look):
// for AF_UNIX `key` is the name ("" when the path lies outside the policy;
// `where`: how it resolved), `path` the path as given; for TCP `key` is
// "tcp:PORT/ADDRESS", `path` "ADDRESS:PORT", `local` whether ADDRESS is a
// loopback or any address (the guest's own processes are there).
struct SocketName {
  std::string key, path;
  bool abstract = false;
  bool inet = false, local = false;
  int port = 0;
  Resolved where;
  int resolved = 0;  // 0 or resolve_guest_path's -errno
};

// An address of `family` (the socket's): -EINVAL for a length or family
// that is none of its names, -EAFNOSUPPORT for another family, -EFAULT.
int read_socket_name(Process& p, uint64_t va, uint64_t len, int family, SocketName* out);

// A name that no socket of the guest's is bound to: where nothing listens,
// the error a native connect gets (ENOENT, ECONNREFUSED for a file that is
// no socket), silently; a service that listens outside the VM, or a TCP
// address (the network is not carried), is refused (ECONNREFUSED), reported
// once under `call`'s name.
int64_t refuse_outside(Process& p, const SocketName& n, const char* call);

// The address of a name of `family` ("": unnamed, for TCP the loopback
// address and port 0) and its length.
socklen_t socket_address(const std::string& name, int family, sockaddr_storage* out);

// Copies an address to a guest (addr, addrlen) pair, truncated to the room
// *addrlen says, and the full length into *addrlen. Nothing when addr_va is 0.
bool give_address(Process& p, uint64_t addr_va, uint64_t len_va, const sockaddr_storage& from, socklen_t got);

}  // namespace vmha
