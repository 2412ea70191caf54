// Job trace format (man 5 duet-trace): CSV with header
//   job_id,submit,duration,num_gpus[,gpu_type][,job_type][,user][,vc]
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace duet {

struct JobSpec {
  int64_t id = 0;
  double submit = 0;    // seconds from trace start
  double duration = 0;  // seconds alone on the reference GPU (V100), one machine
  int gpus = 1;
  std::string gpu_type;  // constraint: "" (any), "V100" or "V100|P100"
  std::string job_type;  // Gavel job type name, or "" (assigned by the model)
  std::string user, vc;
  int line = 0;  // source line, for messages
};

struct Trace {
  std::string source;  // file name, for messages
  std::vector<JobSpec> jobs;
};

Trace read_trace(const std::string& path);
Trace read_trace(std::istream& in, const std::string& name);
void write_trace(std::ostream& out, const Trace& t);

}  // namespace duet
