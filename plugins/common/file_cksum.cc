#include "plugins/common/file_cksum.h"

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>

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

}  // namespace

bool file_cksum(const std::string& path, uint32_t* crc, std::string* error) {
  static const std::array<uint32_t, 256> table = make_table();
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (error) *error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  uint32_t c = 0;
  uint64_t length = 0;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i)
      c = (c << 8) ^ table[((c >> 24) ^ static_cast<unsigned char>(buf[i])) & 0xff];
    length += static_cast<uint64_t>(in.gcount());
    if (in.eof()) break;
  }
  if (in.bad()) {
    if (error) *error = path + ": read error: " + std::strerror(errno);
    return false;
  }
  for (uint64_t n = length; n; n >>= 8) c = (c << 8) ^ table[((c >> 24) ^ (n & 0xff)) & 0xff];
  *crc = ~c;
  return true;
}

}  // namespace duet::plugin
