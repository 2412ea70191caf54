#include "plugins/ordering/explanation_store.h"

#include <functional>
#include <string_view>
#include <utility>

#include "plugins/seam/explain.h"
#include "plugins/slurm/job_comment_store.h"

namespace duet::plugin {
namespace {

bool never_placed(const job_record_t* job) { return !job->nodes || !*job->nodes; }

// A duet explanation whose accounting row exists or is queued.
bool storable(const job_record_t* job, bool placed_too) {
  const char* c = job->system_comment;
  if (!c || !*c || !explain_owned(c) || IS_JOB_PENDING(job)) return false;
  if (IS_JOB_FINISHED(job)) return placed_too || never_placed(job);
  return placed_too && job_recorded(job);
}

}  // namespace

size_t ExplanationStore::sweep(bool placed_too) noexcept {
  if (!slurm_with_slurmdbd()) return 0;
  size_t sent = 0;
  ListIterator it = list_iterator_create(job_list);
  try {
    std::unordered_map<uint32_t, size_t> kept;  // ids gone from job_list drop out
    while (auto* job = static_cast<job_record_t*>(list_next(it))) {
      if (!storable(job, placed_too)) continue;
      const size_t h = std::hash<std::string_view>{}(job->system_comment);
      auto old = stored_.find(job->job_id);
      if (old != stored_.end() && old->second == h) {
        kept.emplace(job->job_id, h);
        continue;
      }
      if (sent >= kMaxPerSweep) continue;  // the next sweep
      if (!store_system_comment(job)) continue;
      kept.emplace(job->job_id, h);
      ++sent;
    }
    stored_ = std::move(kept);
  } catch (...) {  // out of memory: what was sent goes again next time
    stored_.clear();
  }
  list_iterator_destroy(it);
  return sent;
}

size_t ExplanationStore::store_pending(std::chrono::steady_clock::duration budget) noexcept {
  if (!slurm_with_slurmdbd()) return 0;
  const auto end = std::chrono::steady_clock::now() + budget;
  size_t sent = 0;
  ListIterator it = list_iterator_create(job_list);
  while (auto* job = static_cast<job_record_t*>(list_next(it))) {
    const char* c = job->system_comment;
    if (!IS_JOB_PENDING(job) || !c || !*c || !explain_owned(c) || !job_recorded(job)) continue;
    if (std::chrono::steady_clock::now() >= end) break;
    if (store_system_comment(job)) ++sent;
  }
  list_iterator_destroy(it);
  return sent;
}

}  // namespace duet::plugin
