// The job's explanation, kept in its SystemComment (`scontrol show job`;
// also stored in accounting, so that `sacct -o SystemComment` shows it after
// the job ends: by select/duet once the job has started, at the latest at its
// end, or with another select plugin by the ordering host,
// plugins/ordering/explanation_store.h). It reads
//   "duet: score S at submit by SCORER"           at submit,
//   "duet: rank R/N score S by SCORER; waits for ...; ahead: ..."
//                                                  at each re-score while pending,
//   "...; nodes LIST: REASON; ranking A=P B=P; not taken: A (needs 4 GPUs, 0 free)"
// once started, and after a preemption (duet.conf(5), Preemption=requeue)
//   "duet: rank R/N score S by SCORER; preempted Kx, last: WHAT"
// where the preemption part stays through later re-scores and placements.
// The ranking lists only nodes the job may use (its partition,
// its GPU type, not excluded), best first; "not taken" says why each node
// ranked above a chosen one was not used. duet never overwrites a
// SystemComment that it did not write (one not starting with "duet:").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/seam/views.h"

namespace duet::plugin {

inline constexpr std::string_view kExplainPrefix = "duet:";
// At most this many bytes (Slurm's own burst buffer comments stop at 1024);
// a longer text ends in "...".
inline constexpr size_t kExplainMaxBytes = 1000;
// Nodes named in the ranking; the rest are counted ("+3 more").
inline constexpr size_t kExplainMaxRanked = 16;

bool explain_owned(const char* system_comment);  // NULL, "" or "duet:..."

// rank 0 = not ranked yet ("duet: score S at submit by SCORER").
std::string explain_rank(size_t rank, size_t count, double score, const std::string& scorer);

// The preemption part of `current` ("; preempted ..." up to its placement
// part), or "" when it has none; kept by each new rank text.
std::string explain_preemption_part(const char* current);

// How often `current` says the job was preempted (0 when it does not).
unsigned explain_preemptions(const char* current);

// `current` after one more preemption: its rank text and the placement of
// the run that ended kept, its preemption part now "; preempted Kx, last:
// WHAT" (K one more than before). The next rank text drops the placement.
std::string explain_preempted(const char* current, const std::string& what);

// `current` with its placement part replaced by the given nodes and reason.
std::string explain_placement(const char* current, const std::vector<std::string>& nodes, const std::string& reason);

// A node the job may use, as the placement agent ranked it for the job, and
// why the job could not take it when it was placed ("" = it could).
struct RankedNode {
  std::string name;
  double preference = 0;  // higher = better
  std::string not_taken;  // "needs 4 GPUs, 0 free", "down", "drained", ...
};

// "RANKER_REASON; ranking A=P B=P ...; not taken: A (WHY), B (WHY)": the ranking
// best first (ties in the given order); "not taken" names each node ranked
// above the worst chosen node that was not chosen, with its not_taken (or
// "cons_tres chose otherwise" when it was free).
std::string placement_reason(const std::string& ranker_reason, std::vector<RankedNode> ranked,
                             const std::vector<std::string>& chosen);

// "needs 4 GPUs, 3 free" ("needs 4 v100 GPUs, 3 free" for a typed
// request): why a node could not take a job's per-node share of GPUs.
std::string explain_gpus_short(uint64_t needed, uint64_t free, const std::string& type);

// Distinct 1-based ranks of `values` (higher first); equal values go by
// increasing job id, as slurmctld's priority sort orders equal priorities.
std::vector<size_t> distinct_ranks(const std::vector<uint32_t>& values, const std::vector<uint32_t>& job_ids);

// Why pending job jobs[i] waits, from a re-score's view: "; waits for 4 v100
// GPUs on one node: node3 has the most free, 3 of 4; ahead: 12 (1 GPU), 13
// (2 GPUs)": the GPUs it asks for against the usable nodes of its type
// (down or drained ones left out), and the jobs ranked ahead of it (`ranks`,
// distinct_ranks) that want GPUs it could use (same type, or either untyped),
// best first, at most kExplainMaxAhead named. When enough nodes have its
// GPUs free: "; free now: 4 GPUs (node3), waits for slurmctld's next
// scheduling pass or for CPUs or memory"; one not eligible yet: "; waits for
// its begin time 2026-12-08T02:00:00 (sbatch --begin)" (local time). Only ids and counts: nothing
// the job's user wrote.
inline constexpr size_t kExplainMaxAhead = 3;
std::string explain_waiting(size_t i, const std::vector<JobInfo>& jobs, const std::vector<size_t>& ranks,
                            const ClusterInfo& cluster);
// The same for every job of the queue, in one pass (a re-score explains them
// all): element i is explain_waiting(i, ...).
std::vector<std::string> explain_waiting_all(const std::vector<JobInfo>& jobs, const std::vector<size_t>& ranks,
                                             const ClusterInfo& cluster);

// `current` without its waiting part (explain_waiting): once the job is placed.
std::string explain_without_waiting(const char* current);

// The learned network's share of a score the agent made as network +
// prior (learn::add_model_order_prior): |network| / (|network| + |prior|),
// `network` the score before the prior was added, `with_prior` after; 0
// when both parts are 0 or not finite.
double learned_share(double network, double with_prior);

// "; learned part 62% of the score, prior 38%" (share in [0, 1]).
std::string explain_learned(double share);

// `text` made safe to store: printable ASCII only (control characters and
// other bytes become ' '; '|', sacct -P's separator, and backslashes become
// '_'), at most kExplainMaxBytes, cut with "...".
std::string explain_bounded(std::string_view text);

}  // namespace duet::plugin
