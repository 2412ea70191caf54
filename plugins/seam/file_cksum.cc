#include "plugins/seam/file_cksum.h"

#include <array>
#include <cerrno>
#include <cstring>

#include "policy/util/safe_file.h"

namespace duet::plugin {
namespace {

// CRC-32 with polynomial 0x04C11DB7, MSB first, as POSIX cksum.
std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i << 24;
    for (int k = 0; k < 8; ++k) c = (c & 0x80000000u) ? (c << 1) ^ 0x04C11DB7u : c << 1;
    t[i] = c;
  }
  return t;
}

const std::array<uint32_t, 256>& table() {
  static const std::array<uint32_t, 256> t = make_table();
  return t;
}

uint32_t add_bytes(uint32_t c, const char* p, size_t n) {
  const auto& t = table();
  for (size_t i = 0; i < n; ++i) c = (c << 8) ^ t[((c >> 24) ^ static_cast<unsigned char>(p[i])) & 0xff];
  return c;
}

// cksum appends the length, least significant byte first, then inverts.
uint32_t finish(uint32_t c, uint64_t length) {
  const auto& t = table();
  for (uint64_t n = length; n; n >>= 8) c = (c << 8) ^ t[((c >> 24) ^ (n & 0xff)) & 0xff];
  return ~c;
}

}  // namespace

bool file_cksum(const std::string& path, uint32_t* crc, std::string* error, uint64_t max_bytes) {
  UniqueFd fd;
  try {
    fd = open_regular_file(path, max_bytes, "file to checksum");  // a FIFO must not hang us
  } catch (const FileError& e) {
    if (error) *error = e.what();
    return false;
  }
  uint32_t c = 0;
  uint64_t length = 0;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      if (error) *error = printable(path) + ": read error: " + std::strerror(errno);
      return false;
    }
    if (n == 0) break;
    c = add_bytes(c, buf, static_cast<size_t>(n));
    length += static_cast<uint64_t>(n);
  }
  *crc = finish(c, length);
  return true;
}

uint32_t bytes_cksum(std::string_view bytes) { return finish(add_bytes(0, bytes.data(), bytes.size()), bytes.size()); }

}  // namespace duet::plugin
