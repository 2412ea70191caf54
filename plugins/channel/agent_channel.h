// The in-process channel between duet's two agents in slurmctld: select/duet
// (placement) publishes its message to the ordering agent; priority/duet
// (ordering) publishes, at each re-score, one message per pending job for
// the placement agent. The plugins are dlopen'ed RTLD_LOCAL, so the one
// instance lives in a tiny shared library that both link (libduet_channel.so,
// installed next to them and found through their $ORIGIN rpath).
//
// Plain data, copied in and out under the channel's own mutex; no Slurm lock
// is ever taken inside and no call blocks for longer than a copy. Nothing
// throws: a failed copy (out of memory) reads as "no message", which the
// agents treat as zeros. No Slurm and no LibTorch header here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

namespace duet::plugin {

class AgentChannel {
 public:
  AgentChannel() = default;
  AgentChannel(const AgentChannel&) = delete;
  AgentChannel& operator=(const AgentChannel&) = delete;

  // Each plugin attaches its agent at init in slurmctld and detaches at fini
  // (which also drops what it published), so the other can log whether it
  // is connected. select/duet loads before priority/duet in slurmctld.
  enum class Agent { kOrdering, kPlacement };
  void attach(Agent agent, bool attached) noexcept;
  bool attached(Agent agent) const noexcept;

  // placement -> ordering. Replaces the message (empty: none = zeros).
  void publish_placement_message(std::span<const float> message) noexcept;
  // Copies the latest message into `out` (cleared when there is none);
  // returns whether there was one.
  bool placement_message(std::vector<float>& out) const noexcept;

  // ordering -> placement, one re-score pass: job_ids[i]'s message is
  // messages[i * width, (i + 1) * width). Replaces the whole previous set,
  // so jobs no longer pending (started, finished, held) drop out. Mismatched
  // sizes publish nothing (the set is cleared).
  void publish_order_messages(std::span<const std::uint32_t> job_ids, std::span<const float> messages,
                              std::size_t width) noexcept;
  // Copies job_id's message from the latest pass into `out` (cleared when
  // the job was not in it); returns whether there was one.
  bool order_message(std::uint32_t job_id, std::vector<float>& out) const noexcept;
  void clear_order_messages() noexcept;
  std::size_t order_message_count() const noexcept;

  // What each side has published (test and log aid): count of publications.
  std::uint64_t placement_publications() const noexcept;
  std::uint64_t order_publications() const noexcept;

 private:
  mutable std::mutex mu_;  // guards all below
  bool ordering_attached_ = false, placement_attached_ = false;
  std::vector<float> placement_;
  std::vector<std::uint32_t> ids_;  // ascending; row r of order_ is ids_[r]'s
  std::vector<float> order_;
  std::size_t width_ = 0;
  std::uint64_t placement_pubs_ = 0, order_pubs_ = 0;
};

// The process-wide channel (in libduet_channel.so: one per process however
// many plugins link it). Never null.
AgentChannel* agent_channel() noexcept;

}  // namespace duet::plugin
