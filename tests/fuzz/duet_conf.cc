// Fuzz target: the duet.conf parser (duet.conf(5)) and site_factor/duet's
// PrioritySiteFactorParameters (site_factor_duet(8)). Bad lines are reported
// in the result, never thrown: any exception or crash is a finding.
#include <cstdint>
#include <string>
#include <string_view>

#include "plugins/seam/duet_conf.h"
#include "plugins/seam/site_factor_scale.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  duet::plugin::ConfResult r = duet::plugin::parse_duet_conf(text, "/etc/slurm/duet.conf");
  for (const auto& e : r.errors) (void)e.text();
  (void)duet::plugin::to_string(r.conf.log_level);
  std::uint32_t weight = duet::plugin::kDefaultSiteWeight;
  std::string why;
  if (duet::plugin::parse_site_factor_params(text, &weight, &why) && weight > duet::plugin::kMaxSiteWeight)
    __builtin_trap();  // accepted out of range
  return 0;
}
