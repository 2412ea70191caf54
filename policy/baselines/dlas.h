// Tiresias' discretised LAS (Gu et al., NSDI'19), as its published simulator
// runs it (run_sim.py, dlas_sim_jobs; queues from jobs.py):
//   queues     3, by attained service since the job last entered Q0: Q0 below
//              3250, Q1 below 7200, Q2 above (seconds for dlas, GPU-seconds =
//              seconds x GPUs for dlas-gpu); a running job that reaches its
//              queue's limit drops one queue, to that queue's end
//   order      queue by queue; inside a queue, arrival at its end (arrivals,
//              demotions, promotions); after every decision the jobs left
//              pending move behind the running ones (both keep their order),
//              so a pending job never displaces a running one of its queue
//   start      greedy over that order: a job runs if its GPUs fit in what the
//              jobs before it left of the cluster (counting GPUs only), else it
//              waits (preempted if running); later, smaller jobs may still run
//   promotion  with knob K > 0, a pending job outside Q0 that has waited
//              K x its executed seconds since it last ran in Q0 goes back to Q0
//              with its executed time zeroed (solve_starvation); K = 0 (the
//              simulator's dlas and dlas-gpu) never promotes
//   decisions  arrivals, completions, and the next queue jump: demotion at
//              now + (limit - executed) for dlas, now + ceil((limit -
//              executed) / GPUs) for dlas-gpu (the simulator's formula: it
//              subtracts seconds from GPU-seconds, so a job that has run before
//              is demoted late, at the first decision after it crossed), and
//              promotion at now + K x executed - waited (next_decision_s)
// Names (duet-sim(1)): tiresias-las = dlas-gpu, tiresias-dlas = dlas; both K = 0.
// gavel-las (heterogeneity.h) is dlas-gpu on effective service, in dlas.cc too.
#pragma once

#include <memory>

#include "policy/core/policy.h"

namespace duet {

inline constexpr double kDlasQueueLimits[] = {3250.0, 7200.0};  // Q0 | Q1 | Q2

// gpu_time: attained service in GPU-seconds (dlas-gpu), else seconds (dlas).
// promote_knob: starvation promotion factor K; 0 = off.
std::unique_ptr<OrderingPolicy> make_dlas(bool gpu_time, double promote_knob = 0);

}  // namespace duet
