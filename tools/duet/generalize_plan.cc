// The plan of duet eval --protocol generalize: the budgets and which scenarios
// train and evaluate for each held-out source (generalize_protocol.h).
#include <algorithm>
#include <stdexcept>

#include "tools/duet/generalize_protocol.h"
#include "policy/scenario/spec.h"
#include "policy/util/rng.h"

namespace duet::cli {
namespace {

std::vector<std::string> preset_names(std::span<const Preset> presets) {
  std::vector<std::string> v;
  for (const Preset& p : presets) v.emplace_back(p.name);
  return v;
}

// The given names, each checked against the presets, or every preset.
std::vector<std::string> distribution(const std::vector<std::string>& given, std::span<const Preset> presets,
                                      const char* what) {
  const std::vector<std::string> all = preset_names(presets);
  if (given.empty()) return all;
  for (const std::string& g : given)
    if (std::find(all.begin(), all.end(), g) == all.end())
      throw std::invalid_argument(std::string("generalize: unknown ") + what + " '" + g + "' (duet scenario list)");
  return given;
}

// A stable number for a name, so that a source's scenarios do not depend on
// which other sources run with it (FNV-1a).
uint64_t name_hash(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

std::vector<std::string> without(std::vector<std::string> v, const std::string& x) {
  v.erase(std::remove(v.begin(), v.end(), x), v.end());
  return v;
}

}  // namespace

GeneralizeBudget generalize_budget(const std::string& name) {
  GeneralizeBudget b;
  if (name == "small") return b;
  if (name == "full") {
    b.train_scenarios = 12;
    b.episodes = 3;
    b.eval_scenarios = 6;
    b.jobs = 2000;
    b.window = 2000;
    return b;
  }
  throw std::invalid_argument("--budget: expected small or full, got '" + name + "'");
}

std::vector<HeldOutPlan> plan_generalize(const GeneralizeArgs& a) {
  const std::vector<std::string> fams = distribution(a.families, cluster_families(), "cluster family");
  const std::vector<std::string> works = distribution(a.workloads, workload_presets(), "workload");
  std::vector<std::string> sources = a.sources;
  if (sources.empty()) {
    sources = fams;
    sources.insert(sources.end(), works.begin(), works.end());
  }
  if (a.seeds.empty()) throw std::invalid_argument("generalize: no training seeds");
  if (a.budget.train_scenarios < 1 || a.budget.eval_scenarios < 1 || a.budget.episodes < 1 || a.budget.jobs < 2)
    throw std::invalid_argument("generalize: the budget needs at least one training and one eval scenario, "
                                "one episode and two jobs");
  std::vector<HeldOutPlan> plans;
  for (const std::string& src : sources) {
    HeldOutPlan p;
    p.source = src;
    const bool fam = std::find(fams.begin(), fams.end(), src) != fams.end();
    const bool work = std::find(works.begin(), works.end(), src) != works.end();
    if (!fam && !work)
      throw std::invalid_argument("--sources: '" + src + "' is neither a cluster family nor a workload of the "
                                  "distribution (duet scenario list)");
    p.is_family = fam;
    const std::vector<std::string> train_fams = fam ? without(fams, src) : fams;
    const std::vector<std::string> train_works = work ? without(works, src) : works;
    if (train_fams.empty() || train_works.empty())
      throw std::invalid_argument("generalize: holding out '" + src + "' leaves nothing to train on");
    const uint64_t h = name_hash(src);
    // Eval: the held-out preset with every partner in turn, from a
    // source-dependent start so that short budgets still vary the partner.
    const std::vector<std::string>& partners = fam ? works : fams;
    for (int j = 0; j < a.budget.eval_scenarios; ++j) {
      const std::string& other = partners[(h + static_cast<uint64_t>(j)) % partners.size()];
      p.eval.push_back(ScenarioDraw{fam ? src : other, fam ? other : src, static_cast<uint64_t>(j + 1)});
    }
    // Training: each seed draws its own scenarios from the other presets.
    for (uint64_t s : a.seeds) {
      Rng rng(mix_seed(s, h, 0x747261696eULL));
      std::vector<ScenarioDraw>& t = p.train[s];
      for (int i = 0; i < a.budget.train_scenarios; ++i) {
        const std::string& f = train_fams[rng.below(train_fams.size())];
        const std::string& w = train_works[rng.below(train_works.size())];
        t.push_back(ScenarioDraw{f, w, 100000 * s + static_cast<uint64_t>(i + 1)});
      }
    }
    plans.push_back(std::move(p));
  }
  return plans;
}

}  // namespace duet::cli
