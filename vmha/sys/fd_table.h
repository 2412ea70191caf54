// FdTable: the guest's file descriptors, each backed by a host descriptor and
// described well enough (kind, path, flags, pair) to be reopened after a restore.
#pragma once
#include <fcntl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vmha/sys/epoll_sets.h"
#include "vmha/sys/unix_names.h"

namespace vmha {

enum class FdKind : uint8_t {
  kStdStream = 0,     // guest 0/1/2 as handed to vmha (index = which stream)
  kFile = 1,          // regular file or directory under the working directory
  kDevice = 2,        // one of the allowed devices (/dev/null, /dev/zero, /dev/urandom)
  kPipe = 3,          // pipe made by the guest (both ends inside the VM)
  kSocket = 4,        // a socketpair, or a connection (path: type, and ":" and its listener's name)
  kReadOnly = 5,      // regular file or directory under a read-only path (path: absolute)
  kProcFds = 6,       // the /proc/self/fd directory: a listing in a host memfd (sys/proc_views.h)
  kUnixSocket = 7,    // socket(AF_UNIX) not connected (path: its type, and ":" and its name once bound)
  kUnixListener = 8,  // a listening AF_UNIX socket (host fd: its eventfd, sys/unix_names.h)
  kEpoll = 9,         // an epoll instance (host fd: the host's; what it watches: sys/epoll_sets.h)
};

// The guest's own sockets: a socketpair's ends, an unconnected AF_UNIX socket.
inline bool is_guest_socket(FdKind k) { return k == FdKind::kSocket || k == FdKind::kUnixSocket; }
// Any socket of the guest's, a listener too (what getsockname, getsockopt answer for).
inline bool is_any_socket(FdKind k) { return is_guest_socket(k) || k == FdKind::kUnixListener; }

// A socket type as FdEntry::path records it ("" for an AF_UNIX SOCK_STREAM,
// as states before kept every socketpair; "tcp4" and "tcp6" for the guest's
// TCP sockets, which vmha serves as AF_UNIX ones inside the VM), and back
// from a path ("type" or "type:name"): -1 for a type that is none.
std::string socket_type_name(int type);
int socket_type_from_name(const std::string& path);
// The family a socket's path records: AF_UNIX, AF_INET or AF_INET6.
int socket_family_from_name(const std::string& path);
// The type part of a socket's path, and the name after it ("": not bound;
// sys/unix_names.h says how names look).
std::string socket_prefix(const std::string& path);
std::string socket_bound_name(const std::string& path);

struct FdEntry {
  int host_fd = -1;
  FdKind kind = FdKind::kFile;
  std::string path;    // working-directory-relative path, device path, socket type, or ""
  int open_flags = 0;  // O_* flags at open (for reopening); for kStdStream
                       // and kUnixListener the guest's kSetflFlags (not
                       // applied to the host)
  bool cloexec = false;
  int stream = -1;   // for kStdStream: 0, 1 or 2
  // Pipe/socketpair: which one (shared by dups). A file, device or listing
  // gets one once dup or fork shares its open file description (FdTable::
  // share), so a restore reopens it once and dups it: the offset stays shared.
  int channel = -1;
  int end = 0;       // pipe: 0 = read end, 1 = write end; socketpair: 0 or 1
};

// Kinds a restore opens afresh (by path, or a listing from its bytes), not
// from a channel's pipe: dup and fork give them a channel to share by.
inline bool reopened_alone(FdKind k) {
  return k == FdKind::kFile || k == FdKind::kReadOnly || k == FdKind::kDevice || k == FdKind::kProcFds ||
         k == FdKind::kUnixSocket || k == FdKind::kEpoll;
}

// Whether the guest may change the file behind e (size, mode, times): only a
// file it opened itself beneath its working directory. Inherited streams
// (vmha's stdin/stdout/stderr: whatever file, terminal or pipe they are),
// devices, pipes and sockets are host objects outside that directory, or
// share their state with processes outside the VM. Files under read-only
// paths are the policy's (confinement.h): the callers answer EROFS.
inline bool may_change_metadata(const FdEntry& e) { return e.kind == FdKind::kFile; }

// The status flags fcntl(F_SETFL) may change (Linux's SETFL_MASK). On an
// inherited stream they are kept in FdEntry::open_flags, not set on the host:
// its open file description is shared with the processes that started vmha.
constexpr int kSetflFlags = O_APPEND | O_ASYNC | O_DIRECT | O_NOATIME | O_NONBLOCK;

class FdTable {
 public:
  ~FdTable();
  FdEntry* get(int fd);
  // Lowest free guest descriptor >= min_fd; -EMFILE when full.
  int install(const FdEntry& e, int min_fd = 0);
  int install_at(int fd, const FdEntry& e);  // replaces (dup2); closes the old one
  // Pipe and socketpair channel numbers are shared by every process of the
  // tree (a forked table shares its parent's counter), so a channel names one
  // host pipe across the tree's fd tables.
  int next_channel() { return (*channels_)++; }
  void set_next_channel(int n) { *channels_ = n; }
  int channels() const { return *channels_; }
  // Before dup or fork shares e's open file description: gives a file,
  // device or listing without a channel one.
  void share(FdEntry& e);
  // fork: the same descriptors, each host fd dup'ed (one open file
  // description, as Linux shares it, each shared()), and the same channel counter.
  void fork_from(FdTable& parent);
  // The same channel counter and AF_UNIX names as `other`'s (a restored tree).
  void share_channels(const FdTable& other) {
    channels_ = other.channels_;
    names_ = other.names_;
    epolls_ = other.epolls_;
  }
  // The tree's AF_UNIX names and listeners (a forked table shares them).
  UnixNames& unix_names() { return *names_; }
  // The tree's epoll interest lists (a forked table shares them).
  EpollSets& epolls() { return *epolls_; }
  // execve: closes the descriptors marked close-on-exec.
  void close_on_exec();
  int close(int fd);  // 0 or -EBADF
  void close_all();
  const std::vector<FdEntry>& entries() const { return slots_; }
  static constexpr int kMaxFds = 1024;

 private:
  std::vector<FdEntry> slots_;
  std::shared_ptr<int> channels_ = std::make_shared<int>(0);
  std::shared_ptr<UnixNames> names_ = std::make_shared<UnixNames>();
  std::shared_ptr<EpollSets> epolls_ = std::make_shared<EpollSets>();
};

}  // namespace vmha
