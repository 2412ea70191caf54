// priority/duet: job priorities from duet's ordering agent (man duet.conf(5)).
//
// GPU jobs get priorities monotone in the agent's ranking: an initial one at
// submit (scored alone, slotted into the last ranking) and a fresh ranking of
// all pending GPU jobs every RescoreInterval seconds from a thread of our own.
// Held jobs (priority 0), admin-set priorities and jobs without GPUs keep
// priority/basic's semantics (the latter FIFO, above all GPU jobs). If the
// agent cannot be built, the age+size fallback scores instead; reconfigure
// tries again. No C++ exception leaves this file.
//
// The agents' messages (agent_channel.h): the scorer reads select/duet's
// placement message (zeros when select/duet is not loaded, e.g. with
// select/cons_tres) and each re-score publishes every pending job's message
// to the placement agent, replacing the previous set.
//
// Locking: slurmctld's locks are always taken before `g.mu`, never after, so
// the re-score thread cannot deadlock with slurmctld threads calling us with
// their locks held.
#include <algorithm>
#include <cmath>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "plugins/channel/agent_channel.h"
#include "plugins/priority/duet/tres_run_time.h"
#include "plugins/seam/duet_conf.h"
#include "plugins/seam/explain.h"
#include "plugins/seam/order_scorer.h"
#include "plugins/seam/priority_ladder.h"
#include "plugins/slurm/slurm_log.h"
#include "plugins/slurm/slurm_views.h"

using duet::plugin::AgentChannel;
using duet::plugin::ClusterInfo;
using duet::plugin::DuetConf;
using duet::plugin::JobInfo;
using duet::plugin::OrderScorer;

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

constexpr uint32_t kFifoTop = 0xffff0000;    // Slurm's TOP_PRIORITY
constexpr uint32_t kFifoFloor = 0x80000000;  // FIFO jobs stay above the GPU ladder

struct State {
  std::mutex mu;  // guards all below; taken after slurmctld's locks only
  DuetConf conf;
  std::unique_ptr<OrderScorer> scorer;  // the agent, or the fallback
  std::string last_error;               // of the scorer, logged once a minute
  time_t last_error_time = 0;
  duet::plugin::PriorityLadder ladder;
  ClusterInfo cluster;  // as seen at the last re-score
  uint32_t next_fifo = kFifoTop;

  std::mutex stop_mu;
  std::condition_variable stop_cv;
  bool stop = false;
  bool wake = false;  // re-score now (after reconfigure)
  std::thread thread;
};
State g;

duet::plugin::LogLevel level() { return g.conf.log_level; }

// (Re)reads duet.conf and builds the scorer. Caller holds g.mu.
void load_locked() {
  std::string path = duet::plugin::duet_conf_path_for(slurm_conf.slurm_conf ? slurm_conf.slurm_conf : "");
  duet::plugin::ConfResult r =
      duet::plugin::load_duet_conf(path, slurm_conf.slurm_user_id);  // only root and SlurmUser may steer
  g.conf = r.conf;
  for (const auto& e : r.errors) error("%s: %s", plugin_type, e.text().c_str());
  if (!r.file_found) DUET_INFO(level(), "%s: %s not found, using defaults", plugin_type, path.c_str());
  std::string why;
  g.scorer = duet::plugin::make_order_scorer(g.conf, &why);
  g.last_error.clear();
  if (!g.scorer) {
    error(
        "%s: cannot use scorer '%s': %s; falling back to age+size priority until "
        "`scontrol reconfigure`",
        plugin_type, g.conf.scorer.c_str(), why.c_str());
    g.scorer = duet::plugin::make_fallback_scorer(g.conf);
  }
  // A scorer without messages publishes none: drop the previous scorer's.
  duet::plugin::agent_channel()->clear_order_messages();
  g.scorer->connect(duet::plugin::agent_channel());
  DUET_INFO(level(), "%s: scorer %s, re-score every %d s, config %s", plugin_type, g.scorer->name().c_str(),
            g.conf.rescore_interval_s, path.c_str());
}

// Scores `jobs` (`queue`: the whole pending queue, whose messages go to the
// placement agent); on any failure logs it and uses the fallback. Holds g.mu.
std::vector<double> score_locked(const std::vector<JobInfo>& jobs, const ClusterInfo& cluster, bool queue) {
  std::vector<double> scores(jobs.size(), 0.0);
  std::string err;
  bool ok = false;
  try {
    ok = queue ? g.scorer->score_queue(jobs, cluster, scores, &err) : g.scorer->score(jobs, cluster, scores, &err);
  } catch (const std::exception& e) { err = std::string("exception: ") + e.what(); } catch (...) {
    err = "unknown exception";
  }
  for (size_t i = 0; ok && i < jobs.size(); ++i)
    if (!std::isfinite(scores[i])) {
      err = "non-finite score for job " + std::to_string(jobs[i].job_id);
      ok = false;
    }
  if (!ok) {
    time_t now = time(nullptr);
    if (err != g.last_error || now - g.last_error_time >= 60) {
      error("%s: scorer %s failed: %s; using age+size for this round", plugin_type, g.scorer->name().c_str(),
            err.c_str());
      g.last_error = err;
      g.last_error_time = now;
    }
    if (queue) duet::plugin::agent_channel()->clear_order_messages();  // the fallback sends none
    auto fb = duet::plugin::make_fallback_scorer(g.conf);
    scores.assign(jobs.size(), 0.0);
    fb->score(jobs, cluster, scores, &err);
  }
  return scores;
}

// The scorer's name for explanations, saying when the placement agent's
// message went into the last scoring. Holds g.mu.
std::string with_message(const std::string& scorer_name) {
  return g.scorer->used_placement_message() ? scorer_name + " with the placement agent's message" : scorer_name;
}

bool rescorable(const job_record_t* job) {
  uint32_t gpus;
  std::string type;
  return IS_JOB_PENDING(job) && job->priority != 0 && !job->direct_set_prio &&
         duet::plugin::job_gpu_request(job, &gpus, &type);
}

// Finished GPU jobs are found by scanning job_list at each re-score (the
// job_end hook runs only with accounting limits enforced): those that
// completed at or after the mark and were not fed yet. Re-score thread only.
time_t g_finish_mark = 0;
std::set<uint32_t> g_fed_at_mark;  // ids fed whose end_time == g_finish_mark

bool newly_finished(const job_record_t* job) {
  if (!IS_JOB_COMPLETE(job) || job->start_time <= 0 || job->end_time < job->start_time) return false;
  if (job->end_time < g_finish_mark || (job->end_time == g_finish_mark && g_fed_at_mark.count(job->job_id)))
    return false;
  uint32_t gpus;
  std::string type;
  return duet::plugin::job_gpu_request(job, &gpus, &type);
}

struct Finished {
  JobInfo info;
  double run_s;
  time_t end;
};

void advance_finish_mark(const std::vector<Finished>& finished) {
  for (const Finished& f : finished) {
    if (f.end > g_finish_mark) {
      g_finish_mark = f.end;
      g_fed_at_mark.clear();
    }
    if (f.end == g_finish_mark) g_fed_at_mark.insert(f.info.job_id);
  }
}

// What a re-score reads from slurmctld: the pending GPU jobs to rank, the
// GPU jobs completed since the last round and the nodes.
struct Snapshot {
  std::vector<JobInfo> jobs;
  std::vector<Finished> finished;
  ClusterInfo cluster;
};

// The agent's ranking of a snapshot's jobs, with what applying it needs
// from the configuration (copied: g.mu is not held then).
struct Ranking {
  std::vector<double> scores;        // one per snapshot job
  std::vector<uint32_t> priorities;  // from a fresh ladder
  std::string scorer_name;
  bool explain = false;
  duet::plugin::LogLevel level = duet::plugin::LogLevel::kInfo;
};

// Phase 1, under slurmctld's job, node and partition read locks.
Snapshot gather_views(time_t now) {
  Snapshot s;
  ListIterator it = list_iterator_create(job_list);
  while (auto* job = static_cast<job_record_t*>(list_next(it))) {
    if (rescorable(job))
      s.jobs.push_back(duet::plugin::job_info(job, now));
    else if (newly_finished(job))
      s.finished.push_back(
          {duet::plugin::job_info(job, now), static_cast<double>(job->end_time - job->start_time), job->end_time});
  }
  list_iterator_destroy(it);
  advance_finish_mark(s.finished);
  s.cluster = duet::plugin::cluster_info(now);
  return s;
}

// Ties go to the earlier submit, then the lower id.
void sort_by_submit(std::vector<JobInfo>& jobs) {
  std::sort(jobs.begin(), jobs.end(), [](const JobInfo& a, const JobInfo& b) {
    return a.submit_time != b.submit_time ? a.submit_time < b.submit_time : a.job_id < b.job_id;
  });
}

// Phase 2, without slurmctld's locks: feeds the finished jobs to the agent,
// scores the pending ones (the fallback on failure) and turns the scores
// into priorities.
Ranking rank_jobs(const Snapshot& s) {
  std::lock_guard<std::mutex> lk(g.mu);
  for (const Finished& f : s.finished) g.scorer->on_finish(f.info, f.run_s);
  Ranking r;
  r.scores = score_locked(s.jobs, s.cluster, true);
  duet::plugin::PriorityLadder ladder;
  r.priorities = ladder.assign(r.scores);
  r.scorer_name = with_message(g.scorer->name());
  r.explain = g.conf.explain;
  r.level = g.conf.log_level;
  return r;
}

// Sets a job's explanation (explain.h; rank 0: at submit) when duet owns
// its SystemComment.
void explain_job(job_record_t* job, size_t rank, size_t count, double score, const std::string& scorer_name) {
  if (!duet::plugin::explain_owned(job->system_comment)) return;
  std::string text = duet::plugin::explain_rank(rank, count, score, scorer_name);
  if (!job->system_comment || text != job->system_comment) {
    xfree(job->system_comment);
    job->system_comment = xstrdup(text.c_str());
  }
}

// Phase 3, under the job write lock: the priorities and explanations into
// the job records, skipping jobs that started, were held or changed since
// phase 1. Keeps the ranking (ladder) and the snapshot's cluster for
// priority_p_set. Returns how many priorities changed.
size_t apply_priorities(Snapshot& s, const Ranking& r) {
  size_t changed = 0;
  // rank of job i = number of jobs with a higher priority
  std::vector<uint32_t> sorted(r.priorities);
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  for (size_t i = 0; i < s.jobs.size(); ++i) {
    const uint32_t prio = r.priorities[i];
    job_record_t* job = find_job_record(s.jobs[i].job_id);
    if (!job || !rescorable(job)) continue;
    if (job->priority != prio) {
      job->priority = prio;
      ++changed;
    }
    if (r.explain) {
      size_t rank =
          static_cast<size_t>(std::lower_bound(sorted.begin(), sorted.end(), prio, std::greater<>()) - sorted.begin());
      explain_job(job, rank + 1, s.jobs.size(), r.scores[i], r.scorer_name);
    }
    DUET_DEBUG(r.level, "%s: %pJ gpus=%u score=%g priority=%u", plugin_type, job, s.jobs[i].gpus, r.scores[i], prio);
  }
  if (changed) last_job_update = time(nullptr);
  std::lock_guard<std::mutex> lk(g.mu);
  g.ladder.assign(r.scores);
  g.cluster = std::move(s.cluster);
  return changed;
}

// One re-score in three phases: views under read locks, scoring without
// slurmctld locks, priorities under the job write lock.
void rescore() {
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  const auto t0 = Clock::now();
  const time_t now = time(nullptr);
  slurmctld_lock_t read_lock = {NO_LOCK, READ_LOCK, READ_LOCK, READ_LOCK, NO_LOCK};
  lock_slurmctld(read_lock);
  Snapshot snapshot = gather_views(now);
  unlock_slurmctld(read_lock);
  const auto t1 = Clock::now();

  sort_by_submit(snapshot.jobs);
  const Ranking ranking = rank_jobs(snapshot);
  const size_t count = snapshot.jobs.size();

  const auto t2 = Clock::now();
  slurmctld_lock_t write_lock = {NO_LOCK, WRITE_LOCK, READ_LOCK, READ_LOCK, NO_LOCK};
  lock_slurmctld(write_lock);
  const auto t3 = Clock::now();
  const size_t changed = apply_priorities(snapshot, ranking);
  unlock_slurmctld(write_lock);
  const auto t4 = Clock::now();
  DUET_VERBOSE(ranking.level,
               "%s: re-scored %zu pending GPU jobs with %s, %zu priorities changed "
               "(views %.1f ms, scoring %.1f ms, applying %.1f ms under the job write lock)",
               plugin_type, count, ranking.scorer_name.c_str(), changed, ms(t1 - t0), ms(t2 - t1), ms(t4 - t3));
}

void rescore_loop() {
  for (;;) {
    int interval;
    {
      std::lock_guard<std::mutex> lk(g.mu);
      interval = g.conf.rescore_interval_s;
    }
    {
      std::unique_lock<std::mutex> lk(g.stop_mu);
      g.stop_cv.wait_for(lk, std::chrono::seconds(interval), [] { return g.stop || g.wake; });
      if (g.stop) return;
      g.wake = false;
    }
    try {
      rescore();
    } catch (const std::exception& e) { error("%s: re-score failed: %s", plugin_type, e.what()); } catch (...) {
      error("%s: re-score failed: unknown exception", plugin_type);
    }
  }
}

// priority/basic's value for jobs we do not rank.
uint32_t fifo_priority(const job_record_t* job) {
  uint32_t p;
  {
    std::lock_guard<std::mutex> lk(g.mu);
    p = g.next_fifo > kFifoFloor ? g.next_fifo-- : g.next_fifo;
  }
  if (job->details) {
    int64_t offset = static_cast<int64_t>(job->details->nice) - NICE_OFFSET;
    int64_t q = static_cast<int64_t>(p) - offset;
    p = static_cast<uint32_t>(std::clamp<int64_t>(q, 1, UINT32_MAX));
  }
  return p;
}

}  // namespace

extern "C" int init(void) {
  // sshare loads priority plugins too (for priority_p_calc_fs_factor only)
  if (!running_in_slurmctld()) return SLURM_SUCCESS;
  try {
    {
      std::lock_guard<std::mutex> lk(g.mu);
      load_locked();
    }
    AgentChannel* channel = duet::plugin::agent_channel();
    channel->attach(AgentChannel::Agent::kOrdering, true);
    g.stop = false;
    g.thread = std::thread(rescore_loop);
    // select/duet attaches first (slurmctld loads the select plugin before us)
    DUET_INFO(level(), "%s loaded; agent channel: %s", plugin_name,
              channel->attached(AgentChannel::Agent::kPlacement)
                  ? "connected to select/duet's placement agent"
                  : "no placement agent (SelectType is not select/duet), its message is zeros");
    return SLURM_SUCCESS;
  } catch (const std::exception& e) { error("%s: init failed: %s", plugin_type, e.what()); } catch (...) {
    error("%s: init failed: unknown exception", plugin_type);
  }
  return SLURM_ERROR;
}

extern "C" int fini(void) {
  try {
    {
      std::lock_guard<std::mutex> lk(g.stop_mu);
      g.stop = true;
    }
    g.stop_cv.notify_all();
    if (g.thread.joinable()) g.thread.join();
    if (running_in_slurmctld())
      duet::plugin::agent_channel()->attach(AgentChannel::Agent::kOrdering, false);  // drops our messages
    std::lock_guard<std::mutex> lk(g.mu);
    g.scorer.reset();
  } catch (...) { error("%s: fini failed", plugin_type); }
  return SLURM_SUCCESS;
}

// Called with the job write lock held (submit, requeue, release, ...).
extern "C" uint32_t priority_p_set(uint32_t last_prio, job_record_t* job_ptr) {
  (void)last_prio;
  try {
    if (job_ptr->direct_set_prio && job_ptr->priority > 1) return job_ptr->priority;
    uint32_t gpus;
    std::string type;
    if (!duet::plugin::job_gpu_request(job_ptr, &gpus, &type)) return fifo_priority(job_ptr);
    JobInfo job = duet::plugin::job_info(job_ptr, time(nullptr));
    std::lock_guard<std::mutex> lk(g.mu);
    std::vector<double> score = score_locked({job}, g.cluster, false);
    uint32_t p = g.ladder.slot(score[0]);
    if (g.conf.explain) explain_job(job_ptr, 0, 0, score[0], with_message(g.scorer->name()));
    DUET_DEBUG(level(), "%s: initial priority %u for %pJ (score %g)", plugin_type, p, job_ptr, score[0]);
    return p;
  } catch (const std::exception& e) {
    error("%s: priority_p_set(%pJ): %s", plugin_type, job_ptr, e.what());
  } catch (...) { error("%s: priority_p_set(%pJ): unknown exception", plugin_type, job_ptr); }
  return duet::plugin::kLadderBase;
}

extern "C" void priority_p_reconfig(bool assoc_clear) {
  (void)assoc_clear;
  if (!running_in_slurmctld()) return;
  try {
    {
      std::lock_guard<std::mutex> lk(g.mu);
      load_locked();
    }
    {
      std::lock_guard<std::mutex> lk(g.stop_mu);
      g.wake = true;  // the new scorer and interval apply now
    }
    g.stop_cv.notify_all();
  } catch (const std::exception& e) { error("%s: reconfigure failed: %s", plugin_type, e.what()); } catch (...) {
    error("%s: reconfigure failed: unknown exception", plugin_type);
  }
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
