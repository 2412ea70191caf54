#include "plugins/seam/explain.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

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
}  // namespace

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
  std::string base = current && *current ? current : std::string(kExplainPrefix);
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
    passed += (passed.empty() ? "" : ", ") + r.name + " " +
              (r.not_taken.empty() ? std::string("cons_tres chose otherwise") : r.not_taken);
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
