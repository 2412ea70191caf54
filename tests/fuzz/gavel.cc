// Fuzz target: the throughput table reader (Gavel's JSON; the simulator's
// --throughputs and select/duet's JobTypeSpeedsFile, read in slurmctld), then
// every ratio the simulator and the plugins derive from it. InputError is the
// documented answer to bad input; a crash, any other exception or a ratio
// that is not a finite number >= 0 is a finding.
#include <cmath>
#include <cstdlib>

#include "policy/io/csv.h"
#include "policy/model/gavel.h"
#include "policy/model/throughput.h"
#include "tests/fuzz/fuzz_target.h"
#include "tests/fuzz/mem_file.h"

namespace {

void check(double v) {
  if (!std::isfinite(v) || v < 0) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static fuzz::MemFile file;
  try {
    const duet::ThroughputTable t = duet::read_gavel(file.set(data, size));
    const int g_count = static_cast<int>(t.gpu_types().size());
    for (int jt = 0; jt < t.job_types(); ++jt)
      for (int g = 0; g < g_count; ++g) {
        check(t.speed_ratio(jt, g));
        for (int o = 0; o < t.job_types(); ++o) check(t.colocation(jt, o, g));
        for (int s = 0; s < duet::ThroughputTable::kScales; ++s) check(t.spread_factor(jt, s, g));
      }
    const duet::JobTypeSpeeds speeds = duet::job_type_speeds(t);
    for (const auto& [name, factors] : speeds.affinity)
      for (double f : factors) check(f);
  } catch (const duet::InputError&) {}
  return 0;
}
