// Heterogeneity-aware baselines in the spirit of Gavel (Narayanan et al.,
// OSDI'20), without its solver: each job is placed by its own measured
// speed on each GPU type, and LAS counts the service a job got at the speed
// it got it.
//   type-affinity  placement: the machine where this job runs fastest by
//                  Gavel's per-job-type throughput, R(job type, GPU type) x
//                  the machine's known factor (fastest-first uses the type's
//                  mean over all job types instead); among equally fast
//                  machines the one with the fewest free GPUs that fits
//                  (best-fit). A job that fits no one machine is spread over
//                  machines in that speed order. Types outside the table, or
//                  given a `speed` in the cluster file, have one speed for
//                  every job type; a type of the table is taken to follow its
//                  per-job-type ratios. The learned placement reads the
//                  same factors (policy/core/job_type_speeds.h).
//   gavel-las      ordering: Tiresias' discretised LAS as tiresias-las runs
//                  it (dlas.h: queues at 3250 and 7200 GPU-seconds, demoted
//                  jobs at a queue's end, pending jobs behind running ones),
//                  on effective service: the seconds a job runs count at the
//                  speed of the placement it holds (vs a V100, for its job
//                  type), so a job that ran on slow GPUs has received less
//                  and comes first. Speeds from a paired type-affinity
//                  placement; with any other placement every speed is 1 and
//                  it ranks as tiresias-las (but re-ranks a running job at
//                  its true queue crossing). Preemptive; in dlas.cc.
#pragma once

#include <cstdint>
#include <memory>

#include "policy/core/policy.h"
#include "policy/model/throughput.h"

namespace duet {

// What a placement knows of the speed of the placement it gave a job (vs a
// V100, for the job's type); kUnknown for a job it did not place.
class PlacedSpeeds {
 public:
  virtual ~PlacedSpeeds() = default;
  virtual double placed_speed(int64_t job) const = 0;
};

// table: Gavel's per-job-type throughputs; null: every job type runs at its
// type's mean speed (then it places like fastest-first, with best-fit ties).
std::unique_ptr<PlacementPolicy> make_type_affinity(const ThroughputTable* table);
std::unique_ptr<OrderingPolicy> make_gavel_las();

}  // namespace duet
