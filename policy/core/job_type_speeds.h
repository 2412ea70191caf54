// How fast each job type runs on each GPU type, relative to the speed the
// type's machines are known by (MachineView::speed carries the type's mean
// over job types). Filled from Gavel's measured throughputs
// (policy/model/throughput.h, job_type_speeds()); the type-affinity baseline
// and the learned placement read the same numbers, so they know the same
// things. Header-only: the learned agents, which the Slurm plugins link,
// use it without the simulator's library.
#pragma once

#include <algorithm>
#include <cctype>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace duet {

struct JobTypeSpeeds {
  std::vector<std::string> gpu_types;  // the table's GPU types, lower case
  // Job type name -> its speed on each of gpu_types / that type's mean.
  std::unordered_map<std::string, std::vector<double>> affinity;

  // The job type's factor on each of a cluster's GPU types (out[i] for
  // cluster_types[i]; 1 for a type the table does not know). False, with out
  // all 1, when the job type is unknown.
  bool factors(std::string_view job_type, std::span<const std::string> cluster_types, std::vector<double>& out) const {
    out.assign(cluster_types.size(), 1.0);
    if (job_type.empty()) return false;
    auto it = affinity.find(std::string(job_type));
    if (it == affinity.end()) return false;
    for (std::size_t t = 0; t < cluster_types.size(); ++t)
      for (std::size_t g = 0; g < gpu_types.size(); ++g)
        if (same_name(cluster_types[t], gpu_types[g])) out[t] = it->second[g];
    return true;
  }

 private:
  static bool same_name(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
  }
};

}  // namespace duet
