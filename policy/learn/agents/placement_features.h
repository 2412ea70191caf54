// Per-machine features that the placement head scores, for one job.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace duet::learn {

class PerformanceGp;

// Feature row layout: kPlacementFeatures floats per candidate machine, one
// column per PlacementFeature. Code names the columns, never their numbers.
enum PlacementFeature : std::uint32_t {
  kGpMean = 0,    // GP posterior mean of log(speed / expected) for the job's type
  kGpSd,          // GP posterior standard deviation (risk)
  kRelSpeed,      // relative speed of the machine for the job (reference type = 1;
                  // job_machines, placement_routine.h)
  kPredLogSpeed,  // predicted log speed: log(relative speed) + GP mean
  kFreeShare,     // free GPUs / total GPUs
  kJobShare,      // min(free GPUs, GPUs asked) / GPUs asked (share of the job this machine can hold)
  kLeftOver,      // (free GPUs - GPUs asked) / total GPUs (negative: needs other machines;
                  // small non-negative: a tight, best-fit placement)
  kColocated,     // jobs already running on the machine (co-location)
  kLocality,      // in [0, 1] (1: same rack as the job's other machines / data)
  kPlacementFeatures
};

// One candidate machine's current state, as the scheduler sees it.
struct MachineState {
  std::uint32_t machine = 0;  // index into the GP's machine list
  std::uint16_t free_gpus = 0;
  std::uint16_t total_gpus = 1;
  std::uint16_t colocated_jobs = 0;
  float rel_speed = 1.0f;  // the machine's speed for the job (MachineView::speed, as job_machines gives it)
  float locality = 0.0f;
};

struct PlacementJob {
  std::uint32_t job_type = 0;  // GP job-type index (unknown: any value >= count)
  std::uint16_t gpus = 1;
};

// Fills rows (resized to machines.size() * kPlacementFeatures, row-major).
void placement_features(const PerformanceGp& gp, const PlacementJob& job, std::span<const MachineState> machines,
                        std::vector<float>& rows);

// The speed prior under the placement head's score, from one feature row:
// weight * (predicted log speed - risk_aversion * GP sd). The placement
// routine (placement_routine.h) adds it for every caller. Risk aversion is 0
// since 2026-12-05: at 1 it held jobs off machines the GP had seen least,
// and dropping the term lowered mean JCT on held-out sources and on Philly
// alike (models/HISTORY.md, *No risk term in the speed prior*). The head
// still sees the GP sd as a feature.
inline constexpr double kPlacementPriorWeight = 1.0;
inline constexpr double kPlacementRiskAversion = 0.0;
inline double placement_prior(const float* row, double weight = kPlacementPriorWeight,
                              double risk_aversion = kPlacementRiskAversion) {
  return weight * (row[kPredLogSpeed] - risk_aversion * row[kGpSd]);
}

}  // namespace duet::learn
