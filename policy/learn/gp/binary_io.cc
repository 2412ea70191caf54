#include "policy/learn/gp/binary_io.h"

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "policy/util/printable.h"
#include "policy/util/safe_file.h"

namespace duet::learn {

static_assert(std::endian::native == std::endian::little, "learn file formats assume a little-endian host");

std::uint64_t fnv1a64(const std::uint8_t* data, std::size_t size) {
  std::uint64_t h = 1469598103934665603ULL;
  for (std::size_t i = 0; i < size; ++i) {
    h ^= data[i];
    h *= 1099511628211ULL;
  }
  return h;
}

namespace {
template <typename T>
void put(std::vector<std::uint8_t>& b, T v) {
  std::uint8_t raw[sizeof(T)];
  std::memcpy(raw, &v, sizeof(T));
  b.insert(b.end(), raw, raw + sizeof(T));
}
}  // namespace

void ByteWriter::u32(std::uint32_t v) { put(buf_, v); }
void ByteWriter::u64(std::uint64_t v) { put(buf_, v); }
void ByteWriter::f32(float v) { put(buf_, v); }
void ByteWriter::f64(double v) { put(buf_, v); }
void ByteWriter::str(std::string_view s) {
  u32(static_cast<std::uint32_t>(s.size()));
  buf_.insert(buf_.end(), s.begin(), s.end());
}
void ByteWriter::f32s(const float* v, std::size_t n) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(v);
  buf_.insert(buf_.end(), p, p + n * sizeof(float));
}
void ByteWriter::f64s(const double* v, std::size_t n) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(v);
  buf_.insert(buf_.end(), p, p + n * sizeof(double));
}

void ByteReader::error(const std::string& msg) const {
  // msg may quote names read from the file
  throw FormatError(printable(source_) + ": byte " + std::to_string(pos_) + ": " + printable(msg));
}

void ByteReader::need(std::size_t n, const char* what) {
  if (buf_.size() - pos_ < n)
    error(std::string("truncated while reading ") + what + " (need " + std::to_string(n) + " bytes, " +
          std::to_string(buf_.size() - pos_) + " left)");
}

namespace {
template <typename T>
T get(const std::vector<std::uint8_t>& b, std::size_t& pos) {
  T v;
  std::memcpy(&v, b.data() + pos, sizeof(T));
  pos += sizeof(T);
  return v;
}
}  // namespace

std::uint8_t ByteReader::u8(const char* what) {
  need(1, what);
  return buf_[pos_++];
}
std::uint32_t ByteReader::u32(const char* what) {
  need(4, what);
  return get<std::uint32_t>(buf_, pos_);
}
std::uint64_t ByteReader::u64(const char* what) {
  need(8, what);
  return get<std::uint64_t>(buf_, pos_);
}
float ByteReader::f32(const char* what) {
  need(4, what);
  return get<float>(buf_, pos_);
}
double ByteReader::f64(const char* what) {
  need(8, what);
  return get<double>(buf_, pos_);
}

std::string ByteReader::str(const char* what, std::size_t max_len) {
  std::uint32_t n = u32(what);
  if (n > max_len) error(std::string(what) + ": length " + std::to_string(n) + " exceeds " + std::to_string(max_len));
  need(n, what);
  std::string s(reinterpret_cast<const char*>(buf_.data() + pos_), n);
  pos_ += n;
  return s;
}

void ByteReader::f32s(float* out, std::size_t n, const char* what) {
  if (n == 0) return;  // out may be null (an empty vector's data()): memcpy forbids it even for 0 bytes
  if (n > (buf_.size() - pos_) / sizeof(float)) need(n * sizeof(float), what);
  std::memcpy(out, buf_.data() + pos_, n * sizeof(float));
  pos_ += n * sizeof(float);
}

void ByteReader::f64s(double* out, std::size_t n, const char* what) {
  if (n == 0) return;
  if (n > (buf_.size() - pos_) / sizeof(double)) need(n * sizeof(double), what);
  std::memcpy(out, buf_.data() + pos_, n * sizeof(double));
  pos_ += n * sizeof(double);
}

std::uint64_t ByteReader::count(const char* what, std::size_t item_bytes) {
  std::uint64_t n = u64(what);
  if (item_bytes > 0 && n > (buf_.size() - pos_) / item_bytes)
    error(std::string(what) + ": count " + std::to_string(n) + " does not fit in the " +
          std::to_string(buf_.size() - pos_) + " bytes left (truncated or corrupt)");
  return n;
}

void write_container(const std::string& path, std::string_view magic8, std::uint32_t version,
                     const std::vector<std::uint8_t>& payload) {
  if (magic8.size() != 8) throw std::logic_error("container magic must be 8 bytes");
  ByteWriter h;
  for (char c : magic8) h.u8(static_cast<std::uint8_t>(c));
  h.u32(version);
  h.u32(0);
  h.u64(payload.size());
  h.u64(fnv1a64(payload.data(), payload.size()));
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw FormatError(tmp + ": cannot open for writing: " + std::strerror(errno));
    out.write(reinterpret_cast<const char*>(h.bytes().data()), static_cast<std::streamsize>(h.bytes().size()));
    out.write(reinterpret_cast<const char*>(payload.data()), static_cast<std::streamsize>(payload.size()));
    out.flush();
    if (!out) throw FormatError(tmp + ": write failed: " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw FormatError(path + ": cannot rename " + tmp + " into place: " + std::strerror(errno));
}

std::vector<std::uint8_t> read_container(const std::string& path, std::string_view magic8, std::uint32_t version,
                                         const char* kind, std::uint64_t max_bytes) {
  return read_container_versions(path, magic8, version, version, kind, max_bytes).payload;
}

std::vector<std::uint8_t> decode_container(std::string_view all, const std::string& name, std::string_view magic8,
                                           std::uint32_t version, const char* kind) {
  return decode_container_versions(all, name, magic8, version, version, kind).payload;
}

VersionedPayload read_container_versions(const std::string& path, std::string_view magic8, std::uint32_t min_version,
                                         std::uint32_t max_version, const char* kind, std::uint64_t max_bytes) {
  std::string all;
  try {
    all = read_regular_file(path, max_bytes, kind);
  } catch (const FileError& e) { throw FormatError(e.what()); }
  return decode_container_versions(all, path, magic8, min_version, max_version, kind);
}

VersionedPayload decode_container_versions(std::string_view all, const std::string& name, std::string_view magic8,
                                           std::uint32_t min_version, std::uint32_t max_version, const char* kind) {
  const std::string path = printable(name);
  constexpr std::size_t kHeader = 32;
  if (all.size() < kHeader)
    throw FormatError(path + ": truncated: " + std::to_string(all.size()) +
                      " bytes, shorter than the 32-byte header of a " + kind);
  if (std::memcmp(all.data(), magic8.data(), 8) != 0)
    throw FormatError(path + ": not a " + std::string(kind) + " (bad magic; expected \"" + std::string(magic8) + "\")");
  std::uint32_t file_version;
  std::memcpy(&file_version, all.data() + 8, 4);
  if (file_version < min_version || file_version > max_version)
    throw FormatError(path + ": " + kind + " format version " + std::to_string(file_version) +
                      (min_version == max_version
                           ? ", this build reads version " + std::to_string(min_version)
                           : ", this build reads versions " + std::to_string(min_version) + " to " +
                                 std::to_string(max_version)));
  std::uint64_t len, sum;
  std::memcpy(&len, all.data() + 16, 8);
  std::memcpy(&sum, all.data() + 24, 8);
  if (all.size() - kHeader != len)
    throw FormatError(path + ": " + (all.size() - kHeader < len ? "truncated" : "trailing bytes") + ": header says " +
                      std::to_string(len) + " payload bytes, file has " + std::to_string(all.size() - kHeader));
  VersionedPayload out;
  out.version = file_version;
  out.payload.assign(all.begin() + kHeader, all.end());
  if (fnv1a64(out.payload.data(), out.payload.size()) != sum)
    throw FormatError(path + ": checksum mismatch: the " + std::string(kind) + " is corrupt");
  return out;
}

}  // namespace duet::learn
