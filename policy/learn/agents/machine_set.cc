#include "policy/learn/agents/machine_set.h"

#include <algorithm>

namespace duet::learn {

double fastest_floor(std::span<const MachineView> machines, int gpus, std::span<const std::uint32_t> cand) {
  for (std::uint32_t m : cand)
    if (machines[m].free_gpus >= gpus) return 0;  // one machine holds it: no set
  std::vector<std::uint32_t> by_speed(cand.begin(), cand.end());
  std::stable_sort(by_speed.begin(), by_speed.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return machines[a].speed > machines[b].speed; });
  int have = 0;
  for (std::uint32_t m : by_speed) {
    have += machines[m].free_gpus;
    if (have >= gpus) return machines[m].speed;
  }
  return 0;  // not enough GPUs at all: the caller decides
}

}  // namespace duet::learn
