// Fuzz target: the ordering plugins' preemption state file
// (plugins/seam/preempt_state.h), read by slurmctld at start from
// StateSaveLocation. A damaged file is refused with a message, never
// thrown at; what is accepted (version 1 or 2) holds only sane values and
// reads back the same after encoding (as version 2).
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "plugins/seam/preempt_state.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  duet::plugin::EarlierServices jobs;
  std::string why;
  if (!duet::plugin::decode_preempt_state(text, &jobs, &why)) {
    if (why.empty()) __builtin_trap();  // refused without saying why
    return 0;
  }
  for (const auto& [id, e] : jobs)
    if (id == 0 || !std::isfinite(e.run_s) || e.run_s < 0 || !std::isfinite(e.attained_gpu_s) || e.preemptions == 0 ||
        e.last_start < 0)
      __builtin_trap();
  // a version 1 file reads back as version 2, its start times 0
  duet::plugin::EarlierServices again;
  if (!duet::plugin::decode_preempt_state(duet::plugin::encode_preempt_state(jobs), &again, &why) ||
      again.size() != jobs.size())
    __builtin_trap();
  for (auto i = jobs.begin(), j = again.begin(); i != jobs.end(); ++i, ++j)
    if (i->first != j->first || i->second.run_s != j->second.run_s ||
        i->second.attained_gpu_s != j->second.attained_gpu_s || i->second.preemptions != j->second.preemptions ||
        i->second.last_start != j->second.last_start)
      __builtin_trap();
  (void)duet::plugin::preempt_state_summary(jobs);
  return 0;
}
