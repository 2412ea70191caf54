// Which Gavel job type each trace job is. A job naming its `job_type` keeps it
// (unknown names are an error at the job's line). Otherwise (Philly carries no
// type) the rule is: scale = largest of 1, 2, 4, 8 GPUs <= the job's GPUs;
// pick uniformly among the job types Gavel measured at that scale, by
// splitmix64(seed, job id) -- the same job gets the same type for a seed,
// whatever else is in the trace.
#pragma once

#include <cstdint>
#include <vector>

#include "policy/io/trace.h"
#include "policy/model/throughput.h"

namespace duet {

int assign_job_type(const JobSpec& job, const ThroughputTable& table, uint64_t seed, const std::string& source = "");
std::vector<int> assign_job_types(const Trace& trace, const ThroughputTable& table, uint64_t seed);

}  // namespace duet
