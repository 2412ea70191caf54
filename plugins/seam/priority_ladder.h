// From a ranking to Slurm priorities: monotone in the ranking, spaced so that
// a job submitted between two re-scores can be slotted between its neighbours.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace duet::plugin {

inline constexpr uint32_t kLadderBase = 10000;  // priority of the last job
inline constexpr uint32_t kLadderStep = 1000;   // gap between neighbours

class PriorityLadder {
 public:
  // Priorities for jobs with these scores (higher score = higher priority).
  // Ties keep the input order (callers sort by submit time, then job id).
  // Remembers the result for slot().
  std::vector<uint32_t> assign(std::span<const double> scores);

  // A priority for a new job with `score`: strictly between the last ranking's
  // neighbours (after equal scores), above the top or below the bottom.
  uint32_t slot(double score) const;

  size_t size() const { return rungs_.size(); }

 private:
  struct Rung {
    double score;
    uint32_t priority;
  };
  std::vector<Rung> rungs_;  // by score, highest first
};

}  // namespace duet::plugin
