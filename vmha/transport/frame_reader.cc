#include "vmha/transport/frame_reader.h"

namespace vmha {

Result<Frame> FrameReader::next(bool* have) {
  *have = false;
  std::span<const std::uint8_t> buf(buf_.data() + start_, buf_.size() - start_);
  if (buf.size() < kFrameHeaderSize) return Frame{};
  auto h = decode_frame_header(buf, max_payload_);
  if (!h.ok()) return h.status();
  std::size_t total = kFrameHeaderSize + h.value().payload_length;
  if (buf.size() < total) return Frame{};
  auto payload = buf.subspan(kFrameHeaderSize, h.value().payload_length);
  if (Status s = verify_frame_payload(h.value(), payload); !s.ok()) return s;
  Frame f{h.value().type, h.value().epoch, {payload.begin(), payload.end()}};
  start_ += total;
  if (start_ == buf_.size()) {
    buf_.clear();
    start_ = 0;
  }
  *have = true;
  return f;
}

std::string FrameReader::describe_partial() const {
  std::size_t pending = buf_.size() - start_;
  if (pending == 0) return "";
  std::string what = "frame";
  std::size_t expected = kFrameHeaderSize;
  if (pending >= kFrameHeaderSize) {
    auto h = decode_frame_header({buf_.data() + start_, pending}, max_payload_);
    if (h.ok()) {
      what = message_type_name(static_cast<std::uint16_t>(h.value().type)) + " frame";
      expected += h.value().payload_length;
    }
  }
  return "truncated " + what + " (" + std::to_string(pending) + " of " + std::to_string(expected) + " bytes)";
}

}  // namespace vmha
