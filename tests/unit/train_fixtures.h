// The small training problem the trainer's suites share: a tiny, contended
// trace on a 2-machine cluster, so a few seconds of training still move the
// weights. Include it before <check.h> (its fail() macro breaks <ios>).
#pragma once
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "policy/io/cluster.h"
#include "policy/io/trace.h"
#include "policy/model/cluster_model.h"
#include "tests/unit/test_data.h"

namespace test_support {

// 40 jobs on 8 GPUs: long 4-GPU jobs and short 1-GPU jobs of two users
// arrive together, so order matters; history makes durations predictable.
inline duet::Trace tiny_trace() {
  std::ostringstream t;
  t << "job_id,submit,duration,num_gpus,user\n";
  for (int i = 0; i < 40; ++i) {
    const bool big = i % 4 == 0;
    t << i + 1 << "," << i * 60 << "," << (big ? 7200 : 300 + 10 * (i % 7)) << "," << (big ? 4 : 1) << ","
      << (big ? "bob" : "ann") << "\n";
  }
  std::istringstream in(t.str());
  return duet::read_trace(in, "tiny");
}

// Two machines of 4 V100s in one rack.
inline duet::ClusterModel tiny_cluster() {
  std::istringstream cs("machine,gpu_type,num_gpus,rack\nm0,V100,4,r0\nm1,V100,4,r0\n");
  return duet::build_cluster(duet::read_cluster(cs, "cluster"), gavel_table());
}

inline std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace test_support
