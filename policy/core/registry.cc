// Builds policies by name; the baselines are registered here, other parts
// (learned agents) add theirs with register_ordering/register_placement.
#include <map>
#include <mutex>
#include <stdexcept>

#include "policy/baselines/ordering.h"
#include "policy/baselines/placement.h"
#include "policy/core/policy.h"

namespace duet {

namespace {

struct Registry {
  std::mutex mu;
  std::vector<std::pair<std::string, OrderingFactory>> ordering;
  std::vector<std::pair<std::string, PlacementFactory>> placement;
  Registry() {
    ordering = {{"fifo", make_fifo},
                {"sjf-oracle", make_sjf_oracle},
                {"srtf-oracle", make_srtf_oracle},
                {"qssf", make_qssf},
                {"tiresias-las", make_tiresias_las},
                {"multifactor", make_multifactor}};
    placement = {{"first-fit", [](uint64_t) { return make_first_fit(); }},
                 {"best-fit", [](uint64_t) { return make_best_fit(); }},
                 {"least-loaded", [](uint64_t) { return make_least_loaded(); }},
                 {"random", [](uint64_t s) { return make_random_placement(s); }},
                 {"fastest-first", [](uint64_t) { return make_fastest_first(); }}};
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

template <class V>
std::string known(const V& v) {
  std::string s;
  for (const auto& [n, f] : v) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

std::unique_ptr<OrderingPolicy> make_ordering(std::string_view name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  for (const auto& [n, f] : r.ordering)
    if (n == name) return f();
  throw std::invalid_argument("unknown ordering policy '" + std::string(name) + "' (known: " + known(r.ordering) + ")");
}

std::unique_ptr<PlacementPolicy> make_placement(std::string_view name, uint64_t seed) {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  for (const auto& [n, f] : r.placement)
    if (n == name) return f(seed);
  throw std::invalid_argument("unknown placement policy '" + std::string(name) + "' (known: " + known(r.placement) + ")");
}

std::vector<std::string> ordering_names() {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  std::vector<std::string> v;
  for (const auto& [n, f] : r.ordering) v.push_back(n);
  return v;
}

std::vector<std::string> placement_names() {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  std::vector<std::string> v;
  for (const auto& [n, f] : r.placement) v.push_back(n);
  return v;
}

void register_ordering(std::string name, OrderingFactory f) {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  for (auto& [n, old] : r.ordering)
    if (n == name) { old = f; return; }
  r.ordering.emplace_back(std::move(name), f);
}

void register_placement(std::string name, PlacementFactory f) {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  for (auto& [n, old] : r.placement)
    if (n == name) { old = f; return; }
  r.placement.emplace_back(std::move(name), f);
}

}  // namespace duet
