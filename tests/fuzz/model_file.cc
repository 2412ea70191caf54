// Fuzz target: the model file decoder (duet-model(5), MODEL FILE), LibTorch-free.
// An input that starts with the magic is a whole file; any other input is a
// payload that the target wraps in a valid header (length and FNV-1a checksum)
// so mutations reach the decoder behind the checksum. FormatError is the
// documented answer to bad input; a crash or any other exception is a finding.
#include <cstring>
#include <vector>

#include "policy/learn/gp/binary_io.h"
#include "policy/learn/model/model_file.h"
#include "tests/fuzz/fuzz_target.h"
#include "tests/fuzz/mem_file.h"

namespace {

void put_le(std::vector<std::uint8_t>& b, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

// Header per policy/learn/gp/binary_io.h: magic, version, reserved, length, checksum.
std::vector<std::uint8_t> wrap(const std::uint8_t* payload, std::size_t size) {
  std::vector<std::uint8_t> b(duet::learn::kModelMagic, duet::learn::kModelMagic + 8);
  put_le(b, duet::learn::kModelVersion, 4);
  put_le(b, 0, 4);
  put_le(b, size, 8);
  put_le(b, duet::learn::fnv1a64(payload, size), 8);
  b.insert(b.end(), payload, payload + size);
  return b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static fuzz::MemFile file;
  const bool whole = size >= 8 && std::memcmp(data, duet::learn::kModelMagic, 8) == 0;
  std::vector<std::uint8_t> wrapped;
  if (!whole) wrapped = wrap(data, size);
  const std::uint8_t* bytes = whole ? data : wrapped.data();
  const std::size_t n = whole ? size : wrapped.size();
  try {
    duet::learn::Model m = duet::learn::load_model(file.set(bytes, n));
    for (const auto& w : m.weights) (void)m.weight(w.name);
  } catch (const duet::learn::FormatError&) {}
  return 0;
}
