#include "plugins/ordering/ordering_host.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>

#include "plugins/channel/agent_channel.h"
#include "plugins/ordering/ordering_model.h"
#include "plugins/seam/explain.h"
#define DUET_DEBUG_FLAG DEBUG_FLAG_PRIO  // scontrol setdebugflags +Priority
#include "plugins/slurm/slurm_log.h"
#include "plugins/slurm/slurm_views.h"

namespace duet::plugin {

bool rankable(const job_record_t* job) {
  uint32_t gpus;
  std::string type;
  return IS_JOB_PENDING(job) && job->priority != 0 && !job->direct_set_prio && job_gpu_request(job, &gpus, &type);
}

void explain_job(job_record_t* job, size_t rank, size_t count, double score, const std::string& scorer_name,
                 const std::string& waiting) {
  if (!explain_owned(job->system_comment)) return;
  // a preemption stays in the explanation through later re-scores
  std::string text = explain_bounded(explain_rank(rank, count, score, scorer_name) + waiting +
                                     explain_preemption_part(job->system_comment));
  if (!job->system_comment || text != job->system_comment) {
    xfree(job->system_comment);
    job->system_comment = xstrdup(text.c_str());
  }
}

void explain_ranking(const QueueSnapshot& s, const QueueRanking& r, const std::vector<uint32_t>& values) {
  std::vector<uint32_t> ids;
  ids.reserve(s.jobs.size());
  for (const JobInfo& j : s.jobs) ids.push_back(j.job_id);
  const std::vector<size_t> ranks = distinct_ranks(values, ids);
  const bool learned = r.learned.size() == s.jobs.size();
  const std::vector<std::string> waiting = explain_waiting_all(s.jobs, ranks, s.cluster);
  for (size_t i = 0; i < s.jobs.size() && i < r.scores.size(); ++i) {
    job_record_t* job = find_job_record(s.jobs[i].job_id);
    if (!job || !rankable(job)) continue;
    explain_job(job, ranks[i], s.jobs.size(), r.scores[i], r.scorer_name,
                (learned ? explain_learned(r.learned[i]) : std::string()) + waiting[i]);
  }
}

namespace {

bool newly_finished(const job_record_t* job, time_t mark, const std::set<uint32_t>& fed_at_mark) {
  if (!IS_JOB_COMPLETE(job) || job->start_time <= 0 || job->end_time < job->start_time) return false;
  if (job->end_time < mark || (job->end_time == mark && fed_at_mark.count(job->job_id))) return false;
  uint32_t gpus;
  std::string type;
  return job_gpu_request(job, &gpus, &type);
}

// Ties go to the earlier submit, then the lower id.
void sort_by_submit(std::vector<JobInfo>& jobs) {
  std::sort(jobs.begin(), jobs.end(), [](const JobInfo& a, const JobInfo& b) {
    return a.submit_time != b.submit_time ? a.submit_time < b.submit_time : a.job_id < b.job_id;
  });
}

// The plan of a preemptive ranking of [running..., pending...] (`scores`
// in that order); `pinned`: running jobs the limits keep are kept first.
PreemptPlan plan_for(const PreemptSnapshot& p, const std::vector<JobInfo>& pending, const std::vector<double>& scores,
                     const std::vector<std::string>& blockers, bool pinned, size_t max_preempt) {
  std::vector<PlanJob> jobs;
  jobs.reserve(scores.size());
  for (size_t i = 0; i < p.running.size(); ++i)
    jobs.push_back({scores[i], p.running[i].info.gpus, true, pinned && !blockers[i].empty(), true});
  for (size_t j = 0; j < pending.size(); ++j)
    jobs.push_back({scores[p.running.size() + j], pending[j].gpus, false, false, p.eligible[j] != 0});
  return plan_preemption(jobs, p.total_gpus, max_preempt);
}

}  // namespace

// (Re)reads duet.conf and builds the scorer. Caller holds mu_.
void OrderingHost::load_locked() {
  std::string path = duet_conf_path_for(slurm_conf.slurm_conf ? slurm_conf.slurm_conf : "");
  ConfResult r = load_duet_conf(path, slurm_conf.slurm_user_id);  // only root and SlurmUser may steer
  conf_ = r.conf;
  for (const auto& e : r.errors) error("%s: %s", plugin_type_, e.text().c_str());
  if (!r.file_found) DUET_INFO(conf_.log_level, "%s: %s not found, using defaults", plugin_type_, path.c_str());
  std::string why;
  scorer_ = make_order_scorer(conf_, &why);
  last_error_.clear();
  if (!scorer_) {
    error(
        "%s: cannot use scorer '%s': %s; falling back to age+size priority until "
        "`scontrol reconfigure`",
        plugin_type_, conf_.scorer.c_str(), why.c_str());
    scorer_ = make_fallback_scorer(conf_);
  }
  // A scorer without messages publishes none: drop the previous scorer's.
  agent_channel()->clear_order_messages();
  scorer_->connect(agent_channel());
  std::string preemption;
  if (conf_.preemption == "requeue")
    preemption = scorer_->preemptive()
                     ? ", preempting by requeue (min run " + std::to_string(conf_.preempt_min_run_time_s) +
                           " s, again after " + std::to_string(conf_.preempt_job_interval_s) + " s, at most " +
                           std::to_string(conf_.preempt_max_restarts) + " restarts, " +
                           std::to_string(conf_.preempt_max_per_rescore) + " per re-score)"
                     : ", Preemption=requeue but the scorer is not preemptive: nothing is preempted";
  DUET_INFO(conf_.log_level, "%s: scorer %s, re-score every %d s%s, config %s", plugin_type_, scorer_->name().c_str(),
            conf_.rescore_interval_s, preemption.c_str(), path.c_str());
}

// Scores `jobs` (`queue`: the whole pending queue, whose messages go to the
// placement agent); on any failure logs it and uses the fallback. Holds mu_.
std::vector<double> OrderingHost::score_locked(const std::vector<JobInfo>& jobs, const ClusterInfo& cluster, bool queue,
                                               bool* scored) {
  std::vector<double> scores(jobs.size(), 0.0);
  std::string err;
  bool ok = false;
  try {
    ok = queue ? scorer_->score_queue(jobs, cluster, scores, &err) : scorer_->score(jobs, cluster, scores, &err);
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
    if (err != last_error_ || now - last_error_time_ >= 60) {
      error("%s: scorer %s failed: %s; using age+size for this round", plugin_type_, scorer_->name().c_str(),
            err.c_str());
      last_error_ = err;
      last_error_time_ = now;
    }
    if (queue) agent_channel()->clear_order_messages();  // the fallback sends none
    auto fb = make_fallback_scorer(conf_);
    scores.assign(jobs.size(), 0.0);
    fb->score(jobs, cluster, scores, &err);
  }
  if (scored) *scored = ok;
  return scores;
}

// The scorer's name for explanations, saying when the placement agent's
// message went into the last scoring. Holds mu_.
std::string OrderingHost::with_message(const std::string& scorer_name) const {
  return scorer_->used_placement_message() ? scorer_name + " with the placement agent's message" : scorer_name;
}

// Phase 1, under slurmctld's job, node and partition read locks.
QueueSnapshot OrderingHost::gather(time_t now) {
  QueueSnapshot s;
  std::vector<time_t> ends;  // of s.finished
  ListIterator it = list_iterator_create(job_list);
  while (auto* job = static_cast<job_record_t*>(list_next(it))) {
    if (rankable(job)) {
      s.jobs.push_back(job_info(job, now));
    } else if (newly_finished(job, finish_mark_, fed_at_mark_)) {
      s.finished.push_back({job_info(job, now), static_cast<double>(job->end_time - job->start_time)});
      ends.push_back(job->end_time);
    }
  }
  list_iterator_destroy(it);
  sort_by_submit(s.jobs);
  for (size_t i = 0; i < ends.size(); ++i) {
    if (ends[i] > finish_mark_) {
      finish_mark_ = ends[i];
      fed_at_mark_.clear();
    }
    if (ends[i] == finish_mark_) fed_at_mark_.insert(s.finished[i].info.job_id);
  }
  s.cluster = cluster_info(now);
  return s;
}

// Running and pending jobs ranked together, as the simulator ranks them
// (preemptor.h): returns the pending jobs' scores; *plan says which running
// jobs to preempt, *kept_why which the model would preempt but the limits
// keep, and why. A failed scoring (the fallback's scores) preempts nothing.
// Holds mu_.
std::vector<double> OrderingHost::rank_with_running_locked(const QueueSnapshot& s, const PreemptSnapshot& running,
                                                           const PreemptLimits& limits, PreemptPlan* plan,
                                                           std::vector<std::string>* kept_why) {
  std::vector<JobInfo> jobs;
  jobs.reserve(running.running.size() + s.jobs.size());
  for (const RunningJob& r : running.running) jobs.push_back(r.info);
  jobs.insert(jobs.end(), s.jobs.begin(), s.jobs.end());
  bool scored = false;
  const std::vector<double> all = score_locked(jobs, s.cluster, true, &scored);
  if (scored) {
    std::vector<std::string> blockers;
    for (const RunningJob& r : running.running) blockers.push_back(preempt_blocker(limits, r.state));
    *plan = plan_for(running, s.jobs, all, blockers, true, static_cast<size_t>(limits.max_per_rescore));
    const PreemptPlan wish = plan_for(running, s.jobs, all, blockers, false, all.size());
    for (size_t i : wish.preempt)
      if (!blockers[i].empty())
        kept_why->push_back("JobId=" + std::to_string(running.running[i].info.job_id) +
                            " not preempted: " + blockers[i]);
  }
  return {all.begin() + static_cast<std::ptrdiff_t>(running.running.size()), all.end()};
}

// One re-score in three phases: views under read locks, scoring without
// slurmctld locks, the plugin's values under the job write lock; and, when
// a preemptive model leaves running jobs out, a fourth: their requeue.
void OrderingHost::rescore() {
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  const auto t0 = Clock::now();
  const time_t now = time(nullptr);
  bool preemption;
  PreemptLimits limits;
  {
    std::lock_guard<std::mutex> lk(mu_);
    preemption = conf_.preemption == "requeue" && scorer_->preemptive();
    limits = PreemptLimits::from(conf_);
  }
  // select/duet, when it is the select plugin, stores the explanations of the
  // jobs it placed itself, once it has added its placement (explanation_store.h)
  const bool store = explain();
  const bool placed_too = !agent_channel()->attached(AgentChannel::Agent::kPlacement);
  slurmctld_lock_t read_lock = {NO_LOCK, READ_LOCK, READ_LOCK, READ_LOCK, NO_LOCK};
  lock_slurmctld(read_lock);
  QueueSnapshot snapshot = gather(now);
  preemptor_.prune();  // also with Preemption=off: the state file keeps no finished job
  PreemptSnapshot running;
  if (preemption) running = preemptor_.gather(snapshot.jobs, snapshot.cluster, now);
  const size_t stored = store ? stored_.sweep(placed_too) : 0;
  unlock_slurmctld(read_lock);
  preemptor_.persist(plugin_type_);
  const auto t1 = Clock::now();

  QueueRanking ranking;
  PreemptPlan plan;
  std::vector<std::string> kept_why;  // running jobs the model would preempt, and why they are not
  const bool contended = preemption && Preemptor::contended(snapshot.jobs, running);
  {
    std::lock_guard<std::mutex> lk(mu_);
    for (const auto& f : snapshot.finished) scorer_->on_finish(f.info, f.run_s);
    if (contended && scorer_->preemptive())
      ranking.scores = rank_with_running_locked(snapshot, running, limits, &plan, &kept_why);
    else
      ranking.scores = score_locked(snapshot.jobs, snapshot.cluster, true);
    // the shares of the last scoring, when the model scored (not the
    // fallback); with running jobs ranked too, the pending ones come last
    ranking.learned = scorer_->learned_shares();
    if (ranking.learned.size() >= ranking.scores.size())
      ranking.learned.erase(ranking.learned.begin(),
                            ranking.learned.end() - static_cast<std::ptrdiff_t>(ranking.scores.size()));
    ranking.scorer_name = with_message(scorer_->name());
    ranking.explain = conf_.explain;
    ranking.level = conf_.log_level;
  }
  for (const std::string& k : kept_why) DUET_DEBUG(ranking.level, "%s: %s", plugin_type_, k.c_str());

  const auto t2 = Clock::now();
  slurmctld_lock_t write_lock = {NO_LOCK, WRITE_LOCK, READ_LOCK, READ_LOCK, NO_LOCK};
  lock_slurmctld(write_lock);
  const auto t3 = Clock::now();
  const size_t changed = apply_(snapshot, ranking);
  if (changed) last_job_update = time(nullptr);
  unlock_slurmctld(write_lock);
  const auto t4 = Clock::now();
  size_t preempted = 0;
  if (!plan.preempt.empty()) {
    // the locks `scontrol requeue` takes (_slurm_rpc_requeue)
    slurmctld_lock_t requeue_lock = {NO_LOCK, WRITE_LOCK, WRITE_LOCK, READ_LOCK, READ_LOCK};
    lock_slurmctld(requeue_lock);
    preempted = preemptor_.apply(snapshot.jobs, running, plan,
                                 {plugin_type_, ranking.scorer_name, ranking.explain, ranking.level}, now);
    unlock_slurmctld(requeue_lock);
    preemptor_.persist(plugin_type_);  // before slurmctld's own save of the requeues
    if (preempted) schedule_job_save();
  }
  {
    std::lock_guard<std::mutex> lk(mu_);
    cluster_ = std::move(snapshot.cluster);
  }
  std::string ran;
  if (contended)
    ran = ", " + std::to_string(running.running.size()) + " running ranked with them: " + std::to_string(preempted) +
          " preempted, " + std::to_string(kept_why.size()) + " kept as not preemptible now";
  DUET_VERBOSE(ranking.level,
               "%s: re-scored %zu pending GPU jobs with %s%s, %zu %s changed, %zu explanations stored "
               "(views %.1f ms, scoring %.1f ms, applying %.1f ms under the job write lock)",
               plugin_type_, snapshot.jobs.size(), ranking.scorer_name.c_str(), ran.c_str(), changed, what_, stored,
               ms(t1 - t0), ms(t2 - t1), ms(t4 - t3));
}

void OrderingHost::loop() {
  for (;;) {
    int interval;
    {
      std::lock_guard<std::mutex> lk(mu_);
      interval = conf_.rescore_interval_s;
    }
    {
      std::unique_lock<std::mutex> lk(stop_mu_);
      stop_cv_.wait_for(lk, std::chrono::seconds(interval), [this] { return stop_ || wake_; });
      if (stop_) return;
      wake_ = false;
    }
    try {
      rescore();
    } catch (const std::exception& e) { error("%s: re-score failed: %s", plugin_type_, e.what()); } catch (...) {
      error("%s: re-score failed: unknown exception", plugin_type_);
    }
  }
}

void OrderingHost::start(Apply apply) {
  apply_ = std::move(apply);
  {
    std::lock_guard<std::mutex> lk(mu_);
    load_locked();
    preemptor_.restore(plugin_type_, conf_.log_level);  // before the re-score thread runs
  }
  agent_channel()->attach(AgentChannel::Agent::kOrdering, true);
  {
    std::lock_guard<std::mutex> lk(stop_mu_);
    stop_ = false;
    wake_ = false;
  }
  thread_ = std::thread([this] { loop(); });
}

void OrderingHost::stop() {
  {
    std::lock_guard<std::mutex> lk(stop_mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (apply_) agent_channel()->attach(AgentChannel::Agent::kOrdering, false);  // drops our messages
  apply_ = nullptr;
  std::lock_guard<std::mutex> lk(mu_);
  scorer_.reset();
}

void OrderingHost::reconfigure() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    load_locked();
  }
  {
    std::lock_guard<std::mutex> lk(stop_mu_);
    wake_ = true;  // the new scorer and interval apply now
  }
  stop_cv_.notify_all();
}

int OrderingHost::plugin_init(const char* plugin_name, Apply apply, const Prepare& prepare) {
  if (!running_in_slurmctld()) return SLURM_SUCCESS;
  register_ordering_agent();  // Scorer=model (ordering_model.h)
  try {
    const std::string note = prepare ? prepare(true) : "";
    start(std::move(apply));
    // slurmctld loads the select plugin before the priority plugin loads us
    DUET_INFO(level(), "%s loaded; %s%sagent channel: %s", plugin_name, note.c_str(), note.empty() ? "" : "; ",
              agent_channel()->attached(AgentChannel::Agent::kPlacement)
                  ? "connected to select/duet's placement agent"
                  : "no placement agent (SelectType is not select/duet), its message is zeros");
    return SLURM_SUCCESS;
  } catch (const std::exception& e) { error("%s: init failed: %s", plugin_type_, e.what()); } catch (...) {
    error("%s: init failed: unknown exception", plugin_type_);
  }
  return SLURM_ERROR;
}

int OrderingHost::plugin_fini() {
  try {
    const bool store = running_in_slurmctld() && explain();
    stop();
    // slurmctld shuts down (fini comes only then), perhaps to run without
    // duet: the ranked pending jobs keep their text in accounting
    // (explanation_store.h); its connection to slurmdbd is still open here
    if (store) {
      slurmctld_lock_t read_lock = {NO_LOCK, READ_LOCK, NO_LOCK, NO_LOCK, NO_LOCK};
      lock_slurmctld(read_lock);
      const size_t n = ExplanationStore::store_pending(std::chrono::seconds(5));
      unlock_slurmctld(read_lock);
      if (n) info("%s: stored the explanations of %zu pending jobs in accounting", plugin_type_, n);
    }
  } catch (...) { error("%s: fini failed", plugin_type_); }
  return SLURM_SUCCESS;
}

void OrderingHost::plugin_reconfigure(const Prepare& prepare) {
  if (!running_in_slurmctld()) return;
  try {
    const std::string note = prepare ? prepare(false) : "";
    reconfigure();
    if (!note.empty()) DUET_INFO(level(), "%s: %s", plugin_type_, note.c_str());
  } catch (const std::exception& e) { error("%s: reconfigure failed: %s", plugin_type_, e.what()); } catch (...) {
    error("%s: reconfigure failed: unknown exception", plugin_type_);
  }
}

double OrderingHost::score_one(const JobInfo& job, std::string* scorer_name) {
  std::lock_guard<std::mutex> lk(mu_);
  if (!scorer_) {  // not started (a call outside slurmctld)
    *scorer_name = "none";
    return 0.0;
  }
  std::vector<double> score = score_locked({job}, cluster_, false);
  *scorer_name = with_message(scorer_->name());
  return score[0];
}

LogLevel OrderingHost::level() {
  std::lock_guard<std::mutex> lk(mu_);
  return conf_.log_level;
}

bool OrderingHost::explain() {
  std::lock_guard<std::mutex> lk(mu_);
  return conf_.explain;
}

}  // namespace duet::plugin
