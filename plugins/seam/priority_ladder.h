// From a ranking to Slurm priorities: monotone in the ranking, spaced so that
// a job submitted between two re-scores can be slotted between its neighbours.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace duet::plugin {

inline constexpr uint32_t kLadderBase = 10000;  // priority of the last job
inline constexpr uint32_t kLadderStep = 1000;   // gap between neighbours
// The lowest priority a GPU job gets: slot() goes at most half a step below
// the bottom rung, and the bottom rung is kLadderBase.
inline constexpr uint32_t kLadderFloor = kLadderBase - kLadderStep / 2;

// Jobs without GPUs are not ranked by the agent. They get kCpuJobPriority,
// moved by their nice value (nice - NICE_OFFSET, subtracted as Slurm does)
// but kept in [1, kCpuJobMax], below every GPU job. Slurm orders equal
// priorities by submit time, then job id, so they run FIFO among themselves;
// an admin who wants one first sets its priority (scontrol update).
inline constexpr uint32_t kCpuJobPriority = kLadderBase / 2;
inline constexpr uint32_t kCpuJobMax = kLadderFloor - kLadderStep / 2;
uint32_t cpu_job_priority(int64_t nice_offset);

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
