// Incremental frame decoding for byte streams (the pre-authentication socket,
// the fuzz entry): bytes go in as they arrive, whole verified frames come out.
// The header is checked (magic, checksum, version, type, length <= limit)
// before its length is trusted, so a hostile length never makes us buffer more
// than the limit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vmha/common/status.h"
#include "vmha/protocol/frame.h"

namespace vmha {

class FrameReader {
 public:
  explicit FrameReader(std::uint32_t max_payload) : max_payload_(max_payload) {}

  void set_max_payload(std::uint32_t n) { max_payload_ = n; }
  void append(std::span<const std::uint8_t> bytes) { buf_.insert(buf_.end(), bytes.begin(), bytes.end()); }
  // A whole frame if one is buffered (*have = true); an error if the buffered
  // bytes cannot start a valid frame (the stream is unusable afterwards).
  Result<Frame> next(bool* have);
  // "truncated Hello frame (12 of 40 bytes)" for a stream that ended early;
  // empty when nothing partial is buffered.
  std::string describe_partial() const;

 private:
  std::uint32_t max_payload_;
  std::vector<std::uint8_t> buf_;
  std::size_t start_ = 0;
};

}  // namespace vmha
