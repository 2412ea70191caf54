// The agents' channel: built as its own shared library (libduet_channel.so)
// so that priority/duet and select/duet, each dlopen'ed RTLD_LOCAL, share the
// one instance below (the dynamic loader maps a DT_NEEDED library once per
// process, matched by its SONAME).
#include "plugins/channel/agent_channel.h"

#include <algorithm>
#include <numeric>

namespace duet::plugin {

void AgentChannel::attach(Agent agent, bool attached) noexcept {
  std::vector<float> drop;
  std::vector<std::uint32_t> drop_ids;
  std::lock_guard<std::mutex> lk(mu_);
  if (agent == Agent::kPlacement) {
    placement_attached_ = attached;
    if (!attached) placement_.swap(drop);
  } else {
    ordering_attached_ = attached;
    if (!attached) {
      ids_.swap(drop_ids);
      order_.swap(drop);
      width_ = 0;
    }
  }
}

bool AgentChannel::attached(Agent agent) const noexcept {
  std::lock_guard<std::mutex> lk(mu_);
  return agent == Agent::kPlacement ? placement_attached_ : ordering_attached_;
}

void AgentChannel::publish_placement_message(std::span<const float> message) noexcept {
  std::lock_guard<std::mutex> lk(mu_);
  try {
    placement_.assign(message.begin(), message.end());
  } catch (...) {
    placement_.clear();  // out of memory: "no message" (zeros)
  }
  ++placement_pubs_;
}

bool AgentChannel::placement_message(std::vector<float>& out) const noexcept {
  std::lock_guard<std::mutex> lk(mu_);
  try {
    out.assign(placement_.begin(), placement_.end());
  } catch (...) { out.clear(); }
  return !out.empty();
}

void AgentChannel::publish_order_messages(std::span<const std::uint32_t> job_ids, std::span<const float> messages,
                                          std::size_t width) noexcept {
  // Sorted copies are built before taking the lock: readers wait for a swap only.
  std::vector<std::uint32_t> ids;
  std::vector<float> rows;
  bool ok = width > 0 && messages.size() == job_ids.size() * width;
  if (ok) {
    try {
      std::vector<std::size_t> order(job_ids.size());
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t a, std::size_t b) { return job_ids[a] < job_ids[b]; });
      ids.reserve(order.size());
      rows.reserve(messages.size());
      for (std::size_t i : order) {
        if (!ids.empty() && ids.back() == job_ids[i]) continue;  // a job twice: its first row
        ids.push_back(job_ids[i]);
        rows.insert(rows.end(), messages.begin() + static_cast<std::ptrdiff_t>(i * width),
                    messages.begin() + static_cast<std::ptrdiff_t>((i + 1) * width));
      }
    } catch (...) { ok = false; }
  }
  if (!ok) {
    ids.clear();
    rows.clear();
  }
  std::lock_guard<std::mutex> lk(mu_);
  ids_.swap(ids);
  order_.swap(rows);
  width_ = ok ? width : 0;
  ++order_pubs_;
}

bool AgentChannel::order_message(std::uint32_t job_id, std::vector<float>& out) const noexcept {
  std::lock_guard<std::mutex> lk(mu_);
  out.clear();
  auto it = std::lower_bound(ids_.begin(), ids_.end(), job_id);
  if (it == ids_.end() || *it != job_id) return false;
  const std::size_t r = static_cast<std::size_t>(it - ids_.begin());
  try {
    out.assign(order_.begin() + static_cast<std::ptrdiff_t>(r * width_),
               order_.begin() + static_cast<std::ptrdiff_t>((r + 1) * width_));
  } catch (...) { out.clear(); }
  return !out.empty();
}

void AgentChannel::clear_order_messages() noexcept {
  std::vector<std::uint32_t> ids;
  std::vector<float> rows;
  std::lock_guard<std::mutex> lk(mu_);
  ids_.swap(ids);  // freed after the lock is released
  order_.swap(rows);
  width_ = 0;
}

std::size_t AgentChannel::order_message_count() const noexcept {
  std::lock_guard<std::mutex> lk(mu_);
  return ids_.size();
}

std::uint64_t AgentChannel::placement_publications() const noexcept {
  std::lock_guard<std::mutex> lk(mu_);
  return placement_pubs_;
}

std::uint64_t AgentChannel::order_publications() const noexcept {
  std::lock_guard<std::mutex> lk(mu_);
  return order_pubs_;
}

AgentChannel* agent_channel() noexcept {
  static AgentChannel channel;  // constant-initialised members: no throw
  return &channel;
}

}  // namespace duet::plugin
