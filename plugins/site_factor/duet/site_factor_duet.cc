// site_factor/duet: the ordering agent's ranking as Slurm's site factor, so
// priority/multifactor keeps age, fairshare, QOS, partition, size and TRES
// and adds the learned order as one more factor (PrioritySiteFactorPlugin;
// man site_factor_duet(8)).
//
// A pending GPU job's site factor is NICE_OFFSET + weight * (its place from
// the bottom of the agent's ranking) / (ranked jobs - 1): the agent's first
// job gets the full weight, its last 0, as sprio's SITE column shows
// (site_factor_scale.h). The weight is `weight=N` in
// PrioritySiteFactorParameters (Slurm 22.05 has no PriorityWeightSite: it
// adds `site_factor - NICE_OFFSET` to the priority as it is). A new job is
// scored alone and slotted into the last ranking (site_factor_p_set); the
// plugin's own thread re-ranks the whole queue every RescoreInterval seconds
// (plugins/ordering/, shared with priority/duet) and, for each job whose
// factor changed, has Slurm recompute its priority (set_job_prio, as after
// `scontrol update`), so the new order counts at once and not only at the
// next PriorityCalcPeriod. Jobs without GPUs, held jobs and jobs with an
// admin-set priority are left alone (site factor 0 unless set otherwise).
//
// If the agent cannot be built, the age+size fallback ranks instead, as in
// priority/duet; a failure inside a call leaves the job's factor as it was.
// No C++ exception leaves this file.
//
// Locking (ordering_host.h): slurmctld's locks before the host's mutex or
// g_factors.mu, never after; the two are never held together.
#include <algorithm>
#include <exception>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "plugins/ordering/ordering_host.h"
#include "plugins/seam/site_factor_scale.h"
#define DUET_DEBUG_FLAG DEBUG_FLAG_PRIO  // scontrol setdebugflags +Priority
#include "plugins/slurm/slurm_log.h"
#include "plugins/slurm/slurm_views.h"

using duet::plugin::JobInfo;
using duet::plugin::QueueRanking;
using duet::plugin::QueueSnapshot;
using duet::plugin::SiteFactorScale;

static_assert(duet::plugin::kSiteFactorCentre == NICE_OFFSET, "site factor 0 is Slurm's NICE_OFFSET");

extern "C" {
extern const char plugin_name[];
extern const char plugin_type[];
extern const uint32_t plugin_version;
const char plugin_name[] = "Site factor duet (learned ordering) plugin";
const char plugin_type[] = "site_factor/duet";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

int init(void);
int fini(void);
void site_factor_p_reconfig(void);
void site_factor_p_set(job_record_t* job_ptr);
void site_factor_p_update(void);
}

namespace {

duet::plugin::OrderingHost g_host(plugin_type, "site factors");

// The last ranking's factors: for slotting new jobs, and for answering
// site_factor_p_set while set_job_prio recomputes a ranked job's priority.
struct Factors {
  std::mutex mu;  // taken after slurmctld's locks only, never with the host's
  SiteFactorScale scale;
  std::unordered_map<uint32_t, uint32_t> by_job;
};
Factors g_factors;

// The weight from PrioritySiteFactorParameters; errors logged, default kept.
uint32_t read_weight() {
  uint32_t weight = duet::plugin::kDefaultSiteWeight;
  std::string why;
  const char* params = slurm_conf.site_factor_params ? slurm_conf.site_factor_params : "";
  if (!duet::plugin::parse_site_factor_params(params, &weight, &why))
    error("%s: %s; using weight=%u", plugin_type, why.c_str(), weight);
  return weight;
}

void set_weight(uint32_t weight) {
  std::lock_guard<std::mutex> lk(g_factors.mu);
  if (weight != g_factors.scale.weight()) {
    g_factors.scale = SiteFactorScale(weight);  // factors on the old scale go at the next re-score
    g_factors.by_job.clear();
  }
}

// Under the job write lock: the ranking's site factors and explanations into
// the job records, skipping jobs that started, were held or changed since the
// snapshot; a job whose factor changed gets its priority recomputed.
size_t apply_site_factors(const QueueSnapshot& s, const QueueRanking& r) {
  std::vector<uint32_t> factors;
  {
    std::lock_guard<std::mutex> lk(g_factors.mu);
    factors = g_factors.scale.assign(r.scores);
    g_factors.by_job.clear();
    for (size_t i = 0; i < s.jobs.size(); ++i) g_factors.by_job[s.jobs[i].job_id] = factors[i];
  }
  if (r.explain) duet::plugin::explain_ranking(s, r, factors);
  size_t changed = 0;
  for (size_t i = 0; i < s.jobs.size(); ++i) {
    job_record_t* job = find_job_record(s.jobs[i].job_id);
    if (!job || !duet::plugin::rankable(job)) continue;
    DUET_DEBUG(r.level, "%s: %pJ gpus=%u score=%g site=%lld", plugin_type, job, s.jobs[i].gpus, r.scores[i],
               static_cast<long long>(duet::plugin::site_factor_shown(factors[i])));
    if (job->site_factor == factors[i]) continue;
    job->site_factor = factors[i];
    set_job_prio(job);  // calls site_factor_p_set, which answers factors[i]
    ++changed;
  }
  return changed;
}

// The factor of the last ranking for this job, if it was ranked.
bool ranked_factor(uint32_t job_id, uint32_t* factor) {
  std::lock_guard<std::mutex> lk(g_factors.mu);
  auto it = g_factors.by_job.find(job_id);
  if (it == g_factors.by_job.end()) return false;
  *factor = it->second;
  return true;
}

// PrioritySiteFactorParameters' weight, at init and at each reconfigure.
std::string prepare_weight(bool at_init) {
  const uint32_t weight = read_weight();
  set_weight(weight);
  return "weight " + std::to_string(weight) +
         (at_init ? " (site factor 0.." + std::to_string(weight) + " by the agent's rank)" : "");
}

}  // namespace

// priority/multifactor loads site factor plugins in slurmctld only.
extern "C" int init(void) { return g_host.plugin_init(plugin_name, apply_site_factors, prepare_weight); }

extern "C" int fini(void) { return g_host.plugin_fini(); }

extern "C" void site_factor_p_reconfig(void) { g_host.plugin_reconfigure(prepare_weight); }

// Called with the job write lock held, from priority/multifactor's
// priority_p_set (submit, requeue, release, update, and our set_job_prio).
// (A released job still has priority 0 here, so not rankable() yet.)
extern "C" void site_factor_p_set(job_record_t* job_ptr) {
  try {
    uint32_t gpus;
    std::string type;
    if (IS_JOB_FINISHED(job_ptr) || !duet::plugin::job_gpu_request(job_ptr, &gpus, &type)) return;
    uint32_t factor;
    if (ranked_factor(job_ptr->job_id, &factor)) {
      job_ptr->site_factor = factor;
      return;
    }
    JobInfo job = duet::plugin::job_info(job_ptr, time(nullptr));
    std::string scorer_name;
    const double score = g_host.score_one(job, &scorer_name);
    {
      std::lock_guard<std::mutex> lk(g_factors.mu);
      factor = g_factors.scale.slot(score);
    }
    job_ptr->site_factor = factor;
    if (g_host.explain()) duet::plugin::explain_job(job_ptr, 0, 0, score, scorer_name);
    DUET_DEBUG(g_host.level(), "%s: initial site factor %lld for %pJ (score %g)", plugin_type,
               static_cast<long long>(duet::plugin::site_factor_shown(factor)), job_ptr, score);
  } catch (const std::exception& e) {
    error("%s: site_factor_p_set(%pJ): %s", plugin_type, job_ptr, e.what());
  } catch (...) { error("%s: site_factor_p_set(%pJ): unknown exception", plugin_type, job_ptr); }
}

// Called with the job write lock held by priority/multifactor's decay thread
// (with accounting, every PriorityCalcPeriod) just before it recomputes every
// priority: the last ranking's factors go back into jobs that lost them (an
// admin's `scontrol update SiteFactor=`, a requeue). Ranking itself happens
// in the re-score thread, which does not hold the job write lock meanwhile.
extern "C" void site_factor_p_update(void) {
  try {
    std::vector<std::pair<uint32_t, uint32_t>> ranked;
    {
      std::lock_guard<std::mutex> lk(g_factors.mu);
      ranked.assign(g_factors.by_job.begin(), g_factors.by_job.end());
    }
    for (const auto& [job_id, factor] : ranked) {
      job_record_t* job = find_job_record(job_id);
      if (job && duet::plugin::rankable(job)) job->site_factor = factor;
    }
  } catch (const std::exception& e) { error("%s: site_factor_p_update: %s", plugin_type, e.what()); } catch (...) {
    error("%s: site_factor_p_update: unknown exception", plugin_type);
  }
}
