// From a ranking to Slurm site factors (site_factor/duet, man
// site_factor_duet(8)). priority/multifactor adds a job's site factor to its
// priority as `site_factor - NICE_OFFSET` (NICE_OFFSET = 0x80000000, Slurm's
// centre for signed values kept in a uint32_t) with no weight of its own, so
// the weight is applied here: like multifactor's own factors, the agent's
// ranking is normalised to [0, 1] and multiplied by the weight. Normalising by
// rank, not by score, keeps the factor independent of the scale of the
// scorer's output (learned scores and the fallback's differ by orders of
// magnitude).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace duet::plugin {

inline constexpr uint32_t kSiteFactorCentre = 0x80000000;  // Slurm's NICE_OFFSET: a site factor of 0
inline constexpr uint32_t kMaxSiteWeight = 0x7fffffff;     // centre + weight still fits in 32 bits
inline constexpr uint32_t kDefaultSiteWeight = 10000;

class SiteFactorScale {
 public:
  explicit SiteFactorScale(uint32_t weight = kDefaultSiteWeight) : weight_(weight) {}
  uint32_t weight() const { return weight_; }

  // Site factors for jobs with these scores (higher score = higher factor):
  // centre + weight * (jobs with a lower score) / (n - 1). The first job
  // gets centre + weight, the last the centre itself, equal scores equal
  // factors; a lone job gets the full weight. Remembers the scores for slot().
  std::vector<uint32_t> assign(std::span<const double> scores);

  // The factor of a new job with `score` as if it joined the last ranking:
  // centre + weight * (ranked jobs with a lower score) / (ranked jobs).
  uint32_t slot(double score) const;

  size_t size() const { return sorted_.size(); }

 private:
  uint32_t value(uint64_t below, uint64_t others) const;
  uint32_t weight_;
  std::vector<double> sorted_;  // the last ranking's scores, ascending
};

// What sprio shows in its SITE column for a site factor (signed).
inline int64_t site_factor_shown(uint32_t site_factor) { return static_cast<int64_t>(site_factor) - kSiteFactorCentre; }

// PrioritySiteFactorParameters (slurm.conf): comma-separated Key=Value,
// keys case-insensitive; `weight=N`, N plain decimal in 0..kMaxSiteWeight.
// "" leaves the default. On an unknown key or bad value returns false, sets
// *error to one line and leaves *weight alone.
bool parse_site_factor_params(std::string_view params, uint32_t* weight, std::string* error);

}  // namespace duet::plugin
