#include "policy/learn/machine_set.h"

#include <algorithm>

namespace duet::learn {

void keep_fastest_floor(std::span<const MachineView> machines, int gpus, std::vector<std::uint32_t>& cand) {
  std::vector<std::uint32_t> by_speed(cand);
  std::stable_sort(by_speed.begin(), by_speed.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return machines[a].speed > machines[b].speed; });
  int have = 0;
  double floor = 0;
  for (std::uint32_t m : by_speed) {
    have += machines[m].free_gpus;
    floor = machines[m].speed;
    if (have >= gpus) break;
  }
  if (have < gpus) return;  // not enough GPUs at all: the caller decides
  std::erase_if(cand, [&](std::uint32_t m) { return machines[m].speed < floor; });
}

}  // namespace duet::learn
