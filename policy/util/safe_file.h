// Opening an input file without trusting it: regular files only, opened
// non-blocking (a FIFO or a device can neither hang nor flood the reader:
// `--model /dev/zero` used to read until bad_alloc), the size checked
// against a documented maximum before a byte is read. Every error names the
// file and what was expected. Header-only: used by the policy, learn and
// plugin libraries alike (each is linked on its own).
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <istream>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <string_view>

#include "policy/util/printable.h"

namespace duet {

// what(): "PATH: REASON" (the path made printable); error_number(): the
// errno of a failed system call, else 0.
class FileError : public std::runtime_error {
 public:
  FileError(const std::string& path, const std::string& reason, int error_number = 0)
      : std::runtime_error(printable(path) + ": " + reason), reason_(reason), errno_(error_number) {}
  const std::string& reason() const { return reason_; }
  int error_number() const { return errno_; }

 private:
  std::string reason_;
  int errno_;
};

class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.fd_;
      o.fd_ = -1;
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// "a FIFO", "a directory", ... for messages.
inline const char* file_type_name(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISLNK(m)) return "a symbolic link";
  return "not a regular file";
}

// Opens `path` read-only, non-blocking, close-on-exec; throws FileError
// unless it is a regular file of at most max_bytes. `what` names the
// expected content ("duet model file"). The size goes to *size.
inline UniqueFd open_regular_file(const std::string& path, std::uint64_t max_bytes, std::string_view what,
                                  std::uint64_t* size = nullptr) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    const int err = errno;
    throw FileError(path, std::string("cannot open: ") + std::strerror(err), err);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw FileError(path, std::string("cannot stat: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw FileError(path, std::string("is ") + file_type_name(st.st_mode) + ", expected a regular file (" +
                              std::string(what) + ")");
  const auto n = static_cast<std::uint64_t>(st.st_size);
  if (n > max_bytes)
    throw FileError(path, std::to_string(n) + " bytes, more than the " + std::to_string(max_bytes) + " bytes a " +
                              std::string(what) + " may have");
  if (size) *size = n;
  return fd;
}

// The whole file, checked as open_regular_file; a file that grows past
// max_bytes while being read is refused too.
inline std::string read_regular_file(const std::string& path, std::uint64_t max_bytes, std::string_view what) {
  std::uint64_t size = 0;
  UniqueFd fd = open_regular_file(path, max_bytes, what, &size);
  std::string out(static_cast<std::size_t>(size), '\0');
  std::size_t got = 0;
  for (;;) {
    if (got == out.size()) {
      if (out.size() > max_bytes) break;
      out.resize(out.size() + 4096);  // grown since fstat (or st_size lied)
    }
    ssize_t r = ::read(fd.get(), out.data() + got, out.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw FileError(path, std::string("read error: ") + std::strerror(errno));
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  if (got > max_bytes)
    throw FileError(path, "grew past the " + std::to_string(max_bytes) + " bytes a " + std::string(what) +
                              " may have while being read");
  out.resize(got);
  return out;
}

// Buffered input from an owned descriptor; a read error throws FileError.
class FdStreamBuf : public std::streambuf {
 public:
  FdStreamBuf(UniqueFd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    for (;;) {
      ssize_t r = ::read(fd_.get(), buf_, sizeof buf_);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) throw FileError(path_, std::string("read error: ") + std::strerror(errno));
      if (r == 0) return traits_type::eof();
      setg(buf_, buf_, buf_ + r);
      return traits_type::to_int_type(*gptr());
    }
  }

 private:
  UniqueFd fd_;
  std::string path_;
  char buf_[65536];
};

// An input stream over a file opened by open_regular_file.
class FileInput : public std::istream {
 public:
  FileInput(const std::string& path, std::uint64_t max_bytes, std::string_view what)
      : std::istream(nullptr), buf_(open_regular_file(path, max_bytes, what), path) {
    rdbuf(&buf_);
  }

 private:
  FdStreamBuf buf_;
};

}  // namespace duet
