// Clusters of a family: a number of GPUs and of GPU types from the spec's
// ranges, types from Gavel's table first (they keep per-job-type speeds) and
// flat-speed ones after, each type's share of the GPUs drawn, racks of
// rack_machines machines of one type. The pai source samples PAI's machines.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "policy/io/pai.h"
#include "policy/scenario/generate.h"

namespace duet::scenario {

namespace {

struct TypeDraw {
  std::string name;
  double speed = -1;  // < 0: the throughput table's
  double weight = 1;
  int gpm = 8;  // GPUs a machine
  int machines = 1;
};

// Gavel's types in the table, in a seeded order; the first `k` are used.
std::vector<std::string> table_types(const ThroughputTable& table, int k, Rng& rng) {
  std::vector<std::string> names;
  for (const std::string& g : table.gpu_types()) names.push_back(g);
  for (size_t i = names.size(); i > 1; --i) std::swap(names[i - 1], names[rng.below(i)]);
  names.resize(std::min<size_t>(names.size(), static_cast<size_t>(std::max(k, 0))));
  for (std::string& n : names)
    for (char& c : n) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return names;
}

int total(const std::vector<TypeDraw>& types) {
  int t = 0;
  for (const TypeDraw& d : types) t += d.machines * d.gpm;
  return t;
}

// Machines per type so the total stays inside the range of cluster_gpus:
// shares rounded, then machines taken from the largest type or added to the
// heaviest until it fits; types that cannot fit at one machine each are dropped.
void size_types(std::vector<TypeDraw>& types, double target, const Range& gpus) {
  double wsum = 0;
  for (const TypeDraw& d : types) wsum += d.weight;
  for (TypeDraw& d : types) d.machines = std::max(1, static_cast<int>(std::lround(target * d.weight / wsum / d.gpm)));
  auto most = [&](bool by_weight) {
    size_t b = 0;
    for (size_t i = 1; i < types.size(); ++i)
      if (by_weight ? types[i].weight > types[b].weight
                    : types[i].machines * types[i].gpm > types[b].machines * types[b].gpm)
        b = i;
    return b;
  };
  while (total(types) > gpus.hi) {
    size_t b = most(false);
    if (types[b].machines > 1) {
      --types[b].machines;
    } else if (types.size() > 1) {
      types.pop_back();  // every type at one machine: fewer types
    } else {
      break;
    }
  }
  while (total(types) + types[most(true)].gpm <= gpus.hi && total(types) < gpus.lo) ++types[most(true)].machines;
}

ClusterSpec synthetic(const ScenarioSpec& s, const Range& gpus, const ThroughputTable& table, Rng& rng) {
  const double target = s.cluster_gpus.lo;  // resolved: lo == hi
  const int ntypes = static_cast<int>(s.gpu_types.lo);
  std::vector<TypeDraw> types;
  for (const std::string& n : table_types(table, std::min(ntypes, s.table_types), rng)) types.push_back({n});
  for (int tries = 0; static_cast<int>(types.size()) < ntypes && tries < 1000; ++tries) {
    // Flat types are named after their speed (g045 = 0.45x a V100); two draws
    // that round alike would be one type, so such a draw is made again.
    // Speeds are kept to 0.01, inside the range where the range allows it.
    const double lo = std::max(0.01, std::ceil(s.speed.lo * 100 - 1e-9) / 100);
    const double hi = std::max(lo, std::floor(s.speed.hi * 100 + 1e-9) / 100);
    const double sp = std::clamp(std::round(draw(s.speed, rng, true) * 100) / 100, lo, hi);
    std::string name = fmt::format("g{:03d}", static_cast<int>(std::lround(sp * 100)));
    if (std::any_of(types.begin(), types.end(), [&](const TypeDraw& d) { return d.name == name; })) continue;
    types.push_back({name, sp});
  }
  for (TypeDraw& d : types) {
    d.weight = -std::log(1 - rng.uniform());  // exponential shares: mixes from even to lopsided
    d.gpm = s.gpus_per_machine[rng.below(s.gpus_per_machine.size())];
  }
  // Which type comes first in the file matters to first-fit: a seeded order.
  for (size_t i = types.size(); i > 1; --i) std::swap(types[i - 1], types[rng.below(i)]);
  size_types(types, target, gpus);

  ClusterSpec c;
  int n = 0;
  for (const TypeDraw& d : types)
    for (int m = 0; m < d.machines; ++m) {
      MachineSpec ms;
      ms.name = fmt::format("m{:05d}", ++n);
      ms.gpu_type = d.name;
      ms.gpus = d.gpm;
      ms.rack = fmt::format("{}-r{:03d}", d.name, m / s.rack_machines);
      ms.speed = d.speed;
      c.machines.push_back(std::move(ms));
    }
  return c;
}

ClusterSpec pai(const ScenarioSpec& s, const ScenarioSources& src, Rng& rng) {
  if (!src.pai) throw std::invalid_argument("cluster_source = pai needs the PAI machine list (pai_path)");
  const double fraction = std::min(1.0, s.cluster_gpus.lo / std::max(1, src.pai->total_gpus()));
  ClusterSpec c = fraction < 1 ? sample_cluster(*src.pai, fraction, rng.next()) : *src.pai;
  for (MachineSpec& m : c.machines)
    if (m.speed <= 0) m.speed = pai_type_speed(m.gpu_type);
  return c;
}

}  // namespace

double draw(const Range& r, Rng& rng, bool log) {
  const double u = rng.uniform();  // always drawn: a fixed value keeps the stream aligned
  if (r.lo >= r.hi) return r.lo;
  if (log && r.lo > 0) return std::exp(std::log(r.lo) + u * (std::log(r.hi) - std::log(r.lo)));
  return r.lo + u * (r.hi - r.lo);
}

ClusterSpec make_cluster(const ScenarioSpec& s, const Range& gpus, const ThroughputTable& table,
                         const ScenarioSources& src, Rng& rng) {
  ClusterSpec c = s.cluster_source == "pai" ? pai(s, src, rng) : synthetic(s, gpus, table, rng);
  c.source = "scenario cluster";
  return c;
}

}  // namespace duet::scenario
