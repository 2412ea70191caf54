// Fuzz target: the backup's checkpoint path — CheckpointReceiver driving an
// ImageStore — fed by a primary whose messages come from the input. No
// transport: a channel hands the receiver the input's messages and serves
// pulls from a fake primary memory region.
//
// Input: a sequence of records [u8 type][u8 epoch][u16 LE length][payload].
// (Frames on the wire carry CRCs that the transport checks before the
// receiver sees them; the frame target fuzzes that layer.) The receiver must
// answer anything with a step or a Status error; a crash is a finding.
#include <chrono>
#include <cstring>
#include <deque>
#include <vector>

#include "tests/fuzz/fuzz_target.h"
#include "vmha/backup/image_store.h"
#include "vmha/backup/lease.h"
#include "vmha/checkpoint/checkpoint_receiver.h"

namespace {

constexpr std::size_t kPage = 4096;
constexpr std::uint64_t kImagePages = 16;  // backup image
constexpr std::size_t kRemotePages = 24;   // primary region (more than the image)

class InputChannel final : public vmha::Channel {
 public:
  InputChannel(std::deque<vmha::Frame> frames, std::vector<std::uint8_t>& remote)
      : frames_(std::move(frames)), remote_(remote) {
    regions_.push_back(vmha::RegionInfo{0, reinterpret_cast<std::uint64_t>(remote_.data()), remote_.size(), {}});
  }
  vmha::Status send_encoded(std::span<const std::uint8_t>) override { return {}; }
  vmha::Result<vmha::Frame> receive(std::chrono::milliseconds) override {
    if (frames_.empty()) return vmha::Status::error("timeout: input exhausted");
    vmha::Frame f = std::move(frames_.front());
    frames_.pop_front();
    return f;
  }
  // Bounds as the real transport checks them: region id, then offset + length.
  vmha::Status pull(std::span<const vmha::PullOp> ops) override {
    for (const auto& op : ops) {
      if (op.region >= regions_.size() || op.offset > remote_.size() || op.length > remote_.size() - op.offset)
        return vmha::Status::error("pull outside the primary's region");
      std::memcpy(op.dest, remote_.data() + op.offset, op.length);
    }
    return {};
  }
  const std::vector<vmha::RegionInfo>& remote_regions() const override { return regions_; }
  bool connected() const override { return true; }
  std::string peer() const override { return "fuzz"; }
  void close() override {}
  bool drained() const { return frames_.empty(); }

 private:
  std::deque<vmha::Frame> frames_;
  std::vector<std::uint8_t>& remote_;
  std::vector<vmha::RegionInfo> regions_;
};

std::deque<vmha::Frame> split(const std::uint8_t* data, std::size_t size) {
  std::deque<vmha::Frame> frames;
  std::size_t pos = 0;
  while (size - pos >= 4) {
    std::uint16_t type = data[pos];
    std::uint64_t epoch = data[pos + 1];
    std::size_t len = data[pos + 2] | std::size_t(data[pos + 3]) << 8;
    pos += 4;
    len = std::min(len, size - pos);
    frames.push_back(vmha::Frame{static_cast<vmha::MessageType>(type), epoch,
                                 std::vector<std::uint8_t>(data + pos, data + pos + len)});
    pos += len;
  }
  return frames;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Page i of the primary holds byte i, so pulled content is checkable.
  std::vector<std::uint8_t> remote(kRemotePages * kPage);
  for (std::size_t i = 0; i < remote.size(); ++i) remote[i] = static_cast<std::uint8_t>(i / kPage);
  InputChannel channel(split(data, size), remote);
  vmha::ImageStore store(kPage, kImagePages);
  vmha::Lease lease(std::chrono::seconds(5), vmha::Lease::Clock::now());
  vmha::CheckpointReceiver rx(channel, store, lease);
  while (!channel.drained()) {
    auto s = rx.step(std::chrono::milliseconds(0));
    if (!s.ok() || s.value().event == vmha::CheckpointReceiver::Event::kBye ||
        s.value().event == vmha::CheckpointReceiver::Event::kStandDown)
      break;  // the backup drops the channel
  }
  // Readers of the committed image see a consistent one whatever came before.
  store.read_committed([](const vmha::CommittedImage& img) {
    if (img.memory.size() != kImagePages * kPage) __builtin_trap();
  });
  return 0;
}
