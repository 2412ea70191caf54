// The baselines and the learned policies in one fixed table, in the order the
// help texts list them.
#include "policy/registry/policy_registry.h"

#include <stdexcept>

#include "policy/baselines/dlas.h"
#include "policy/baselines/gittins.h"
#include "policy/baselines/heterogeneity.h"
#include "policy/baselines/ordering.h"
#include "policy/baselines/placement.h"
#include "policy/learn/agents/duet_policy.h"
#include "policy/learn/agents/features.h"
#include "policy/learn/agents/placement_features.h"
#include "policy/learn/model/model_file.h"

namespace duet {

namespace {

using OrderingFactory = std::unique_ptr<OrderingPolicy> (*)(const PolicyContext&);
using PlacementFactory = std::unique_ptr<PlacementPolicy> (*)(const PolicyContext&);

template <class F>
struct Entry {
  const char* name;
  F make;
};

std::shared_ptr<const learn::Model> need_model(const PolicyContext& c) {
  if (!c.model)
    throw std::invalid_argument("policy 'duet' needs a model file: give --model FILE (duet model init writes one)");
  return c.model;
}

learn::DuetPolicyOptions learned_placement(const PolicyContext& c) {
  learn::DuetPolicyOptions o;
  o.seed = c.seed;
  if (c.throughputs) o.job_speeds = std::make_shared<const JobTypeSpeeds>(job_type_speeds(*c.throughputs));
  return o;
}

const Entry<OrderingFactory> kOrderings[] = {
    {"fifo", [](const PolicyContext&) { return make_fifo(); }},
    {"sjf-oracle", [](const PolicyContext&) { return make_sjf_oracle(); }},
    {"srtf-oracle", [](const PolicyContext&) { return make_srtf_oracle(); }},
    {"qssf", [](const PolicyContext&) { return make_qssf(); }},
    {"tiresias-las", [](const PolicyContext&) { return make_dlas(true); }},
    {"tiresias-dlas", [](const PolicyContext&) { return make_dlas(false); }},
    {"multifactor", [](const PolicyContext&) { return make_multifactor(); }},
    {"gavel-las", [](const PolicyContext&) { return make_gavel_las(); }},
    {"gittins", [](const PolicyContext&) { return make_gittins(); }},
    {"duet",
     [](const PolicyContext& c) {
       learn::DuetPolicyOptions o;
       o.messages = c.messages;
       o.preemption = c.preemption;
       return learn::make_duet_ordering(need_model(c), o);
     }},
};

// The learned placement with one option changed.
template <learn::KernelKind K>
std::unique_ptr<PlacementPolicy> duet_kernel(const PolicyContext& c) {
  auto o = learned_placement(c);
  o.kernel = K;
  return learn::make_duet_placement(need_model(c), o);
}
template <learn::SpreadSets S>
std::unique_ptr<PlacementPolicy> duet_spread(const PolicyContext& c) {
  auto o = learned_placement(c);
  o.spread = S;
  return learn::make_duet_placement(need_model(c), o);
}

const Entry<PlacementFactory> kPlacements[] = {
    {"first-fit", [](const PolicyContext&) { return make_first_fit(); }},
    {"best-fit", [](const PolicyContext&) { return make_best_fit(); }},
    {"least-loaded", [](const PolicyContext&) { return make_least_loaded(); }},
    {"random", [](const PolicyContext& c) { return make_random_placement(c.seed); }},
    {"fastest-first", [](const PolicyContext&) { return make_fastest_first(); }},
    {"type-affinity", [](const PolicyContext& c) { return make_type_affinity(c.throughputs); }},
    // The same, but a job that one machine could hold whole waits for one
    // instead of being spread (as the learned placement does).
    {"first-fit-wait", [](const PolicyContext&) { return make_waiting(make_first_fit()); }},
    {"best-fit-wait", [](const PolicyContext&) { return make_waiting(make_best_fit()); }},
    {"least-loaded-wait", [](const PolicyContext&) { return make_waiting(make_least_loaded()); }},
    {"fastest-first-wait", [](const PolicyContext&) { return make_waiting(make_fastest_first()); }},
    {"type-affinity-wait", [](const PolicyContext& c) { return make_waiting(make_type_affinity(c.throughputs)); }},
    {"duet", [](const PolicyContext& c) { return learn::make_duet_placement(need_model(c), learned_placement(c)); }},
    // Ablations: the model's GP kernel replaced by an RBF on machine
    // features, or no GP at all (prior mean and variance only).
    {"duet-rbf", duet_kernel<learn::KernelKind::rbf>},
    {"duet-nogp", duet_kernel<learn::KernelKind::none>},
    // Every job placed by its machines' known speeds, its type's speeds on
    // each GPU type unused (as select/duet without JobTypeSpeedsFile).
    {"duet-type-blind",
     [](const PolicyContext& c) {
       auto o = learned_placement(c);
       o.type_blind = true;
       return learn::make_duet_placement(need_model(c), o);
     }},
    // A job no machine holds alone, whatever the model's rule: the fastest
    // machines that hold it, the slowest at or above that floor, the slowest
    // of all, or the model's first machine (duet train --spread-sets).
    {"duet-fastest-sets", duet_spread<learn::SpreadSets::fastest>},
    {"duet-tight-sets", duet_spread<learn::SpreadSets::tight>},
    {"duet-slow-sets", duet_spread<learn::SpreadSets::slow>},
    {"duet-learned-sets", duet_spread<learn::SpreadSets::learned>},
};

template <class T, size_t N>
std::vector<std::string> names(const Entry<T> (&table)[N]) {
  std::vector<std::string> v;
  for (const auto& e : table) v.emplace_back(e.name);
  return v;
}

template <class T, size_t N>
T find(const Entry<T> (&table)[N], std::string_view name, const char* kind) {
  for (const auto& e : table)
    if (e.name == name) return e.make;
  std::string known;
  for (const auto& e : table) known += (known.empty() ? "" : ", ") + std::string(e.name);
  throw std::invalid_argument("unknown " + std::string(kind) + " policy '" + std::string(name) + "' (known: " + known +
                              ")");
}

}  // namespace

std::unique_ptr<OrderingPolicy> make_ordering(std::string_view name, const PolicyContext& ctx) {
  return find(kOrderings, name, "ordering")(ctx);
}

std::unique_ptr<PlacementPolicy> make_placement(std::string_view name, const PolicyContext& ctx) {
  return find(kPlacements, name, "placement")(ctx);
}

std::vector<std::string> ordering_names() { return names(kOrderings); }
std::vector<std::string> placement_names() { return names(kPlacements); }

std::shared_ptr<const learn::Model> load_policy_model(const std::string& path) {
  auto m = std::make_shared<const learn::Model>(learn::load_model(path));
  m->check_inputs(learn::kJobFeatures, learn::kClusterFeatures, learn::kPlacementFeatures);
  return m;
}

}  // namespace duet
