// The plugins' Slurm-free seam: what priority/duet and select/duet call and
// what duet's agents implement. No Slurm and no LibTorch header here or in
// the files below; all of it is unit-tested without Slurm.
//
//   duet_conf.h          duet.conf (man duet.conf(5))
//   views.h              the plain job and node views a policy sees
//   order_scorer.h       the ordering agent and its factory
//   node_ranker.h, observer.h, placement_agent.h
//                        the placement agent and its factory
//   priority_ladder.h    from a ranking to Slurm priorities (and CPU-only jobs')
//   site_factor_scale.h  from a ranking to Slurm site factors
//   preempt_plan.h       which running jobs a preemptive model preempts
//   explain.h            the job's explanation (its SystemComment)
//   job_hints.h          what a job may tell duet in its --comment
//   file_trust.h, file_cksum.h, file_text.h
//                        checks and names for the files slurmctld reads
//
// Errors, in all of plugins/: a function that can fail returns bool and
// puts why into its last parameter, `std::string* error` (one line that names
// the file or key and the cause; left alone on success). A factory returns
// nullptr instead (make_placement_agent: null parts, one line per failed part
// in `std::vector<std::string>* errors`). Nothing throws across the seam: the
// agents catch their own exceptions and report them through *error, and the
// C-ABI entry points (init, fini, priority_p_*, select_p_*, slurm_spank_*)
// catch everything else and log it; priority/duet then falls back to the
// age+size scorer and select/duet to cons_tres's own node order.
#pragma once

#include "plugins/seam/duet_conf.h"
#include "plugins/seam/order_scorer.h"
#include "plugins/seam/placement_agent.h"
#include "plugins/seam/views.h"
