// The cluster the placement suites spread jobs over: three 2-GPU X100s with
// one GPU free, a 3-GPU V100 machine with two free, eight 1-GPU T4s and a
// 3-GPU K80 machine, so what a job no machine holds alone is spread over
// depends on the fastest floor (policy/learn/agents/machine_set.h). No
// machine has 4 GPUs: a 4-GPU job must be spread (a job one machine could
// hold whole waits for it, placement_routine.h).
#pragma once
#include <string>
#include <vector>

#include "policy/core/policy.h"

namespace test_support {

inline const std::vector<std::string> kSpreadTypes = {"X100", "V100", "T4", "K80"};

inline std::vector<duet::MachineView> spread_cluster() {
  static const char* names[13] = {"x1", "x2", "x3", "v1", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "k1"};
  std::vector<duet::MachineView> ms;
  for (int i = 0; i < 3; ++i) ms.push_back({names[i], 0, 2, 1, 0, 2.3, 1});
  ms.push_back({names[3], 1, 3, 2, 1, 1.0, 1});
  for (int i = 0; i < 8; ++i) ms.push_back({names[4 + i], 2, 1, 1, 2, 0.4, 0});
  ms.push_back({names[12], 3, 3, 3, 3, 0.3, 0});
  return ms;
}

}  // namespace test_support
