// The gittins baseline ordering (duet-sim(1)): the Gittins rank
// (policy/util/gittins_index.h) of each job's log-normal duration, whose
// median and log spread come from finished jobs of its user (else its VC,
// else all jobs; 1 h and 1.5 before two have finished), after the seconds it
// has run, times its GPUs (GPU-seconds per completion); lowest first, a
// running job at kGittinsRunningCredit of its rank. Preemptive.
#pragma once

#include <memory>

#include "policy/core/policy.h"

namespace duet {

std::unique_ptr<OrderingPolicy> make_gittins();

}  // namespace duet
