#include "policy/learn/agents/machine_set.h"

#include <algorithm>

namespace duet::learn {

namespace {

template <class Gpus>
double floor_of(std::span<const MachineView> machines, int gpus, std::span<const std::uint32_t> cand, Gpus count) {
  for (std::uint32_t m : cand)
    if (count(machines[m]) >= gpus) return 0;  // one machine holds it: no set
  std::vector<std::uint32_t> by_speed(cand.begin(), cand.end());
  std::stable_sort(by_speed.begin(), by_speed.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return machines[a].speed > machines[b].speed; });
  std::int64_t have = 0;
  for (std::uint32_t m : by_speed) {
    have += count(machines[m]);
    if (have >= gpus) return machines[m].speed;
  }
  return 0;  // not enough GPUs at all: the caller decides
}

}  // namespace

double fastest_floor(std::span<const MachineView> machines, int gpus, std::span<const std::uint32_t> cand) {
  return floor_of(machines, gpus, cand, [](const MachineView& m) { return m.free_gpus; });
}

double spread_speed_limit(std::span<const MachineView> machines, int gpus, std::span<const std::uint32_t> cand,
                          double share) {
  if (!(share > 0)) return 0;
  return share * floor_of(machines, gpus, cand, [](const MachineView& m) { return m.total_gpus; });
}

double one_machine_speed_limit(std::span<const MachineView> machines, int gpus, std::span<const std::uint32_t> cand,
                               double share) {
  if (!(share > 0)) return 0;
  double top = 0;
  std::int64_t all = 0;
  for (std::uint32_t m : cand) {
    all += machines[m].total_gpus;
    if (machines[m].total_gpus >= gpus) top = std::max(top, machines[m].speed);
  }
  const double limit = share * top;
  std::int64_t fast = 0;
  for (std::uint32_t m : cand)
    if (machines[m].speed >= limit) fast += machines[m].total_gpus;
  return fast >= kFloorCapacityShare * static_cast<double>(all) ? limit : 0;
}

}  // namespace duet::learn
