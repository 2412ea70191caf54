#include "policy/model/job_types.h"

#include "policy/io/csv.h"
#include "policy/util/rng.h"

namespace duet {

int assign_job_type(const JobSpec& job, const ThroughputTable& table, uint64_t seed, const std::string& source) {
  if (!job.job_type.empty()) {
    int jt = table.find_job_type(job.job_type);
    if (jt < 0)
      throw InputError(source, job.line, 0,
                       "job " + std::to_string(job.id) + ": job_type '" + job.job_type +
                           "' is not in the throughput table (e.g. 'ResNet-50 (batch size 32)')");
    return jt;
  }
  int s = ThroughputTable::scale_index(job.gpus);
  while (s > 0 && table.job_types_at_scale(s).empty()) --s;
  const auto& c = table.job_types_at_scale(s);
  if (c.empty()) return 0;
  uint64_t h = mix_seed(seed, 0x6a6f6274797065ULL /* "jobtype" */, static_cast<uint64_t>(job.id));
  return c[h % c.size()];
}

std::vector<int> assign_job_types(const Trace& trace, const ThroughputTable& table, uint64_t seed) {
  std::vector<int> v;
  v.reserve(trace.jobs.size());
  for (const auto& j : trace.jobs) v.push_back(assign_job_type(j, table, seed, trace.source));
  return v;
}

}  // namespace duet
