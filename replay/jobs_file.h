// The job-id file `duet replay` writes and `duet report --jobs` reads:
//   # duet replay: trace=FILE scale=K partition=P
//   job_id,trace_job,submit_s,work_s,num_gpus,gpu_type,job_type
//   1234,17,0,3600,2,V100,ResNet-50 (batch size 32)
// Lines starting with '#' are comments; key=value pairs in them are metadata.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace duet::replay {

struct ReplayedJob {
  std::string job_id;
  long long trace_job = 0;
  double submit_s = 0, work_s = 0;
  int gpus = 0;
  std::string gpu_type, job_type;
};

struct JobsFile {
  std::map<std::string, std::string> meta;
  std::vector<ReplayedJob> jobs;
};

void write_jobs_header(std::ostream& out, const std::map<std::string, std::string>& meta);
void write_job_row(std::ostream& out, const ReplayedJob& j);
JobsFile read_jobs_file(const std::string& path);  // throws InputError

}  // namespace duet::replay
