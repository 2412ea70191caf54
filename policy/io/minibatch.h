// Reader for the Alibaba PAI mini-batch times (job_N_norm.csv): header
// ",worker,gpu,time,batch_time_norm" (first column a row index); one row per
// worker and sampled iteration; batch_time_norm is normalised to 0..1000.
#pragma once

#include <string>
#include <vector>

namespace duet {

struct MinibatchSample {
  int worker = 0;
  int time = 0;      // iteration index
  double value = 0;  // normalised mini-batch time
};

struct MinibatchJob {
  std::string source;
  std::vector<MinibatchSample> samples;
};

MinibatchJob read_minibatch(const std::string& path);

}  // namespace duet
