// OutputSink: the one place every external effect of the guest passes
// through — bytes written to stdout, stderr, files, pipes and sockets that
// leave the VM, and file-system changes (unlink, rename, mkdir, truncate).
// The default passes them straight to the host; the replication layer holds
// them per epoch and releases them when the backup has acknowledged.
#pragma once
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <chrono>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "vmha/output/undo_log.h"

namespace vmha {

// A system call returns this (never seen by the guest) when it must wait for
// held file writes to be released: the VMM rewinds the guest to the syscall
// instruction, waits (parking if the epoch ends) and runs the call again.
constexpr long kWaitForRelease = -512;  // the kernel's ERESTARTSYS

// What undoes a file-system change (undo_log.h), made just before it is
// applied; nullptr: nothing to journal.
using UndoPrepare = std::function<std::vector<UndoStep>()>;

struct OutputTarget {
  int guest_fd = -1;
  int host_fd = -1;
  std::string path;  // relative to the working directory; "" for streams
};

class OutputSink {
 public:
  virtual ~OutputSink() = default;
  // Writes at `offset` (or the file position when offset < 0). Returns bytes
  // written or -errno, like the system call the guest made.
  virtual ssize_t write(const OutputTarget& target, std::span<const iovec> data, off_t offset) = 0;
  // A file-system change described by `what`; apply() performs it and returns
  // 0 or -errno. A sink that holds file writes may answer kWaitForRelease
  // instead; one that journals changes (undo()) runs prepare() and journals
  // its steps first.
  virtual long change(const std::string& what, const std::function<long()>& apply,
                      const UndoPrepare& prepare = nullptr) = 0;
  // The journal of file-system changes a backup may have to undo (nullptr:
  // none; a change that needs no wait, a file created, journals itself).
  virtual UndoLog* undo() { return nullptr; }

  // Held file writes: the guest must see them although the host file does
  // not have them yet. The defaults (nothing held) cost a virtual call.
  // True while any file write is held (a cheap gate for the calls below).
  virtual bool holds_files() const { return false; }
  // True when the file behind host_fd has held writes: a call that reads it
  // returns kWaitForRelease and runs again after their release.
  virtual bool must_wait(int host_fd) {
    (void)host_fd;
    return false;
  }
  // Runs host_stat (an fstat or fstatat of the host file into st) and sets
  // st_size to the size the guest sees (held writes extend the file), as one
  // step against releases. Returns what host_stat returned.
  virtual int stat_as_guest(const std::function<int(struct stat*)>& host_stat, struct stat* st) {
    return host_stat(st);
  }
  // vCPU thread, after a call returned kWaitForRelease: waits until held
  // writes were released, at most `max` (then the caller checks for a pause).
  virtual void wait_for_release(std::chrono::microseconds max) { (void)max; }
};

// Performs everything at once on the host.
class PassthroughSink : public OutputSink {
 public:
  ssize_t write(const OutputTarget& target, std::span<const iovec> data, off_t offset) override;
  long change(const std::string& what, const std::function<long()>& apply,
              const UndoPrepare& prepare = nullptr) override;
};

}  // namespace vmha
