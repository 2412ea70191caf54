// The emulated job's progress rate: the formula of PerfModel::rate
// (policy/model/perf_model.h) with the machine factor s_m taken from the test
// cluster's nodes.csv instead of drawn, and no fluctuation:
//
//   rate = min over nodes m of  R(jt, type m) * s_m * prod_{k on m} I(jt, k, m)
//        * C (spread over several nodes) * cross-rack factor
//
// R, I and C come from the throughput table exactly as in the simulator.
#pragma once

#include <string>
#include <vector>

#include "policy/model/throughput.h"

namespace duet::replay {

struct EmuPart {
  int table_gpu = -1;       // GPU type in the table; -1 = unknown type (R = 1)
  double speed = 1;         // s_m from nodes.csv
  std::string rack;         // "" = its own rack
  std::vector<int> others;  // job types of the other emulated jobs on the node
};

struct EmuRateOptions {
  double interference_beta = 0.10;  // PerfModel's ModelOptions defaults
  double cross_rack_factor = 0.90;
};

double emulated_rate(const ThroughputTable& table, int job_type, int gpus, const std::vector<EmuPart>& parts,
                     const EmuRateOptions& opt = {});

}  // namespace duet::replay
