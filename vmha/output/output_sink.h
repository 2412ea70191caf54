// OutputSink: the one place every external effect of the guest passes
// through — bytes written to stdout, stderr, files, pipes and sockets that
// leave the VM, and file-system changes (unlink, rename, mkdir, truncate).
// The default passes them straight to the host; the replication layer holds
// them per epoch and releases them when the backup has acknowledged.
#pragma once
#include <sys/types.h>
#include <sys/uio.h>

#include <functional>
#include <span>
#include <string>

namespace vmha {

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
  // 0 or -errno.
  virtual long change(const std::string& what, const std::function<long()>& apply) = 0;
};

// Performs everything at once on the host.
class PassthroughSink : public OutputSink {
 public:
  ssize_t write(const OutputTarget& target, std::span<const iovec> data, off_t offset) override;
  long change(const std::string& what, const std::function<long()>& apply) override;
};

}  // namespace vmha
