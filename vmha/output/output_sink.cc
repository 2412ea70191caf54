#include "vmha/output/output_sink.h"

#include <cerrno>
#include <unistd.h>

namespace vmha {

ssize_t PassthroughSink::write(const OutputTarget& target, std::span<const iovec> data, off_t offset) {
  ssize_t n = offset < 0 ? ::writev(target.host_fd, data.data(), static_cast<int>(data.size()))
                         : ::pwritev(target.host_fd, data.data(), static_cast<int>(data.size()), offset);
  return n < 0 ? -errno : n;
}

long PassthroughSink::change(const std::string& what, const std::function<long()>& apply) {
  (void)what;
  return apply();
}

}  // namespace vmha
