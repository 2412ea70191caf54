#include "plugins/seam/explain.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <iterator>
#include <map>
#include <numeric>

namespace duet::plugin {
namespace {

std::string fmt_pref(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

bool explain_owned(const char* c) {
  return !c || !*c || std::strncmp(c, kExplainPrefix.data(), kExplainPrefix.size()) == 0;
}

std::string explain_rank(size_t rank, size_t count, double score, const std::string& scorer) {
  char buf[96];
  if (rank == 0)  // at submit: ranked for real at the next re-score
    std::snprintf(buf, sizeof buf, " score %.6g at submit by ", score);
  else
    std::snprintf(buf, sizeof buf, " rank %zu/%zu score %.6g by ", rank, count, score);
  return explain_bounded(std::string(kExplainPrefix) + buf + scorer);
}

namespace {
constexpr std::string_view kPreemptedPart = "; preempted ";
constexpr std::string_view kNodesPart = "; nodes ";
constexpr std::string_view kWaitsPart = "; waits for ";
constexpr std::string_view kFreePart = "; free now: ";

std::string gpus_text(uint64_t n, const std::string& type) {
  return std::to_string(n) + (type.empty() ? "" : " " + type) + (n == 1 ? " GPU" : " GPUs");
}

bool same_gpus(const std::string& a, const std::string& b) { return a.empty() || b.empty() || a == b; }
}  // namespace

std::string explain_gpus_short(uint64_t needed, uint64_t free, const std::string& type) {
  return "needs " + gpus_text(needed, type) + ", " + std::to_string(free) + " free";
}

std::vector<size_t> distinct_ranks(const std::vector<uint32_t>& values, const std::vector<uint32_t>& job_ids) {
  std::vector<size_t> order(values.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (values[a] != values[b]) return values[a] > values[b];
    const uint32_t ia = a < job_ids.size() ? job_ids[a] : 0, ib = b < job_ids.size() ? job_ids[b] : 0;
    return ia != ib ? ia < ib : a < b;
  });
  std::vector<size_t> rank(values.size());
  for (size_t r = 0; r < order.size(); ++r) rank[order[r]] = r + 1;
  return rank;
}

namespace {

// What job waits for on the nodes (the part before "; ahead").
std::string waits_on_nodes(const JobInfo& job, const ClusterInfo& cluster) {
  const uint32_t nodes_wanted = std::max<uint32_t>(job.min_nodes, 1);
  const uint64_t per_node = (static_cast<uint64_t>(job.gpus) + nodes_wanted - 1) / nodes_wanted;
  const NodeInfo* best = nullptr;
  std::vector<std::string> fit;
  for (const NodeInfo& n : cluster.nodes) {
    if (!n.usable || n.gpus_total == 0 || !same_gpus(job.gpu_type, n.gpu_type)) continue;
    const uint32_t free = n.gpus_total - std::min(n.gpus_alloc, n.gpus_total);
    if (free >= per_node) fit.push_back(n.name);
    if (!best || free > best->gpus_total - std::min(best->gpus_alloc, best->gpus_total)) best = &n;
  }
  std::string out;
  if (job.begin_time > 0 && cluster.now > 0 && job.begin_time > cluster.now) {
    // slurmctld's own reason is BeginTime; the time in its zone, as squeue shows it
    const time_t t = static_cast<time_t>(job.begin_time);
    struct tm tm {};
    char when[32] = "?";
    if (localtime_r(&t, &tm)) std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    out = std::string(kWaitsPart) + "its begin time " + when + " (sbatch --begin)";
  } else if (!best) {
    out = std::string(kWaitsPart) + gpus_text(job.gpus, job.gpu_type) + ": no usable node has " +
          (job.gpu_type.empty() ? "GPUs" : job.gpu_type + " GPUs") + " (down or drained)";
  } else if (fit.size() >= nodes_wanted) {
    out = std::string(kFreePart) + gpus_text(job.gpus, job.gpu_type) + " (";
    for (size_t k = 0; k < fit.size() && k < nodes_wanted; ++k) out += (k ? "," : "") + fit[k];
    out += "), waits for slurmctld's next scheduling pass or for CPUs or memory";
  } else {
    const uint32_t best_free = best->gpus_total - std::min(best->gpus_alloc, best->gpus_total);
    out = std::string(kWaitsPart) + gpus_text(job.gpus, job.gpu_type);
    if (nodes_wanted == 1)
      out += " on one node: " + best->name + " has the most free, " + std::to_string(best_free) + " of " +
             std::to_string(best->gpus_total);
    else
      out += ", " + std::to_string(per_node) + " on each of " + std::to_string(nodes_wanted) + " nodes: " +
             std::to_string(fit.size()) + (fit.size() == 1 ? " node has" : " nodes have") + " them free";
  }
  return out;
}

// The jobs ranked ahead of a job that want GPUs it could use: the first
// kExplainMaxAhead by rank, and how many in all.
struct Ahead {
  std::vector<size_t> first;
  size_t count = 0;
};

// Ahead of every job of the queue in one pass in rank order, keeping per GPU
// type (and for untyped requests, and over all) the first few and a count:
// a typed job has ahead those of its type and the untyped ones, an untyped
// job every GPU job. O(n log n), not a scan of the queue per job: it runs at
// every re-score under slurmctld's locks.
std::vector<Ahead> ahead_of_all(const std::vector<JobInfo>& jobs, const std::vector<size_t>& ranks) {
  const size_t n = std::min(jobs.size(), ranks.size());
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ranks[a] < ranks[b]; });
  std::vector<Ahead> out(jobs.size());
  std::map<std::string, Ahead> by_type;  // "" = untyped requests
  Ahead all;
  auto keep = [](Ahead& a, size_t k) {
    if (a.first.size() < kExplainMaxAhead) a.first.push_back(k);
    ++a.count;
  };
  for (size_t pos = 0; pos < n;) {
    size_t end = pos;  // equal ranks are not ahead of each other
    while (end < n && ranks[order[end]] == ranks[order[pos]]) ++end;
    for (size_t q = pos; q < end; ++q) {
      const size_t k = order[q];
      const std::string& type = jobs[k].gpu_type;
      if (type.empty()) {
        out[k] = all;
        continue;
      }
      const Ahead& typed = by_type[type];
      const Ahead& untyped = by_type[""];
      Ahead& a = out[k];
      std::merge(typed.first.begin(), typed.first.end(), untyped.first.begin(), untyped.first.end(),
                 std::back_inserter(a.first), [&](size_t x, size_t y) { return ranks[x] < ranks[y]; });
      if (a.first.size() > kExplainMaxAhead) a.first.resize(kExplainMaxAhead);
      a.count = typed.count + untyped.count;
    }
    for (size_t q = pos; q < end; ++q) {
      const size_t k = order[q];
      if (jobs[k].gpus == 0) continue;
      keep(by_type[jobs[k].gpu_type], k);
      keep(all, k);
    }
    pos = end;
  }
  return out;
}

std::string ahead_text(const std::vector<JobInfo>& jobs, const Ahead& a) {
  if (a.count == 0) return "; no job ahead wants these GPUs";
  std::string out = "; ahead:";
  for (size_t k = 0; k < a.first.size(); ++k)
    out += (k ? ", " : " ") + std::to_string(jobs[a.first[k]].job_id) + " (" +
           gpus_text(jobs[a.first[k]].gpus, jobs[a.first[k]].gpu_type) + ")";
  if (a.count > a.first.size()) out += " +" + std::to_string(a.count - a.first.size()) + " more";
  return out;
}

}  // namespace

std::vector<std::string> explain_waiting_all(const std::vector<JobInfo>& jobs, const std::vector<size_t>& ranks,
                                             const ClusterInfo& cluster) {
  const std::vector<Ahead> ahead = ahead_of_all(jobs, ranks);
  std::vector<std::string> out;
  out.reserve(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) out.push_back(waits_on_nodes(jobs[i], cluster) + ahead_text(jobs, ahead[i]));
  return out;
}

std::string explain_waiting(size_t i, const std::vector<JobInfo>& jobs, const std::vector<size_t>& ranks,
                            const ClusterInfo& cluster) {
  if (i >= jobs.size()) return "";
  return waits_on_nodes(jobs[i], cluster) + ahead_text(jobs, ahead_of_all(jobs, ranks)[i]);
}

double learned_share(double network, double with_prior) {
  const double n = std::fabs(network), p = std::fabs(with_prior - network);
  return std::isfinite(n + p) && n + p > 0 ? n / (n + p) : 0.0;
}

std::string explain_learned(double share) {
  const int pct = static_cast<int>(std::lround(std::clamp(share, 0.0, 1.0) * 100));
  return "; learned part " + std::to_string(pct) + "% of the score, prior " + std::to_string(100 - pct) + "%";
}

std::string explain_without_waiting(const char* current) {
  std::string c = current ? current : "";
  size_t b = c.find(kWaitsPart);
  if (b == std::string::npos) b = c.find(kFreePart);
  if (b == std::string::npos) return c;
  size_t e = c.find(kPreemptedPart, b);
  if (e == std::string::npos) e = c.find(kNodesPart, b);
  c.erase(b, e == std::string::npos ? std::string::npos : e - b);
  return c;
}

std::string explain_preemption_part(const char* current) {
  if (!current) return "";
  const std::string_view c(current);
  const size_t b = c.find(kPreemptedPart);
  if (b == c.npos) return "";
  const size_t e = c.find(kNodesPart, b);
  return std::string(c.substr(b, e == c.npos ? c.npos : e - b));
}

unsigned explain_preemptions(const char* current) {
  const std::string part = explain_preemption_part(current);
  unsigned k = 0;
  for (size_t i = kPreemptedPart.size(); i < part.size() && part[i] >= '0' && part[i] <= '9' && k < 100000; ++i)
    k = k * 10 + static_cast<unsigned>(part[i] - '0');
  return k;
}

std::string explain_preempted(const char* current, const std::string& what) {
  std::string base = current && *current ? current : std::string(kExplainPrefix);
  std::string nodes;
  if (auto cut = base.find(kNodesPart); cut != std::string::npos) {
    nodes = base.substr(cut);
    base.resize(cut);
  }
  if (auto cut = base.find(kPreemptedPart); cut != std::string::npos) base.resize(cut);
  return explain_bounded(base + std::string(kPreemptedPart) + std::to_string(explain_preemptions(current) + 1) +
                         "x, last: " + what + nodes);
}

std::string explain_placement(const char* current, const std::vector<std::string>& nodes, const std::string& reason) {
  std::string base = current && *current ? explain_without_waiting(current) : std::string(kExplainPrefix);
  if (auto cut = base.find(kNodesPart); cut != std::string::npos) base.resize(cut);
  std::string list;
  for (const std::string& n : nodes) list += (list.empty() ? "" : ",") + n;
  return explain_bounded(base + "; nodes " + list + ": " + reason);
}

std::string placement_reason(const std::string& ranker_reason, std::vector<RankedNode> ranked,
                             const std::vector<std::string>& chosen) {
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const RankedNode& a, const RankedNode& b) { return a.preference > b.preference; });
  auto is_chosen = [&](const std::string& n) { return std::find(chosen.begin(), chosen.end(), n) != chosen.end(); };
  std::string out = ranker_reason + "; ranking";
  if (ranked.empty()) out += " (no node the job may use)";
  for (size_t i = 0; i < ranked.size() && i < kExplainMaxRanked; ++i)
    out += " " + ranked[i].name + "=" + fmt_pref(ranked[i].preference);
  if (ranked.size() > kExplainMaxRanked) out += " +" + std::to_string(ranked.size() - kExplainMaxRanked) + " more";

  // The worst preference among the chosen nodes: everything above it was
  // passed over.
  bool any_chosen = false;
  double worst = 0;
  for (const RankedNode& r : ranked)
    if (is_chosen(r.name)) {
      worst = any_chosen ? std::min(worst, r.preference) : r.preference;
      any_chosen = true;
    }
  if (!any_chosen) return out;  // placed outside the ranking: nothing was passed over
  std::string passed;
  for (const RankedNode& r : ranked) {
    if (r.preference <= worst) break;
    if (is_chosen(r.name)) continue;
    passed += (passed.empty() ? "" : ", ") + r.name + " (" +
              (r.not_taken.empty() ? std::string("cons_tres chose otherwise") : r.not_taken) + ")";
  }
  if (!passed.empty()) out += "; not taken: " + passed;
  return out;
}

std::string explain_bounded(std::string_view text) {
  std::string out(text.substr(0, std::min(text.size(), kExplainMaxBytes)));
  for (char& c : out) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u > 0x7e)
      c = ' ';
    else if (c == '\\' || c == '|')
      c = '_';
  }
  if (text.size() > kExplainMaxBytes) out.replace(kExplainMaxBytes - 3, 3, "...");
  return out;
}

}  // namespace duet::plugin
