#include "plugins/seam/site_factor_scale.h"

#include <algorithm>
#include <cctype>

#include "policy/util/text.h"

namespace duet::plugin {

uint32_t SiteFactorScale::value(uint64_t below, uint64_t others) const {
  if (others == 0) return kSiteFactorCentre + weight_;  // alone: the top of the queue
  others = std::min<uint64_t>(others, UINT32_MAX);
  below = std::min(below, others);
  // weight * below / others, rounded; no overflow: weight < 2^31, below <= others < 2^32
  const uint64_t scaled = (static_cast<uint64_t>(weight_) * below + others / 2) / others;
  return kSiteFactorCentre + static_cast<uint32_t>(scaled);
}

std::vector<uint32_t> SiteFactorScale::assign(std::span<const double> scores) {
  sorted_.assign(scores.begin(), scores.end());
  std::sort(sorted_.begin(), sorted_.end());
  std::vector<uint32_t> out;
  out.reserve(scores.size());
  const uint64_t others = sorted_.empty() ? 0 : sorted_.size() - 1;
  for (double s : scores) {
    const auto below = static_cast<uint64_t>(std::lower_bound(sorted_.begin(), sorted_.end(), s) - sorted_.begin());
    out.push_back(value(below, others));
  }
  return out;
}

uint32_t SiteFactorScale::slot(double score) const {
  const auto below = static_cast<uint64_t>(std::lower_bound(sorted_.begin(), sorted_.end(), score) - sorted_.begin());
  return value(below, sorted_.size());
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

bool parse_site_factor_params(std::string_view params, uint32_t* weight, std::string* error) {
  uint32_t w = *weight;
  while (!params.empty()) {
    const size_t comma = params.find(',');
    const std::string_view item = trim(params.substr(0, comma));
    params = comma == std::string_view::npos ? std::string_view() : params.substr(comma + 1);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string key = lower(trim(item.substr(0, eq)));
    if (key != "weight" || eq == std::string_view::npos) {
      *error = "PrioritySiteFactorParameters: unknown parameter '" + std::string(item) + "' (expected weight=N)";
      return false;
    }
    const std::string_view v = trim(item.substr(eq + 1));
    uint64_t n = 0;
    bool ok = !v.empty() && v.size() <= 10;
    for (char c : v) {
      ok = ok && c >= '0' && c <= '9';
      if (ok) n = n * 10 + static_cast<uint64_t>(c - '0');
    }
    if (!ok || n > kMaxSiteWeight) {
      *error = "PrioritySiteFactorParameters: weight: expected an integer 0.." + std::to_string(kMaxSiteWeight) +
               ", got '" + std::string(v) + "'";
      return false;
    }
    w = static_cast<uint32_t>(n);
  }
  *weight = w;
  return true;
}

}  // namespace duet::plugin
