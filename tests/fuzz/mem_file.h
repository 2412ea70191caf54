// A file that lives in memory (memfd) but has a path, for the fuzz targets of
// readers that only take a path: nothing is written to disk, and fuzzers
// running side by side never share it.
#pragma once
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace fuzz {

class MemFile {
 public:
  MemFile() : fd_(memfd_create("duet-fuzz-input", MFD_CLOEXEC)) {
    if (fd_ < 0) std::abort();  // no memfd: the harness itself is broken
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() { close(fd_); }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;

  // Replaces the contents; returns the path a reader can open.
  const std::string& set(const std::uint8_t* data, std::size_t size) {
    if (ftruncate(fd_, 0) != 0) std::abort();
    std::size_t done = 0;
    while (done < size) {
      ssize_t n = pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      if (n <= 0) std::abort();
      done += static_cast<std::size_t>(n);
    }
    return path_;
  }

 private:
  int fd_;
  std::string path_;
};

}  // namespace fuzz
