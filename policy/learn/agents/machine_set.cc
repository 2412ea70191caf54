#include "policy/learn/agents/machine_set.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace duet::learn {

namespace {
constexpr std::pair<SpreadSets, const char*> kSpreadNames[] = {{SpreadSets::fastest, "fastest"},
                                                               {SpreadSets::tight, "tight"},
                                                               {SpreadSets::slow, "slow"},
                                                               {SpreadSets::learned, "learned"}};
}  // namespace

const char* spread_sets_name(SpreadSets s) {
  for (const auto& [v, n] : kSpreadNames)
    if (v == s) return n;
  return "?";
}

std::vector<std::string> spread_sets_names() {
  std::vector<std::string> v;
  for (const auto& e : kSpreadNames) v.emplace_back(e.second);
  return v;
}

SpreadSets parse_spread_sets(std::string_view name) {
  for (const auto& [v, n] : kSpreadNames)
    if (name == n) return v;
  std::string known;
  for (const auto& e : kSpreadNames) known += (known.empty() ? "" : ", ") + std::string(e.second);
  throw std::invalid_argument("unknown spread rule '" + std::string(name) + "' (known: " + known + ")");
}

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

void keep_fastest_floor(std::span<const MachineView> machines, int gpus, std::vector<std::uint32_t>& cand) {
  const double floor = fastest_floor(machines, gpus, cand);
  if (floor > 0) std::erase_if(cand, [&](std::uint32_t m) { return machines[m].speed < floor; });
}

}  // namespace duet::learn
