#include "vmha/output/output_sink.h"

#include <cerrno>
#include <unistd.h>

#include "vmha/common/iov_io.h"

namespace vmha {

ssize_t PassthroughSink::write(const OutputTarget& target, std::span<const iovec> data, off_t offset) {
  ssize_t n = write_pieces(target.host_fd, data, offset);
  return n < 0 ? -errno : n;
}

long PassthroughSink::change(const std::string& what, const std::function<long()>& apply, const UndoPrepare& prepare) {
  (void)what;
  (void)prepare;
  return apply();
}

}  // namespace vmha
