#include "policy/learn/model/spread_sets.h"

#include <stdexcept>
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

}  // namespace duet::learn
