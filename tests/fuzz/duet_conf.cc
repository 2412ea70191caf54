// Fuzz target: the duet.conf parser (duet.conf(5)). Bad lines are reported in
// the result, never thrown: any exception or crash is a finding.
#include <string_view>

#include "plugins/seam/duet_conf.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  duet::plugin::ConfResult r = duet::plugin::parse_duet_conf(text, "/etc/slurm/duet.conf");
  for (const auto& e : r.errors) (void)e.text();
  (void)duet::plugin::to_string(r.conf.log_level);
  return 0;
}
