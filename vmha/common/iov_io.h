// Host I/O on scatter lists of any length. A guest buffer gathered into host
// pieces (AddressSpace::gather) has one piece per run of contiguous frames:
// after memory has been freed and reused, a 5 MiB buffer can be 1,280
// pieces, more than one readv/preadv/writev takes (IOV_MAX, 1024: EINVAL).
#pragma once
#include <sys/types.h>
#include <sys/uio.h>

#include <span>

namespace vmha {

// As readv/preadv (offset < 0: at the file position), with any number of
// pieces. A positioned call, or one on a regular file, goes on in slices of
// IOV_MAX until everything is transferred, a slice comes up short or a call
// fails (bytes so far, or -1 and errno when none). On anything else (a pipe,
// a socket, a terminal, where a second call could block) one call takes the
// first IOV_MAX pieces: a short transfer, as such a file may give anyway.
ssize_t read_pieces(int fd, std::span<const iovec> iov, off_t offset);
// The same for writev/pwritev.
ssize_t write_pieces(int fd, std::span<const iovec> iov, off_t offset);
// The first IOV_MAX pieces of a list for calls that take a list once
// (sendmsg, recvmsg: more is EMSGSIZE).
inline size_t one_call_pieces(size_t n) { return n < 1024 ? n : 1024; }

}  // namespace vmha
