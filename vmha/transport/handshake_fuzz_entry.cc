#include "vmha/transport/handshake_fuzz_entry.h"

#include <span>
#include <vector>

#include "vmha/transport/frame_reader.h"
#include "vmha/transport/handshake.h"

namespace vmha {
namespace {

// The peer's bytes as a channel: receive() decodes them like SocketChannel
// does; once they are used up the connection counts as closed (no waiting).
class ReplayChannel final : public Channel {
 public:
  explicit ReplayChannel(std::span<const std::uint8_t> bytes) { reader_.append(bytes); }
  Status send_encoded(std::span<const std::uint8_t>) override { return {}; }
  Result<Frame> receive(std::chrono::milliseconds) override {
    bool have = false;
    auto f = reader_.next(&have);
    if (!f.ok() || have) return f;
    return Status::error("connection lost: " + reader_.describe_partial());
  }
  Status pull(std::span<const PullOp>) override { return Status::error("pull: not here"); }
  const std::vector<RegionInfo>& remote_regions() const override { return none_; }
  bool connected() const override { return true; }
  std::string peer() const override { return "fuzz"; }
  void close() override {}

 private:
  FrameReader reader_{kMaxUnauthenticatedPayload};
  std::vector<RegionInfo> none_;
};

}  // namespace
}  // namespace vmha

extern "C" int vmha_fuzz_backup_handshake(const std::uint8_t* data, std::size_t size) {
  static const auto auth = vmha::SharedKeyAuthenticator::from_key(std::vector<std::uint8_t>(32, 0x5a));
  vmha::ReplayChannel channel({data, size});
  (void)vmha::authenticate_as_backup(channel, *auth.value(), std::chrono::milliseconds(0));
  return 0;
}
