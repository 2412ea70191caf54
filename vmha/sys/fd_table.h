// FdTable: the guest's file descriptors, each backed by a host descriptor and
// described well enough (kind, path, flags, pair) to be reopened after a restore.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace vmha {

enum class FdKind : uint8_t {
  kStdStream = 0,  // guest 0/1/2 as handed to vmha (index = which stream)
  kFile = 1,       // regular file or directory under the working directory
  kDevice = 2,     // one of the allowed devices (/dev/null, /dev/zero, /dev/urandom)
  kPipe = 3,       // pipe made by the guest (both ends inside the VM)
  kSocket = 4,     // socketpair made by the guest (both ends inside the VM)
};

struct FdEntry {
  int host_fd = -1;
  FdKind kind = FdKind::kFile;
  std::string path;       // working-directory-relative path, device path, or ""
  int open_flags = 0;     // O_* flags at open (for reopening)
  bool cloexec = false;
  int stream = -1;        // for kStdStream: 0, 1 or 2
  int channel = -1;       // pipe/socketpair: which one (shared by dups)
  int end = 0;            // pipe: 0 = read end, 1 = write end; socketpair: 0 or 1
};

class FdTable {
 public:
  ~FdTable();
  FdEntry* get(int fd);
  // Lowest free guest descriptor >= min_fd; -EMFILE when full.
  int install(const FdEntry& e, int min_fd = 0);
  int install_at(int fd, const FdEntry& e);  // replaces (dup2); closes the old one
  int next_channel() { return channels_++; }
  void set_next_channel(int n) { channels_ = n; }
  int channels() const { return channels_; }
  int close(int fd);                          // 0 or -EBADF
  void close_all();
  const std::vector<FdEntry>& entries() const { return slots_; }
  static constexpr int kMaxFds = 1024;

 private:
  std::vector<FdEntry> slots_;
  int channels_ = 0;
};

}  // namespace vmha
