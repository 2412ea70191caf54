// Little-endian binary records inside a checked container, shared by the GP
// state file and the model file.
//
// Container layout (all integers little-endian):
//   bytes 0..7   magic (8 ASCII bytes, identifies the file kind)
//   bytes 8..11  u32 format version
//   bytes 12..15 u32 reserved (0)
//   bytes 16..23 u64 payload length in bytes
//   bytes 24..31 u64 FNV-1a 64 checksum of the payload
//   bytes 32..   payload
// Readers throw FormatError with the file name and what was expected.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace duet::learn {

// Any malformed, truncated, corrupt or incompatible learn file.
class FormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::uint64_t fnv1a64(const std::uint8_t* data, std::size_t size);

// Appends fixed-width little-endian values to a byte buffer.
class ByteWriter {
 public:
  void u8(std::uint8_t v) { buf_.push_back(v); }
  void u32(std::uint32_t v);
  void u64(std::uint64_t v);
  void i64(std::int64_t v) { u64(static_cast<std::uint64_t>(v)); }
  void f32(float v);
  void f64(double v);
  void str(std::string_view s);  // u32 length + bytes
  void f32s(const float* v, std::size_t n);
  void f64s(const double* v, std::size_t n);
  const std::vector<std::uint8_t>& bytes() const { return buf_; }

 private:
  std::vector<std::uint8_t> buf_;
};

// Reads what ByteWriter wrote; every read is bounds-checked and a failure
// names the source, the byte offset and the field being read.
class ByteReader {
 public:
  ByteReader(const std::vector<std::uint8_t>& bytes, std::string source) : buf_(bytes), source_(std::move(source)) {}
  std::uint8_t u8(const char* what);
  std::uint32_t u32(const char* what);
  std::uint64_t u64(const char* what);
  std::int64_t i64(const char* what) { return static_cast<std::int64_t>(u64(what)); }
  float f32(const char* what);
  double f64(const char* what);
  std::string str(const char* what, std::size_t max_len = 1 << 20);
  void f32s(float* out, std::size_t n, const char* what);
  void f64s(double* out, std::size_t n, const char* what);
  // A count of items of item_bytes each that must fit in the rest of the buffer.
  std::uint64_t count(const char* what, std::size_t item_bytes);
  bool at_end() const { return pos_ == buf_.size(); }
  std::size_t left() const { return buf_.size() - pos_; }
  std::size_t offset() const { return pos_; }
  [[noreturn]] void error(const std::string& msg) const;

 private:
  void need(std::size_t n, const char* what);
  const std::vector<std::uint8_t>& buf_;
  std::string source_;
  std::size_t pos_ = 0;
};

// Writes header + payload atomically (temporary file, then rename).
void write_container(const std::string& path, std::string_view magic8, std::uint32_t version,
                     const std::vector<std::uint8_t>& payload);

// The largest container file read_container reads by default (256 MiB).
inline constexpr std::uint64_t kMaxContainerBytes = std::uint64_t{256} << 20;

// Reads and checks magic, version (must equal `version`), length and checksum.
// `kind` names the file kind in messages ("duet model file"). The file must
// be a regular file of at most max_bytes (checked before reading; opened
// non-blocking, so a FIFO or a device is refused at once: safe_file.h).
std::vector<std::uint8_t> read_container(const std::string& path, std::string_view magic8, std::uint32_t version,
                                         const char* kind, std::uint64_t max_bytes = kMaxContainerBytes);
// The same checks on a whole file already in memory; `name` is used in messages.
std::vector<std::uint8_t> decode_container(std::string_view file, const std::string& name, std::string_view magic8,
                                           std::uint32_t version, const char* kind);

// The same, for a file kind with several format versions: any version in
// [min_version, max_version] is accepted and returned with the payload.
struct VersionedPayload {
  std::uint32_t version = 0;
  std::vector<std::uint8_t> payload;
};
VersionedPayload read_container_versions(const std::string& path, std::string_view magic8, std::uint32_t min_version,
                                         std::uint32_t max_version, const char* kind,
                                         std::uint64_t max_bytes = kMaxContainerBytes);
VersionedPayload decode_container_versions(std::string_view file, const std::string& name, std::string_view magic8,
                                           std::uint32_t min_version, std::uint32_t max_version, const char* kind);

}  // namespace duet::learn
