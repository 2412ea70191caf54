#include "plugins/ordering/preemptor.h"

#include <algorithm>
#include <ctime>
#include <exception>

#include "plugins/seam/explain.h"
#include "plugins/seam/state_file.h"
#include "plugins/slurm/job_comment_store.h"
#include "plugins/slurm/job_requeue.h"
#define DUET_DEBUG_FLAG DEBUG_FLAG_PRIO  // scontrol setdebugflags +Priority
#include "plugins/slurm/slurm_log.h"
#include "plugins/slurm/slurm_views.h"

namespace duet::plugin {
namespace {

std::string local_time(int64_t t) {
  char buf[32] = "";
  const time_t tt = static_cast<time_t>(t);
  struct tm tm;
  if (localtime_r(&tt, &tm)) strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

// "41,42,43 +2 more": the pending jobs a preemption makes room for.
std::string job_list_text(const std::vector<uint32_t>& ids) {
  constexpr size_t kNamed = 4;
  std::string out;
  for (size_t i = 0; i < ids.size() && i < kNamed; ++i) out += (i ? "," : "") + std::to_string(ids[i]);
  if (ids.size() > kNamed) out += " +" + std::to_string(ids.size() - kNamed) + " more";
  return out;
}

// StateSaveLocation/duet_preempt_state.site_factor_duet: one file per plugin type.
std::string state_path(const char* plugin_type) {
  std::string name = plugin_type;
  std::replace(name.begin(), name.end(), '/', '_');
  return std::string(slurm_conf.state_save_location ? slurm_conf.state_save_location : ".") +
         "/duet_preempt_state." + name;
}

}  // namespace

void Preemptor::restore(const char* plugin_type, LogLevel level) noexcept {
  try {
    earlier_.clear();
    dirty_ = false;
    path_ = state_path(plugin_type);
    std::string bytes, why;
    switch (read_state_file(path_, slurm_conf.slurm_user_id, kPreemptStateMaxBytes, &bytes, &why)) {
      case StateRead::kMissing:
        DUET_DEBUG(level, "%s: no %s, no preempted job's service to restore", plugin_type, path_.c_str());
        return;
      case StateRead::kRefused:
        break;
      case StateRead::kRead:
        if (decode_preempt_state(bytes, &earlier_, &why)) {
          DUET_INFO(level, "%s: restored from %s the earlier service of %zu preempted job%s%s%s", plugin_type,
                    path_.c_str(), earlier_.size(), earlier_.size() == 1 ? "" : "s", earlier_.empty() ? "" : ": ",
                    preempt_state_summary(earlier_).c_str());
          return;
        }
        break;
    }
    // rewritten at the next change; the damaged file stays until then for a look
    error("%s: ignoring %s: %s; preempted jobs' earlier service starts empty", plugin_type, path_.c_str(),
          why.c_str());
  } catch (const std::exception& e) {
    error("%s: cannot restore preempted jobs' service: %s; starting empty", plugin_type, e.what());
  } catch (...) { error("%s: cannot restore preempted jobs' service; starting empty", plugin_type); }
  earlier_.clear();
}

void Preemptor::prune() noexcept {
  // what this host remembers of jobs slurmctld no longer runs or holds goes
  for (auto e = earlier_.begin(); e != earlier_.end();) {
    const job_record_t* job = find_job_record(e->first);
    if (job && !IS_JOB_FINISHED(job)) {
      ++e;
      continue;
    }
    e = earlier_.erase(e);
    dirty_ = true;
  }
}

void Preemptor::persist(const char* plugin_type) noexcept {
  if (!dirty_ || path_.empty()) return;
  std::string why;
  try {
    if (write_state_file(path_, encode_preempt_state(earlier_), &why)) {
      dirty_ = false;
      save_error_.clear();
      return;
    }
  } catch (...) {  // out of memory (encoding); a short string allocates nothing
    why = "no memory";
  }
  // retried at each re-score (a full disk): the same failure is logged once a minute
  const time_t now = time(nullptr);
  if (why == save_error_ && now - save_error_time_ < 60) return;
  error("%s: cannot save preempted jobs' service: %s", plugin_type, why.c_str());
  try {
    save_error_ = why;
  } catch (...) {}  // out of memory: logged again next time
  save_error_time_ = now;
}

PreemptSnapshot Preemptor::gather(std::vector<JobInfo>& pending, const ClusterInfo& cluster, int64_t now) noexcept {
  PreemptSnapshot p;
  ListIterator it = nullptr;
  try {
    for (const NodeInfo& n : cluster.nodes) {
      const uint32_t held = std::min(n.gpus_alloc, n.gpus_total);
      if (!n.usable) {  // a draining node's jobs keep what they hold, nobody gets more there
        p.total_gpus += held;
        continue;
      }
      p.total_gpus += n.gpus_total;
      p.free_gpus += n.gpus_total - held;
    }
    it = list_iterator_create(job_list);
    while (auto* job = static_cast<job_record_t*>(list_next(it))) {
      uint32_t gpus;
      std::string type;
      if (!IS_JOB_RUNNING(job) || IS_JOB_COMPLETING(job) || !job_gpu_request(job, &gpus, &type)) continue;
      RunningJob r;
      r.info = running_job_info(job, now);
      r.start_time = job->start_time;
      r.state.run_s = r.info.run_s;
      r.state.restarts = job->restart_cnt;
      r.state.requeueable = job_requeueable(job, &r.state.not_requeueable);
      // a run already in the earlier service (slurmctld restarted from a job
      // state saved before its requeue) is not counted twice
      const auto e = earlier_.find(job->job_id);
      const Service all =
          run_service(e != earlier_.end() ? &e->second : nullptr, r.start_time, {r.info.run_s, r.info.attained_gpu_s});
      r.info.run_s = all.run_s;
      r.info.attained_gpu_s = all.attained_gpu_s;
      p.running.push_back(std::move(r));
    }
    list_iterator_destroy(it);
    it = nullptr;
    std::sort(p.running.begin(), p.running.end(),
              [](const RunningJob& a, const RunningJob& b) { return a.info.job_id < b.info.job_id; });
    p.eligible.assign(pending.size(), 0);
    for (size_t i = 0; i < pending.size(); ++i) {
      const job_record_t* job = find_job_record(pending[i].job_id);
      p.eligible[i] = job && job_waits_for_resources(job, now);
      if (auto e = earlier_.find(pending[i].job_id); e != earlier_.end()) {
        pending[i].run_s = e->second.run_s;
        pending[i].attained_gpu_s = e->second.attained_gpu_s;
      }
    }
  } catch (...) {  // out of memory: no preemption this round
    if (it) list_iterator_destroy(it);
    return {};
  }
  return p;
}

bool Preemptor::contended(const std::vector<JobInfo>& pending, const PreemptSnapshot& p) {
  std::vector<uint32_t> asked;
  for (size_t i = 0; i < pending.size() && i < p.eligible.size(); ++i)
    if (p.eligible[i]) asked.push_back(pending[i].gpus);
  return !p.running.empty() && preemption_contended(asked, p.free_gpus);
}

size_t Preemptor::apply(const std::vector<JobInfo>& pending, const PreemptSnapshot& p, const PreemptPlan& plan,
                        const Context& ctx, int64_t now) noexcept {
  size_t done = 0;
  try {
    const size_t nr = p.running.size();
    const size_t ranked = nr + pending.size();
    if (plan.keep.size() != ranked || p.eligible.size() != pending.size()) return 0;
    // the pending jobs kept that could start now, best ranked first
    std::vector<size_t> kept;
    for (size_t j = 0; j < pending.size(); ++j)
      if (plan.keep[nr + j] && p.eligible[j]) kept.push_back(j);
    std::sort(kept.begin(), kept.end(), [&](size_t a, size_t b) { return plan.rank[nr + a] < plan.rank[nr + b]; });
    for (size_t idx : plan.preempt) {
      if (idx >= nr) continue;
      const RunningJob& r = p.running[idx];
      job_record_t* job = find_job_record(r.info.job_id);
      if (!job || !IS_JOB_RUNNING(job) || IS_JOB_COMPLETING(job) || job->start_time != r.start_time) continue;
      std::vector<uint32_t> for_jobs;
      for (size_t j : kept) {
        const job_record_t* pj = find_job_record(pending[j].job_id);
        if (pj && job_waits_for_resources(pj, now) && job_may_use_any(pj, job->node_bitmap))
          for_jobs.push_back(pj->job_id);
      }
      if (for_jobs.empty()) {
        DUET_DEBUG(ctx.level, "%s: %pJ not preempted: no pending job kept ahead of it may use its nodes",
                   ctx.plugin_type, job);
        continue;
      }
      done += apply_one(job, r, for_jobs, plan.rank[idx], ranked, ctx, now);
    }
  } catch (const std::exception& e) { error("%s: preemption: %s", ctx.plugin_type, e.what()); } catch (...) {
    error("%s: preemption: unknown exception", ctx.plugin_type);
  }
  return done;
}

size_t Preemptor::apply_one(job_record_t* job, const RunningJob& r, const std::vector<uint32_t>& for_jobs, size_t rank,
                            size_t ranked, const Context& ctx, int64_t now) {
  std::string why;
  if (!requeue_preempted(job, &why)) {
    error("%s: could not preempt %pJ: %s (left running)", ctx.plugin_type, job, why.c_str());
    return 0;
  }
  // the run's own service (r.info holds the earlier runs' too)
  if (record_preemption(&earlier_[r.info.job_id], r.start_time, {r.state.run_s, r.state.run_s * r.info.gpus}))
    dirty_ = true;
  else
    DUET_INFO(ctx.level, "%s: %pJ's run started at %s is already in its earlier service: not counted again",
              ctx.plugin_type, job, local_time(r.start_time).c_str());
  const std::string what = "requeued at " + local_time(now) + " after " +
                           std::to_string(static_cast<long long>(r.state.run_s)) + " s, rank " + std::to_string(rank) +
                           "/" + std::to_string(ranked) + " of running and pending jobs by " + ctx.scorer_name +
                           ", for jobs " + job_list_text(for_jobs);
  if (ctx.explain && explain_owned(job->system_comment)) {
    const std::string text = explain_preempted(job->system_comment, what);
    xfree(job->system_comment);
    job->system_comment = xstrdup(text.c_str());
    store_system_comment(job);  // the run it ended keeps it in accounting
  }
  DUET_INFO(ctx.level, "%s: preempted %pJ: %s", ctx.plugin_type, job, what.c_str());
  return 1;
}

}  // namespace duet::plugin
