#include "vmha/sys/shared_file_maps.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "vmha/mem/guest_layout.h"
#include "vmha/sys/process.h"

namespace vmha {

SharedFileMaps::~SharedFileMaps() { clear(); }

int SharedFileMaps::add(uint64_t start, uint64_t len, int host_fd, off_t offset, const std::string& path) {
  int fd = fcntl(host_fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return -errno;
  maps_.push_back({start, start + layout::page_up(len), fd, offset, path});
  return 0;
}

void SharedFileMaps::write_back(Process& p, uint64_t addr, uint64_t len) {
  const uint64_t end = len > ~uint64_t{0} - addr ? ~uint64_t{0} : addr + len;
  std::vector<uint8_t> mine(layout::kPageSize), file(layout::kPageSize);
  for (const Map& m : maps_) {
    const uint64_t from = std::max(m.start, layout::page_down(addr)), to = std::min(m.end, end);
    struct stat st;
    if (from >= to || fstat(m.fd, &st) != 0) continue;
    for (uint64_t va = from; va < to; va += layout::kPageSize) {
      const off_t at = m.offset + static_cast<off_t>(va - m.start);
      if (at >= st.st_size) break;  // Linux keeps nothing past the end of the file either
      const size_t n = static_cast<size_t>(std::min<off_t>(st.st_size - at, layout::kPageSize));
      if (!p.as->copy_in(mine.data(), va, n)) continue;  // unmapped or made inaccessible meanwhile
      ssize_t got = pread(m.fd, file.data(), n, at);
      if (got == static_cast<ssize_t>(n) && std::memcmp(mine.data(), file.data(), n) == 0) continue;
      iovec v{mine.data(), n};
      p.out->write(OutputTarget{-1, m.fd, m.path}, {&v, 1}, at);
    }
  }
}

void SharedFileMaps::forget(uint64_t addr, uint64_t len) {
  const uint64_t end = len > ~uint64_t{0} - addr ? ~uint64_t{0} : addr + len;
  std::vector<Map> kept;
  for (Map& m : maps_) {
    if (m.end <= addr || m.start >= end) {
      kept.push_back(std::move(m));
      continue;
    }
    if (m.start < addr) {
      int fd = fcntl(m.fd, F_DUPFD_CLOEXEC, 0);
      if (fd >= 0) kept.push_back({m.start, addr, fd, m.offset, m.path});
    }
    if (m.end > end) {
      int fd = fcntl(m.fd, F_DUPFD_CLOEXEC, 0);
      if (fd >= 0) kept.push_back({end, m.end, fd, m.offset + static_cast<off_t>(end - m.start), m.path});
    }
    close(m.fd);
  }
  maps_ = std::move(kept);
}

void SharedFileMaps::fork_from(const SharedFileMaps& parent) {
  for (const Map& m : parent.maps_) {
    int fd = fcntl(m.fd, F_DUPFD_CLOEXEC, 0);
    if (fd >= 0) maps_.push_back({m.start, m.end, fd, m.offset, m.path});
  }
}

}  // namespace vmha
