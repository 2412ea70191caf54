#include "policy/learn/agents/placement_features.h"

#include <algorithm>
#include <cmath>

#include "policy/learn/gp/performance_gp.h"

namespace duet::learn {

void placement_features(const PerformanceGp& gp, const PlacementJob& job, std::span<const MachineState> machines,
                        std::vector<float>& rows) {
  rows.resize(machines.size() * kPlacementFeatures);
  const auto mean = gp.means(job.job_type);
  const auto var = gp.vars(job.job_type);
  const float asked = std::max<float>(1.0f, job.gpus);
  float* r = rows.data();
  for (const auto& m : machines) {
    const float mu = static_cast<float>(mean[m.machine]);
    const float total = std::max<float>(1.0f, m.total_gpus);
    const float free = m.free_gpus;
    r[kGpMean] = mu;
    r[kGpSd] = std::sqrt(static_cast<float>(var[m.machine]));
    r[kRelSpeed] = m.rel_speed;
    r[kPredLogSpeed] = std::log(std::max(m.rel_speed, 1e-3f)) + mu;
    r[kFreeShare] = free / total;
    r[kJobShare] = std::min(free, asked) / asked;
    r[kLeftOver] = (free - asked) / total;
    r[kColocated] = m.colocated_jobs;
    r[kLocality] = m.locality;
    r += kPlacementFeatures;
  }
}

}  // namespace duet::learn
