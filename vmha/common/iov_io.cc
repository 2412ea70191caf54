#include "vmha/common/iov_io.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

namespace vmha {

namespace {

bool in_slices(int fd, size_t pieces, off_t offset) {
  if (pieces <= IOV_MAX || offset >= 0) return true;
  struct stat st;
  return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

template <typename Call>
ssize_t sliced(int fd, std::span<const iovec> iov, off_t offset, Call call) {
  if (!in_slices(fd, iov.size(), offset)) return call(iov.first(IOV_MAX), offset);
  ssize_t done = 0;
  while (!iov.empty()) {
    std::span<const iovec> slice = iov.first(iov.size() < IOV_MAX ? iov.size() : IOV_MAX);
    size_t want = 0;
    for (const iovec& v : slice) want += v.iov_len;
    ssize_t n = call(slice, offset < 0 ? offset : offset + done);
    if (n < 0) return done > 0 ? done : n;
    done += n;
    if (static_cast<size_t>(n) < want) break;
    iov = iov.subspan(slice.size());
  }
  return done;
}

}  // namespace

ssize_t read_pieces(int fd, std::span<const iovec> iov, off_t offset) {
  return sliced(fd, iov, offset, [fd](std::span<const iovec> s, off_t at) {
    const int n = static_cast<int>(s.size());
    return at < 0 ? ::readv(fd, s.data(), n) : ::preadv(fd, s.data(), n, at);
  });
}

ssize_t write_pieces(int fd, std::span<const iovec> iov, off_t offset) {
  return sliced(fd, iov, offset, [fd](std::span<const iovec> s, off_t at) {
    const int n = static_cast<int>(s.size());
    return at < 0 ? ::writev(fd, s.data(), n) : ::pwritev(fd, s.data(), n, at);
  });
}

}  // namespace vmha
