#include "vmha/state/byte_stream.h"

namespace vmha {

void ByteReader::fail(const char* what, const std::string& expected) {
  if (error_.empty()) error_ = "at byte " + std::to_string(pos_) + " (" + what + "): expected " + expected;
}

bool ByteReader::bytes(void* p, size_t n, const char* what) {
  if (!ok()) return false;
  if (in_.size() - pos_ < n) {
    fail(what, std::to_string(n) + " more bytes, the state ends after " + std::to_string(in_.size() - pos_));
    return false;
  }
  std::memcpy(p, in_.data() + pos_, n);
  pos_ += n;
  return true;
}

const uint8_t* ByteReader::view(size_t n, const char* what) {
  if (!ok()) return nullptr;
  if (in_.size() - pos_ < n) {
    fail(what, std::to_string(n) + " more bytes, the state ends after " + std::to_string(in_.size() - pos_));
    return nullptr;
  }
  const uint8_t* p = in_.data() + pos_;
  pos_ += n;
  return p;
}

std::string ByteReader::str(const char* what) {
  uint32_t n = u32(what);
  if (!ok()) return {};
  if (n > (1u << 20)) {
    fail(what, "a string under 1 MiB, length is " + std::to_string(n));
    return {};
  }
  std::string s(n, '\0');
  bytes(s.data(), n, what);
  return s;
}

}  // namespace vmha
