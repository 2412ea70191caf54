// Baseline ordering policies (man duet-sim(1) lists them):
//   fifo         arrival order, strict head-of-line blocking
//   sjf-oracle   shortest true duration first (oracle, non-preemptive)
//   srtf-oracle  shortest true remaining time first (oracle, preemptive)
//   qssf         Helios QSSF (SC'21): least predicted GPU time first; the
//                duration is predicted from finished jobs of the same user (vc
//                when no user) and GPU count, else same user, else same GPU
//                count, else all jobs (mean of the history); non-preemptive
//   tiresias-las Tiresias' discretised LAS on GPU-seconds (dlas-gpu) and
//   tiresias-dlas  the same on seconds (dlas): policy/baselines/dlas.h
//   multifactor  Slurm multifactor-like: priority = 1000 * min(age / 7 d, 1)
//                + 1000 * (1 - gpus / cluster GPUs) (PriorityFavorSmall);
//                highest first, non-preemptive, no blocking (backfill-like)
// Ties always go to the earlier submit, then the lower job id.
#pragma once

#include <memory>
#include <string_view>

#include "policy/core/policy.h"

namespace duet {

std::unique_ptr<OrderingPolicy> make_fifo();
std::unique_ptr<OrderingPolicy> make_sjf_oracle();
std::unique_ptr<OrderingPolicy> make_srtf_oracle();
std::unique_ptr<OrderingPolicy> make_qssf();
std::unique_ptr<OrderingPolicy> make_multifactor();

}  // namespace duet
