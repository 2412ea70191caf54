// Fuzz target: the ordering plugins' preemption state file
// (plugins/seam/preempt_state.h), read by slurmctld at start from
// StateSaveLocation. A damaged file is refused with a message, never
// thrown at; what is accepted holds only sane values and reads back the
// same after encoding.
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
    if (id == 0 || !std::isfinite(e.run_s) || e.run_s < 0 || !std::isfinite(e.attained_gpu_s) || e.preemptions == 0)
      __builtin_trap();
  duet::plugin::EarlierServices again;
  if (!duet::plugin::decode_preempt_state(duet::plugin::encode_preempt_state(jobs), &again, &why) ||
      again.size() != jobs.size())
    __builtin_trap();
  (void)duet::plugin::preempt_state_summary(jobs);
  return 0;
}
