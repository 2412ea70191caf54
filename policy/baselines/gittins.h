// Gittins-index ordering for jobs whose durations are unknown but whose
// distribution is estimated from finished jobs (Gittins 1989; for M/G/1 it
// minimises mean response time among policies that know only the
// distribution and each job's attained service, Aalto et al. 2009).
//
// A job's duration X is log-normal with the median and log spread that the
// history of finished jobs gives it (per user, else per VC, else all jobs).
// With attained service a, its *Gittins rank* is the least expected further
// service per completion over every next quantum q:
//     rank(a) = inf_q  E[min(X - a, q) | X > a] / P(X - a <= q | X > a)
// (seconds; the inverse of the Gittins index). Low rank runs first. For a
// distribution with a decreasing hazard it grows with a (LAS-like); where
// the hazard rises it falls (SRPT-like). It is scale-free: seconds in,
// seconds out, from the workload's own statistics.
//
//   gittins   ordering, preemptive: rank(a) x GPUs (GPU-seconds per
//             completion); a running job counts at half its rank, so jobs
//             of nearly equal rank do not displace each other every period
#pragma once

#include <memory>

#include "policy/core/policy.h"

namespace duet {

inline constexpr double kGittinsRunningCredit = 0.5;

std::unique_ptr<OrderingPolicy> make_gittins();

}  // namespace duet
