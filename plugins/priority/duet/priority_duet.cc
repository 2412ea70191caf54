// priority/duet: job priorities from duet's ordering agent (man duet.conf(5)).
//
// GPU jobs get priorities monotone in the agent's ranking: an initial one at
// submit (scored alone, slotted into the last ranking) and a fresh ranking of
// all pending GPU jobs every RescoreInterval seconds from a thread of our own.
// Held jobs (priority 0) and admin-set priorities keep priority/basic's
// semantics. Jobs without GPUs get a fixed priority below every GPU job
// (cpu_job_priority, priority_ladder.h): FIFO among themselves by Slurm's
// tie-break, moved by nice. If the agent cannot be built, the age+size
// fallback scores instead; reconfigure tries again. The agent's hosting
// (duet.conf, scorer, re-score thread) is plugins/ordering/, shared with
// site_factor/duet. No C++ exception leaves this file.
//
// The agents' messages (agent_channel.h): the scorer reads select/duet's
// placement message (zeros when select/duet is not loaded, e.g. with
// select/cons_tres) and each re-score publishes every pending job's message
// to the placement agent, replacing the previous set.
//
// Locking (ordering_host.h): slurmctld's locks before the host's mutex or
// g_ladder_mu, never after; the two are never held together.
#include <algorithm>
#include <cmath>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "plugins/ordering/ordering_host.h"
#include "plugins/priority/duet/tres_run_time.h"
#include "plugins/seam/priority_ladder.h"
#define DUET_DEBUG_FLAG DEBUG_FLAG_PRIO  // scontrol setdebugflags +Priority
#include "plugins/slurm/slurm_log.h"
#include "plugins/slurm/slurm_views.h"

using duet::plugin::JobInfo;
using duet::plugin::QueueRanking;
using duet::plugin::QueueSnapshot;

extern "C" {
// Defined here so the plugin also loads outside slurmctld (sshare); the
// slurmctld's own definitions take precedence when loaded there.
List job_list = nullptr;
time_t last_job_update = 0;
int slurmctld_tres_cnt = 0;

extern const char plugin_name[];
extern const char plugin_type[];
extern const uint32_t plugin_version;
const char plugin_name[] = "Priority duet (learned ordering) plugin";
const char plugin_type[] = "priority/duet";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

int init(void);
int fini(void);
uint32_t priority_p_set(uint32_t last_prio, job_record_t* job_ptr);
void priority_p_reconfig(bool assoc_clear);
void priority_p_set_assoc_usage(slurmdb_assoc_rec_t* assoc);
double priority_p_calc_fs_factor(long double usage_efctv, long double shares_norm);
List priority_p_get_priority_factors_list(priority_factors_request_msg_t* req_msg, uid_t uid);
void priority_p_job_end(job_record_t* job_ptr);
}

namespace {

duet::plugin::OrderingHost g_host(plugin_type, "priorities");

// The last re-score's ranking, for slotting new jobs between its rungs.
std::mutex g_ladder_mu;  // taken after slurmctld's locks only, never with the host's
duet::plugin::PriorityLadder g_ladder;

// Under the job write lock: the ranking's priorities and explanations into
// the job records, skipping jobs that started, were held or changed since
// the snapshot. Returns how many priorities changed.
size_t apply_priorities(const QueueSnapshot& s, const QueueRanking& r) {
  duet::plugin::PriorityLadder ladder;
  const std::vector<uint32_t> priorities = ladder.assign(r.scores);
  size_t changed = 0;
  for (size_t i = 0; i < s.jobs.size(); ++i) {
    const uint32_t prio = priorities[i];
    job_record_t* job = find_job_record(s.jobs[i].job_id);
    if (!job || !duet::plugin::rankable(job)) continue;
    if (job->priority != prio) {
      job->priority = prio;
      ++changed;
    }
    DUET_DEBUG(r.level, "%s: %pJ gpus=%u score=%g priority=%u", plugin_type, job, s.jobs[i].gpus, r.scores[i], prio);
  }
  if (r.explain) duet::plugin::explain_ranking(s, r, priorities);
  std::lock_guard<std::mutex> lk(g_ladder_mu);
  g_ladder = std::move(ladder);
  return changed;
}

}  // namespace

// sshare loads priority plugins too (for priority_p_calc_fs_factor only).
extern "C" int init(void) { return g_host.plugin_init(plugin_name, apply_priorities); }

extern "C" int fini(void) { return g_host.plugin_fini(); }

// Called with the job write lock held (submit, requeue, release, ...).
extern "C" uint32_t priority_p_set(uint32_t last_prio, job_record_t* job_ptr) {
  (void)last_prio;
  try {
    if (job_ptr->direct_set_prio && job_ptr->priority > 1) return job_ptr->priority;
    uint32_t gpus;
    std::string type;
    if (!duet::plugin::job_gpu_request(job_ptr, &gpus, &type)) {
      const int64_t nice = job_ptr->details ? static_cast<int64_t>(job_ptr->details->nice) - NICE_OFFSET : 0;
      return duet::plugin::cpu_job_priority(nice);
    }
    JobInfo job = duet::plugin::job_info(job_ptr, time(nullptr));
    std::string scorer_name;
    const double score = g_host.score_one(job, &scorer_name);
    uint32_t p;
    {
      std::lock_guard<std::mutex> lk(g_ladder_mu);
      p = g_ladder.slot(score);
    }
    if (g_host.explain()) duet::plugin::explain_job(job_ptr, 0, 0, score, scorer_name);
    DUET_DEBUG(g_host.level(), "%s: initial priority %u for %pJ (score %g)", plugin_type, p, job_ptr, score);
    return p;
  } catch (const std::exception& e) {
    error("%s: priority_p_set(%pJ): %s", plugin_type, job_ptr, e.what());
  } catch (...) { error("%s: priority_p_set(%pJ): unknown exception", plugin_type, job_ptr); }
  return duet::plugin::kLadderBase;
}

extern "C" void priority_p_reconfig(bool assoc_clear) {
  (void)assoc_clear;
  g_host.plugin_reconfigure();
}

extern "C" void priority_p_set_assoc_usage(slurmdb_assoc_rec_t* assoc) { (void)assoc; }

// As priority/basic: only used by sshare against a multifactor cluster.
extern "C" double priority_p_calc_fs_factor(long double usage_efctv, long double shares_norm) {
  if (shares_norm <= 0.0 || fuzzy_equal(shares_norm, NO_VAL)) return 0.0;
  return std::pow(2.0, -(usage_efctv / shares_norm));
}

// sprio: duet has no multifactor factors to show.
extern "C" List priority_p_get_priority_factors_list(priority_factors_request_msg_t* req_msg, uid_t uid) {
  (void)req_msg;
  (void)uid;
  return list_create(nullptr);
}

// As priority/basic (tres_run_time.h).
extern "C" void priority_p_job_end(job_record_t* job_ptr) try {
  duet::plugin::release_unused_tres_run_time(job_ptr);
} catch (...) { error("%s: job end accounting of %pJ failed", plugin_type, job_ptr); }
