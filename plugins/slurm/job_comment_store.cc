#include "plugins/slurm/job_comment_store.h"

#include <dlfcn.h>

namespace duet::plugin {

bool store_system_comment(const job_record_t* job) {
  if (!job || !job->details || !slurm_with_slurmdbd()) return false;
  // slurmctld's own connection to slurmdbd. Looked up at run time: srun and
  // sinfo load select plugins too, and they have no such symbol.
  auto* conn = static_cast<void**>(dlsym(RTLD_DEFAULT, "acct_db_conn"));
  if (!conn) return false;

  slurm_selected_step_t step = {};
  step.array_task_id = NO_VAL;
  step.step_id.job_id = job->job_id;
  step.het_job_offset = NO_VAL;
  step.step_id.step_id = NO_VAL;
  step.step_id.step_het_comp = NO_VAL;
  slurmdb_job_cond_t cond = {};
  cond.step_list = list_create(nullptr);
  list_append(cond.step_list, &step);
  cond.cluster_list = list_create(nullptr);
  list_append(cond.cluster_list, slurm_conf.cluster_name);
  cond.flags = JOBCOND_FLAG_NO_WAIT | JOBCOND_FLAG_NO_DEFAULT_USAGE;
  // Any job flags (0 would match none: Slurm 22.05's burst buffer code
  // leaves it 0 and its modify finds no job); this job, not an older one
  // with the same id.
  cond.db_flags = SLURMDB_JOB_FLAG_NOTSET;
  cond.usage_start = job->details->submit_time;
  slurmdb_job_rec_t rec = {};
  rec.derived_ec = NO_VAL;  // 0 would overwrite the job's derived exit code
  rec.system_comment = job->system_comment;  // quotes need no escaping: they reach sacct as written
  List ret = acct_storage_g_modify_job(*conn, slurm_conf.slurm_user_id, &cond, &rec);
  FREE_NULL_LIST(ret);
  FREE_NULL_LIST(cond.step_list);
  FREE_NULL_LIST(cond.cluster_list);
  return true;
}

bool job_recorded(const job_record_t* job) { return job && job->db_index && job->db_index != NO_VAL64; }

}  // namespace duet::plugin
