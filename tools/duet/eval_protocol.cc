#include "tools/duet/eval_protocol.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tools/duet/common.h"
#include "policy/core/policy.h"
#include "policy/model/gavel.h"
#include "policy/io/pai.h"
#include "policy/io/philly.h"
#include "policy/report/summary.h"
#include "policy/sim/simulator.h"

namespace duet::cli {
namespace {

struct Split {
  const char* name;
  const char* from;
  const char* to;
};
// Philly by submit time (UTC): train Sep-Oct, validate Nov 1-15, test Nov 16 on.
constexpr Split kSplits[] = {{"train", "2017-09-01 00:00:00", "2017-11-01 00:00:00"},
                             {"validate", "2017-11-01 00:00:00", "2017-11-16 00:00:00"},
                             {"test", "2017-11-16 00:00:00", "2018-01-01 00:00:00"}};

// Every baseline ordering with first-fit and fastest-first, the other
// placements under QSSF, and the pairings where Gavel's LAS and the Gittins
// rank are strongest; with a model, the learned rows and the ablations.
const char* kBaselinePairs =
    "*/first-fit,*/fastest-first,qssf/best-fit,qssf/least-loaded,qssf/random,gavel-las/type-affinity,"
    "gittins/best-fit,gittins/type-affinity";
const char* kLearnedPairs =
    "duet/duet,duet/best-fit,duet/fastest-first,fifo/duet,qssf/duet,duet/duet-rbf,duet/duet-nogp";

bool learned(const std::string& name) { return name.rfind("duet", 0) == 0; }

// Reference-GPU capacity: GPUs x the type's mean speed over job types.
double capacity(const ClusterModel& c) {
  double cap = 0;
  for (const auto& m : c.machines) cap += m.gpus * c.gpu_types[m.type].mean_speed;
  return cap;
}

struct Stat {
  std::vector<double> v;
  double mean() const {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0 : s / static_cast<double>(v.size());
  }
  double sd() const {
    if (v.size() < 2) return 0;
    double m = mean(), s = 0;
    for (double x : v) s += (x - m) * (x - m);
    return std::sqrt(s / static_cast<double>(v.size() - 1));
  }
};

struct PairStats {
  std::string ordering, placement;
  bool oracle = false;
  Stat jct_h, p95_h, fees, energy, makespan_h, queue_h;
};

struct LoadResult {
  double load = 0;
  std::vector<std::string> clusters;  // one line per seed
  std::vector<PairStats> pairs;
  std::map<uint64_t, std::vector<SimResult>> runs;  // per seed, in pair order
};

std::string pm(const Stat& s, int digits) { return fmt::format("{:.{}f} ± {:.{}f}", s.mean(), digits, s.sd(), digits); }

// Index of the non-oracle, non-learned pair with the lowest mean JCT.
int best_baseline(const LoadResult& r) {
  int best = -1;
  for (size_t i = 0; i < r.pairs.size(); ++i) {
    const PairStats& p = r.pairs[i];
    if (p.oracle || learned(p.ordering) || learned(p.placement)) continue;
    if (best < 0 || p.jct_h.mean() < r.pairs[best].jct_h.mean()) best = static_cast<int>(i);
  }
  return best;
}
int find_pair(const LoadResult& r, const std::string& o, const std::string& p) {
  for (size_t i = 0; i < r.pairs.size(); ++i)
    if (r.pairs[i].ordering == o && r.pairs[i].placement == p) return static_cast<int>(i);
  return -1;
}
int best_oracle(const LoadResult& r) {
  int best = -1;
  for (size_t i = 0; i < r.pairs.size(); ++i)
    if (r.pairs[i].ordering == "srtf-oracle" && (best < 0 || r.pairs[i].jct_h.mean() < r.pairs[best].jct_h.mean()))
      best = static_cast<int>(i);
  return best;
}

// Per-seed ratio a/b of a metric, averaged over seeds (pairs ran on the same
// cluster and seed, so the ratio is side by side).
Stat ratio(const Stat& a, const Stat& b) {
  Stat r;
  for (size_t i = 0; i < a.v.size() && i < b.v.size(); ++i) r.v.push_back(b.v[i] > 0 ? a.v[i] / b.v[i] : 0);
  return r;
}

void write_md(const std::string& path, const ProtocolArgs& a, size_t jobs, double offered,
              const std::vector<LoadResult>& loads) {
  std::ofstream f(path);
  f << "# duet eval --protocol philly\n\n";
  f << fmt::format(
      "Split **{}**: {} Philly jobs, offered load {:.1f} reference GPUs (V100-equivalent). "
      "Seeds: {}. Values are mean ± sd over seeds; times in hours, fees in USD, energy in kWh.\n\n",
      a.split, jobs, offered, a.seeds.size());
  f << "*oracle* rows see true durations (a bound, not a competitor); rows with `duet` are learned "
       "(`duet-rbf`: GP with an RBF kernel on machine features; `duet-nogp`: no GP). "
       "**best** = the baseline with the lowest mean JCT.\n\n";
  for (const LoadResult& r : loads) {
    f << fmt::format("## Load {:.0f}%\n\n", r.load);
    for (const auto& c : r.clusters) f << "- " << c << "\n";
    f << "\n| ordering | placement | mean JCT | p95 JCT | fees USD | energy kWh | makespan | mean queue | |\n"
         "|---|---|---:|---:|---:|---:|---:|---:|---|\n";
    const int best = best_baseline(r);
    for (size_t i = 0; i < r.pairs.size(); ++i) {
      const PairStats& p = r.pairs[i];
      f << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", p.ordering, p.placement, pm(p.jct_h, 2),
                       pm(p.p95_h, 1), pm(p.fees, 0), pm(p.energy, 0), pm(p.makespan_h, 0), pm(p.queue_h, 2),
                       static_cast<int>(i) == best ? "**best**" : (p.oracle ? "oracle" : ""));
    }
    const int duet = find_pair(r, "duet", "duet"), orc = best_oracle(r);
    if (duet >= 0 && best >= 0) {
      const PairStats &d = r.pairs[duet], &b = r.pairs[best];
      f << fmt::format("\nduet/duet vs best baseline {}/{}: mean JCT {} x (target ≤ 0.8), fees {} x (target ≤ 0.9)",
                       b.ordering, b.placement, pm(ratio(d.jct_h, b.jct_h), 3), pm(ratio(d.fees, b.fees), 3));
      if (orc >= 0)
        f << fmt::format("; vs {}/{}: mean JCT {} x", r.pairs[orc].ordering, r.pairs[orc].placement,
                         pm(ratio(d.jct_h, r.pairs[orc].jct_h), 3));
      f << ".\n";
    }
    f << "\n";
  }
}

void write_json(const std::string& path, const ProtocolArgs& a, size_t jobs, double offered,
                const std::vector<LoadResult>& loads) {
  nlohmann::ordered_json j;
  j["protocol"] = "philly";
  j["split"] = a.split;
  j["jobs"] = jobs;
  j["offered_reference_gpus"] = offered;
  j["seeds"] = a.seeds;
  for (const LoadResult& r : loads) {
    nlohmann::ordered_json l;
    l["load_percent"] = r.load;
    l["clusters"] = r.clusters;
    const int best = best_baseline(r);
    if (best >= 0) l["best_baseline"] = r.pairs[best].ordering + "/" + r.pairs[best].placement;
    for (const PairStats& p : r.pairs) {
      nlohmann::ordered_json e;
      e["ordering"] = p.ordering;
      e["placement"] = p.placement;
      e["oracle"] = p.oracle;
      e["mean_jct_h"] = p.jct_h.v;
      e["p95_jct_h"] = p.p95_h.v;
      e["fees_usd"] = p.fees.v;
      e["energy_kwh"] = p.energy.v;
      e["makespan_h"] = p.makespan_h.v;
      e["mean_queue_h"] = p.queue_h.v;
      l["pairs"].push_back(e);
    }
    const int duet = find_pair(r, "duet", "duet");
    if (duet >= 0 && best >= 0) {
      l["duet_jct_ratio"] = ratio(r.pairs[duet].jct_h, r.pairs[best].jct_h).mean();
      l["duet_fee_ratio"] = ratio(r.pairs[duet].fees, r.pairs[best].fees).mean();
    }
    j["loads"].push_back(l);
  }
  std::ofstream(path) << j.dump(2) << "\n";
}

// The protocol's data, read once: the Philly split, the full PAI cluster and
// the offered load the sampled clusters are sized to.
struct ProtocolData {
  std::string trace_name;  // PHILLY [SPLIT], as the per-seed summaries name it
  ThroughputTable table;
  PriceTable prices;
  Trace trace;
  double offered = 0;  // reference GPU-seconds asked over the span of submissions
  ClusterSpec full;
  double full_cap = 0;
};

const Split& find_split(const std::string& name) {
  for (const Split& s : kSplits)
    if (name == s.name) return s;
  throw std::invalid_argument("--split: expected train, validate or test, got '" + name + "'");
}

// A data file given on the command line, else the installed copy.
std::string data_file(const std::string& given, const char* rel, const char* opt) {
  std::string p = given.empty() ? find_data(rel) : given;
  if (p.empty()) throw std::runtime_error(fmt::format("cannot find {}; give {} or set DUET_DATA_DIR", rel, opt));
  return p;
}

ProtocolData read_protocol_data(const ProtocolArgs& a, const Split& split) {
  const std::string philly = data_file(a.philly, "data/philly/philly.csv", "--philly");
  const std::string pai = data_file(a.pai, "data/pai/pai_machine_spec.csv", "--pai");
  const std::string tp = data_file(a.throughputs, "data/gavel/simulation_throughputs.json", "--throughputs");
  const std::string pr = a.prices.empty() ? find_etc("gpu-prices.csv") : a.prices;
  if (pr.empty()) throw std::runtime_error("cannot find gpu-prices.csv; give --prices or set DUET_ETC_DIR");
  ThroughputTable table = read_gavel(tp);
  PriceTable prices = PriceTable::read(pr);

  TimeWindow w;
  parse_timestamp(split.from, w.from);
  parse_timestamp(split.to, w.to);
  Trace trace = read_philly(philly, w);
  double work = 0, last = 0;
  for (const JobSpec& j : trace.jobs) {
    work += j.duration * j.gpus;
    last = std::max(last, j.submit);
  }
  const double offered = work / std::max(last, 1.0);
  ClusterSpec full = read_pai(pai).cluster;
  const double full_cap = capacity(build_cluster(full, table));
  return ProtocolData{philly + " [" + split.name + "]",
                      std::move(table),
                      std::move(prices),
                      std::move(trace),
                      offered,
                      std::move(full),
                      full_cap};
}

// The pairs given with --policies, else the protocol's defaults.
std::vector<std::pair<std::string, std::string>> protocol_pairs(const ProtocolArgs& a) {
  if (!a.policies.empty()) return expand_pairs(a.policies, a.context);
  std::vector<std::pair<std::string, std::string>> pairs = baseline_protocol_pairs(a.context);
  if (a.context.model)
    for (auto& p : expand_pairs(kLearnedPairs, a.context)) pairs.push_back(std::move(p));
  return pairs;
}

void add_run(PairStats& ps, const SimResult& s) {
  ps.oracle = s.oracle;
  ps.jct_h.v.push_back(s.avg_jct_s / 3600);
  ps.p95_h.v.push_back(s.p95_jct_s / 3600);
  ps.fees.v.push_back(s.fees_usd);
  ps.energy.v.push_back(s.energy_kwh);
  ps.makespan_h.v.push_back(s.makespan_s / 3600);
  ps.queue_h.v.push_back(s.avg_queue_s / 3600);
}

// A PAI cluster sampled for this load and seed, written to DIR/cluster.csv.
ClusterSpec sample_load_cluster(const ProtocolData& d, double load, uint64_t seed, const std::string& dir) {
  const double fraction = std::min(1.0, d.offered / (load / 100 * d.full_cap));
  ClusterSpec spec = sample_cluster(d.full, fraction, seed);
  std::filesystem::create_directories(dir);
  spec.source = dir + "/cluster.csv";
  std::ofstream f(spec.source);
  write_cluster(f, spec);
  return spec;
}

// Counts the runs of the whole protocol for the progress lines.
struct RunCounter {
  size_t done = 0, total = 0;
};

// Every pair on one sampled cluster: OUT/load<L>/seed<S>/ with duet eval's
// files; each run's metrics are added to r.pairs.
void run_seed(const ProtocolArgs& a, const ProtocolData& d,
              const std::vector<std::pair<std::string, std::string>>& pairs, double load, uint64_t seed, LoadResult& r,
              RunCounter& count) {
  const std::string dir = fmt::format("{}/load{:.0f}/seed{}", a.out, load, seed);
  const ClusterSpec spec = sample_load_cluster(d, load, seed, dir);
  const ClusterModel cluster = build_cluster(spec, d.table);
  const double cap = capacity(cluster);
  r.clusters.push_back(fmt::format("seed {}: {} machines, {} GPUs, {:.0f} reference GPUs, offered load {:.2f}", seed,
                                   cluster.machines.size(), spec.total_gpus(), cap, d.offered / cap));
  std::vector<SimResult>& rows = r.runs[seed];
  EvalMeta meta;
  meta.trace = d.trace_name;
  meta.cluster = spec.source;
  meta.seed = seed;
  meta.total_gpus = spec.total_gpus();
  for (size_t i = 0; i < pairs.size(); ++i) {
    RunOptions ro;
    ro.seed = seed;
    ro.period_s = a.period;
    ro.drop_oversized = true;
    ro.progress_label = fmt::format("L{:.0f} s{} {}", load, seed, pairs[i].first);
    int64_t dropped = 0;
    rows.push_back(
        run_pair(d.trace, cluster, d.table, &d.prices, pairs[i].first, pairs[i].second, a.context, ro, &dropped));
    meta.dropped = dropped;
    meta.jobs = rows.back().jobs;
    const SimResult& s = rows.back();
    add_run(r.pairs[i], s);
    std::cerr << fmt::format("duet eval: [{}/{}] load {:.0f}% seed {}: {}/{} mean JCT {:.2f} h ({:.1f} s)\n",
                             ++count.done, count.total, load, seed, s.ordering, s.placement, s.avg_jct_s / 3600,
                             s.wall_s);
  }
  write_summary_md(dir + "/summary.md", meta, rows);
  write_summary_json(dir + "/summary.json", meta, rows);
  if (!a.no_plots && !std::string(DUET_GNUPLOT).empty()) write_plots(dir, rows, DUET_GNUPLOT);
  for (SimResult& s : rows) {  // keep memory flat over many runs
    s.samples.clear();
    s.samples.shrink_to_fit();
    s.jct_sorted.clear();
    s.jct_sorted.shrink_to_fit();
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> baseline_protocol_pairs(const PolicyContext& ctx) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (auto& p : expand_pairs(kBaselinePairs, ctx))  // wildcards would take "duet" in too
    if (!learned(p.first) && !learned(p.second)) pairs.push_back(std::move(p));
  return pairs;
}

std::vector<double> parse_loads(const std::string& s) {
  std::vector<double> v;
  size_t b = 0;
  for (;;) {
    size_t e = s.find(',', b);
    std::string item = s.substr(b, e == std::string::npos ? std::string::npos : e - b);
    size_t used = 0;
    double x = 0;
    try {
      x = std::stod(item, &used);
    } catch (const std::exception&) { used = 0; }
    if (used != item.size() || item.empty() || !(x > 0) || x > 1000)
      throw std::invalid_argument("--loads: expected percentages in (0, 1000] like 70,90,110, got '" + item + "'");
    v.push_back(x);
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return v;
}

std::vector<uint64_t> parse_seeds(const std::string& s) {
  std::vector<uint64_t> v;
  size_t b = 0;
  for (;;) {
    size_t e = s.find(',', b);
    std::string item = s.substr(b, e == std::string::npos ? std::string::npos : e - b);
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos || item.size() > 18)
      throw std::invalid_argument("--seeds: expected non-negative integers like 1,2,3, got '" + item + "'");
    v.push_back(std::stoull(item));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return v;
}

void run_protocol(const ProtocolArgs& a) {
  const ProtocolData d = read_protocol_data(a, find_split(a.split));
  const std::vector<std::pair<std::string, std::string>> pairs = protocol_pairs(a);
  std::filesystem::create_directories(a.out);
  std::vector<LoadResult> results;
  RunCounter count;
  count.total = a.loads.size() * a.seeds.size() * pairs.size();
  for (double load : a.loads) {
    LoadResult r;
    r.load = load;
    for (const auto& [o, p] : pairs) r.pairs.push_back(PairStats{o, p, false, {}, {}, {}, {}, {}, {}});
    for (uint64_t seed : a.seeds) run_seed(a, d, pairs, load, seed, r, count);
    results.push_back(std::move(r));
    // Rewritten after each load so a long run shows results as it goes.
    write_md(a.out + "/summary.md", a, d.trace.jobs.size(), d.offered, results);
    write_json(a.out + "/summary.json", a, d.trace.jobs.size(), d.offered, results);
  }
  std::cout << a.out << "/summary.md\n" << a.out << "/summary.json\n";
}

}  // namespace duet::cli
