// The cluster the placement suites spread jobs over: three X100s with one GPU
// free, a half-used V100 machine, eight 1-GPU T4s and a K80 machine, so what a
// job no machine holds alone is spread over depends on the fastest floor
// (policy/learn/agents/machine_set.h).
#pragma once
#include <string>
#include <vector>

#include "policy/core/policy.h"

namespace test_support {

inline const std::vector<std::string> kSpreadTypes = {"X100", "V100", "T4", "K80"};

inline std::vector<duet::MachineView> spread_cluster() {
  static const char* names[13] = {"x1", "x2", "x3", "v1", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "k1"};
  std::vector<duet::MachineView> ms;
  for (int i = 0; i < 3; ++i) ms.push_back({names[i], 0, 4, 1, 0, 2.3, 3});
  ms.push_back({names[3], 1, 8, 2, 1, 1.0, 2});
  for (int i = 0; i < 8; ++i) ms.push_back({names[4 + i], 2, 1, 1, 2, 0.4, 0});
  ms.push_back({names[12], 3, 16, 3, 3, 0.3, 4});
  return ms;
}

}  // namespace test_support
