// Translating slurmctld records into the policy's plain views. Callers hold
// the slurmctld locks the records need (job read, node read).
#pragma once

#include <string>
#include <vector>

#include "plugins/seam/views.h"

struct job_record;

namespace duet::plugin {

// GPUs the job asks for (sum over its gres/gpu requests) and their type ("" =
// any). Returns false for jobs without a GPU request.
bool job_gpu_request(const struct job_record* job, uint32_t* gpus, std::string* type);

JobInfo job_info(const struct job_record* job, int64_t now);

// A running GPU job, for a preemptive model: as job_info, running, with its
// current run's service (run_s, attained_gpu_s) and wait_s the time it
// waited before this run started.
JobInfo running_job_info(const struct job_record* job, int64_t now);

ClusterInfo cluster_info(int64_t now);

// Node names of a job's allocation (from job->node_bitmap).
std::vector<std::string> job_node_names(const struct job_record* job);

}  // namespace duet::plugin
