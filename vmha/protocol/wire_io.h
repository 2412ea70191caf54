// Little-endian writer and bounds-checked reader for replication payloads
// (named Wire* so as not to clash with vmha/state/byte_stream.h).
// A reader never reads past its span: a short payload sets an error naming the
// field that was cut off, and later reads return zeros.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace vmha {

class WireWriter {
 public:
  void u8(std::uint8_t v) { out_.push_back(v); }
  void u16(std::uint16_t v) { put(v, 2); }
  void u32(std::uint32_t v) { put(v, 4); }
  void u64(std::uint64_t v) { put(v, 8); }
  void bytes(std::span<const std::uint8_t> b) { out_.insert(out_.end(), b.begin(), b.end()); }
  // Length-prefixed (u32) byte string.
  void blob(std::span<const std::uint8_t> b) {
    u32(static_cast<std::uint32_t>(b.size()));
    bytes(b);
  }
  std::vector<std::uint8_t>& data() { return out_; }
  std::vector<std::uint8_t> take() { return std::move(out_); }

 private:
  void put(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  std::vector<std::uint8_t> out_;
};

class WireReader {
 public:
  explicit WireReader(std::span<const std::uint8_t> in) : in_(in) {}

  std::uint8_t u8(const char* field) { return static_cast<std::uint8_t>(get(1, field)); }
  std::uint16_t u16(const char* field) { return static_cast<std::uint16_t>(get(2, field)); }
  std::uint32_t u32(const char* field) { return static_cast<std::uint32_t>(get(4, field)); }
  std::uint64_t u64(const char* field) { return get(8, field); }
  std::span<const std::uint8_t> bytes(std::size_t n, const char* field) {
    if (!need(n, field)) return {};
    auto s = in_.subspan(pos_, n);
    pos_ += n;
    return s;
  }
  std::span<const std::uint8_t> blob(const char* field) { return bytes(u32(field), field); }

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  std::size_t remaining() const { return in_.size() - pos_; }
  std::size_t position() const { return pos_; }

  // Records an error (the first one wins), e.g. a value out of range.
  void set_error(std::string message) {
    if (error_.empty()) error_ = std::move(message);
  }

 private:
  bool need(std::size_t n, const char* field) {
    if (!ok()) return false;
    if (in_.size() - pos_ < n) {
      set_error("truncated at byte " + std::to_string(pos_) + ": field '" + field + "' needs " + std::to_string(n) +
                " bytes, " + std::to_string(in_.size() - pos_) + " left");
      return false;
    }
    return true;
  }
  std::uint64_t get(int n, const char* field) {
    if (!need(static_cast<std::size_t>(n), field)) return 0;
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(in_[pos_ + i]) << (8 * i);
    pos_ += static_cast<std::size_t>(n);
    return v;
  }

  std::span<const std::uint8_t> in_;
  std::size_t pos_ = 0;
  std::string error_;
};

}  // namespace vmha
