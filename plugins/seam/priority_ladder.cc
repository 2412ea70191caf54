#include "plugins/seam/priority_ladder.h"

#include <algorithm>
#include <numeric>

namespace duet::plugin {

std::vector<uint32_t> PriorityLadder::assign(std::span<const double> scores) {
  const size_t n = scores.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  // Cap so the ladder stays far below Slurm's priority range for FIFO jobs.
  const uint64_t max_jobs = (UINT32_MAX / 2 - kLadderBase) / kLadderStep;
  std::vector<uint32_t> prio(n, kLadderBase);
  rungs_.clear();
  rungs_.reserve(n);
  for (size_t rank = 0; rank < n; ++rank) {
    uint64_t above = std::min<uint64_t>(n - 1 - rank, max_jobs);
    uint32_t p = static_cast<uint32_t>(kLadderBase + above * kLadderStep);
    prio[order[rank]] = p;
    rungs_.push_back({scores[order[rank]], p});
  }
  return prio;
}

uint32_t cpu_job_priority(int64_t nice_offset) {
  const int64_t p = static_cast<int64_t>(kCpuJobPriority) - nice_offset;
  return static_cast<uint32_t>(std::clamp<int64_t>(p, 1, kCpuJobMax));
}

uint32_t PriorityLadder::slot(double score) const {
  if (rungs_.empty()) return kLadderBase;
  auto it = std::find_if(rungs_.begin(), rungs_.end(), [&](const Rung& r) { return r.score < score; });
  if (it == rungs_.begin()) return it->priority + kLadderStep / 2;
  uint32_t upper = std::prev(it)->priority;
  if (it == rungs_.end()) return upper > kLadderStep / 2 ? upper - kLadderStep / 2 : 1;
  return it->priority + (upper - it->priority) / 2;
}

}  // namespace duet::plugin
