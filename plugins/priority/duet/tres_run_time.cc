#include "plugins/priority/duet/tres_run_time.h"

#include <cstdint>
#include <vector>

namespace duet::plugin {

void release_unused_tres_run_time(job_record_t* job) {
  if (!job->tres_alloc_cnt || slurmctld_tres_cnt <= 0) return;
  uint64_t time_limit_secs = static_cast<uint64_t>(job->time_limit) * 60;
  std::vector<uint64_t> unused(slurmctld_tres_cnt, 0);
  for (int i = 0; i < slurmctld_tres_cnt; i++) {
    if (job->tres_alloc_cnt[i] == NO_CONSUME_VAL64) continue;
    unused[i] = job->tres_alloc_cnt[i] * time_limit_secs;
  }
  // assoc and qos written (priority/basic names other fields: a slip there)
  assoc_mgr_lock_t locks = {WRITE_LOCK, NO_LOCK, WRITE_LOCK, NO_LOCK, NO_LOCK, NO_LOCK, NO_LOCK};
  assoc_mgr_lock(&locks);
  if (job->qos_ptr && job->qos_ptr->usage && job->qos_ptr->usage->grp_used_tres_run_secs) {
    slurmdb_qos_rec_t* qos = job->qos_ptr;
    for (int i = 0; i < slurmctld_tres_cnt; i++) {
      uint64_t& used = qos->usage->grp_used_tres_run_secs[i];
      used = unused[i] > used ? 0 : used - unused[i];
    }
  }
  for (slurmdb_assoc_rec_t* a = job->assoc_ptr; a && a->usage; a = a->usage->parent_assoc_ptr) {
    if (!a->usage->grp_used_tres_run_secs) continue;
    for (int i = 0; i < slurmctld_tres_cnt; i++) {
      uint64_t& used = a->usage->grp_used_tres_run_secs[i];
      used = unused[i] > used ? 0 : used - unused[i];
    }
  }
  assoc_mgr_unlock(&locks);
}

}  // namespace duet::plugin
