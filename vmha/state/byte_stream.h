// Little-endian byte writer and bounds-checked reader for the VM state
// format. The reader never reads past the end: it records the first error
// with the offset and what it expected.
#pragma once
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace vmha {

class ByteWriter {
 public:
  explicit ByteWriter(std::vector<uint8_t>& out) : out_(out) {}
  void bytes(const void* p, size_t n) {
    auto* b = static_cast<const uint8_t*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  void u32(uint32_t v) { bytes(&v, 4); }
  void u64(uint64_t v) { bytes(&v, 8); }
  void str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    bytes(s.data(), s.size());
  }
  template <typename T>
  void pod(const T& v) {
    u32(sizeof v);
    bytes(&v, sizeof v);
  }

 private:
  std::vector<uint8_t>& out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::span<const uint8_t> in) : in_(in) {}
  bool bytes(void* p, size_t n, const char* what);
  uint32_t u32(const char* what) {
    uint32_t v = 0;
    bytes(&v, 4, what);
    return v;
  }
  uint64_t u64(const char* what) {
    uint64_t v = 0;
    bytes(&v, 8, what);
    return v;
  }
  std::string str(const char* what);
  template <typename T>
  void pod(T* v, const char* what) {
    uint32_t size = u32(what);
    if (ok() && size != sizeof *v) {
      fail(what, "a record of " + std::to_string(sizeof *v) + " bytes, found " + std::to_string(size));
      return;
    }
    bytes(v, sizeof *v, what);
  }
  const uint8_t* view(size_t n, const char* what);  // n bytes in place, or nullptr
  bool ok() const { return error_.empty(); }
  bool at_end() const { return pos_ == in_.size(); }
  const std::string& error() const { return error_; }
  void fail(const char* what, const std::string& expected);

 private:
  std::span<const uint8_t> in_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace vmha
