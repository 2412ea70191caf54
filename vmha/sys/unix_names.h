// UnixNames: the AF_UNIX names and TCP ports the guest's processes bind,
// and their listening sockets, shared by every fd table of the tree. A connect to a
// guest's listener never goes through the host: vmha makes a socketpair,
// gives one end to the connecting socket and queues the other until the
// listener accepts it, so each connection is a pair of ends like a
// socketpair's (a channel, kept in checkpoints with its bytes in flight) and
// the queue is vmha's own (in checkpoints too). The listener's host
// descriptor is an eventfd, readable while connections wait: poll and
// select see it as they see a listening socket.
//
// A name is a path as the policy records it, "./" before a relative one
// (what bind gave, for getsockname: without the "./"); "@" and the rest for
// the abstract namespace; "tcp:PORT/ADDRESS" for a TCP port (one port space
// for IPv4 and IPv6, as a dual-stack host has), ADDRESS as it was bound.
#pragma once
#include <deque>
#include <map>
#include <string>

namespace vmha {

// A connection waiting in a listener's queue: the accepting side's end.
struct PendingConnection {
  int host_fd = -1;
  int channel = -1;
};

// What a name is looked up by: a TCP name without its address.
inline std::string name_key(const std::string& name) {
  return name.compare(0, 4, "tcp:") == 0 ? name.substr(0, name.find('/')) : name;
}

struct UnixListener {
  int ready_fd = -1;  // eventfd: 1 while `queue` holds a connection
  int type = 0;       // SOCK_STREAM or SOCK_SEQPACKET
  std::string prefix;  // its type as its descriptor's path records it (fd_table.h)
  int backlog = 0;
  int refs = 0;  // guest descriptors open on it
  std::string name;
  std::deque<PendingConnection> queue;
};

class UnixNames {
 public:
  UnixNames() = default;
  UnixNames(const UnixNames&) = delete;
  UnixNames& operator=(const UnixNames&) = delete;
  ~UnixNames();

  // `name` (a guest path as the policy records it, or "@..." for the
  // abstract namespace) now names the socket of `channel`.
  void bind(const std::string& name, int channel) { names_[name_key(name)] = channel; }
  // The channel `name` is bound to, or -1.
  int bound(const std::string& name) const;

  // Makes the socket of `channel` a listener (or changes its backlog): a
  // host eventfd the caller dups for the guest's descriptor, or -errno.
  int listen(int channel, const std::string& name, const std::string& prefix, int backlog);
  // A TCP port no listener holds (32768 and up, as Linux's ephemeral range), or 0.
  int free_port();
  UnixListener* listener(int channel);

  // A connection to the listener of `channel`: the connecting side's end
  // (host fd) and its channel, or -EAGAIN when the queue is full.
  int connect(UnixListener& l, int channel_for_pair, int* connector_fd);
  // The oldest waiting connection; host_fd -1 when none.
  PendingConnection accept(UnixListener& l);
  // Puts a connection (as a restore found it) at the queue's end.
  void requeue(UnixListener& l, PendingConnection c);

  // Guest descriptors opened on / closed from a listener: once none is
  // left, the waiting connections are closed (their peers read the end)
  // and the name no longer leads to it.
  void acquire(int channel);
  void release(int channel);

 private:
  void set_ready(UnixListener& l);
  std::map<std::string, int> names_;
  std::map<int, UnixListener> listeners_;
  int next_port_ = 32768;
};

}  // namespace vmha
