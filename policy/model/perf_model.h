// How fast a job progresses on its placement (documented for users in
// duet-sim(1), "Performance model"). Progress is in reference seconds: a job of duration D
// finishes when it has made D seconds of progress; its rate is
//
//   rate = min over machines m of the placement of
//            R(jt, type m) * s_m * f_m(t) * prod_{k on m, k != job} I(jt, k, m)
//          * C
//
//   R(jt, g)  Gavel throughput of job type jt alone on one GPU of type g /
//             on a V100 (flat `speed` from the cluster file for other types)
//   s_m       persistent machine factor, exp(N(0, speed_sigma^2)) clipped to
//             [0.5, 1.5], drawn per machine from the seed (variability.h)
//   f_m(t)    fluctuation exp(x_m(t)), x an AR(1) stepped each fluctuation period
//   I         co-location: 1 - beta * (1 - c), c = Gavel throughput of jt
//             sharing a GPU with k / alone; beta = interference_beta scales GPU
//             sharing down to machine sharing (PCIe, host memory, CPU) -- an
//             assumption, Gavel measured only same-GPU pairs
//   C         1 on one machine; Gavel unconsolidated / consolidated throughput
//             of jt at its scale (1,2,4,8 GPUs) when spread over machines; times
//             cross_rack_factor when the machines span racks (an assumption)
//
// With `ideal` every factor is 1: a job runs exactly its duration.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "policy/core/policy.h"
#include "policy/model/cluster_model.h"
#include "policy/model/throughput.h"
#include "policy/model/variability.h"
#include "policy/util/rng.h"

namespace duet {

struct ModelOptions {
  bool ideal = false;
  uint64_t seed = 1;
  double interference_beta = 0.10;
  double cross_rack_factor = 0.90;
  double fluctuation_period_s = 3600;
  // Reference seconds of work added to a job each time it restarts after a
  // preemption (checkpoint + restore); 0 when ideal.
  double restart_overhead_s = 30;
  Variability variability = kFittedVariability;
};

class PerfModel {
 public:
  PerfModel(const ThroughputTable& table, const ClusterModel& cluster, const ModelOptions& opt);

  bool ideal() const { return opt_.ideal; }
  const ModelOptions& options() const { return opt_; }
  double machine_factor(int m) const { return speed_[m]; }
  double fluctuation(int m) const { return std::exp(x_[m]); }
  // What a policy may know of a machine: its type's mean speed x s_m.
  double known_speed(int m) const;
  // Steps every machine's AR(1) fluctuation once.
  void advance_fluctuation();

  // Co-location bookkeeping: a job of type jt starts/stops on machine m.
  void add_job(int m, int jt) { on_[m].push_back(jt); }
  void remove_job(int m, int jt);

  // Progress rate of a job of type jt placed on `parts` (already added).
  double rate(int jt, int gpus, std::span<const PlacementPart> parts) const;

 private:
  double type_speed(int jt, int m) const;
  int table_gpu(int m) const;
  const ThroughputTable& table_;
  const ClusterModel& cluster_;
  ModelOptions opt_;
  // The AR(1) innovations: a standard normal per (seed, step, machine), read
  // from a seeded table of draws by a hash, so every policy sees the same
  // machine speeds over time for a seed and a step costs no libm calls.
  static constexpr size_t kNormals = 1 << 16;
  double normal(uint64_t step, uint64_t m) const;
  uint64_t step_base(uint64_t step) const;
  std::vector<double> speed_, x_;
  std::vector<double> normals_ = std::vector<double>(kNormals);
  uint64_t step_ = 0;
  std::vector<std::vector<int>> on_;  // job types on each machine
};

}  // namespace duet
