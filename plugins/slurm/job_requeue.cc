#include "plugins/slurm/job_requeue.h"

#include "plugins/slurm/job_fit.h"

namespace duet::plugin {

bool job_requeueable(const job_record_t* job, std::string* why) {
  if (!IS_JOB_RUNNING(job) || IS_JOB_COMPLETING(job)) {
    *why = "not running";
    return false;
  }
  if (!job->batch_flag) {
    *why = "not a batch job (only batch jobs can be requeued)";
    return false;
  }
  if (!job->details || !job->details->requeue) {
    *why = "not requeue-able (--no-requeue, or JobRequeue=0 without --requeue)";
    return false;
  }
  if (job->het_job_id) {
    *why = "part of a heterogeneous job";
    return false;
  }
  if (!job->part_ptr) {
    *why = "its partition is gone";
    return false;
  }
  return true;
}

bool job_waits_for_resources(const job_record_t* job, time_t now) {
  if (!IS_JOB_PENDING(job) || IS_JOB_COMPLETING(job) || !job->details) return false;
  if (job->details->begin_time > now) return false;
  return job->state_reason == WAIT_NO_REASON || job->state_reason == WAIT_PRIORITY ||
         job->state_reason == WAIT_RESOURCES;
}

bool job_may_use_any(const job_record_t* job, bitstr_t* nodes) {
  if (!nodes) return false;
  const std::vector<NodeFit> fit = job_node_fit(job, nullptr);
  node_record_t* node;
  size_t k = 0;
  for (int i = 0; (node = next_node(&i)) && k < fit.size(); i++, k++)
    if (fit[k].may_use && bit_test(nodes, node->index)) return true;
  return false;
}

bool requeue_preempted(job_record_t* job, std::string* error) {
  if (!job_requeueable(job, error)) return false;
  // uid 0: an operator, as Slurm's own preemption passes it
  const int rc = job_requeue(0, job->job_id, nullptr, true, 0);
  if (rc == SLURM_SUCCESS) return true;
  *error = std::string("job_requeue: ") + slurm_strerror(rc);
  return false;
}

}  // namespace duet::plugin
