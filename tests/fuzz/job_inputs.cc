// Fuzz target: what any user hands the plugins, which parse it as root or
// inside slurmctld: a job's --comment (duet's hints, parsed by select/duet
// and the ordering plugins in slurmctld), the --ha / SLURM_HA value (srun,
// sbatch and slurmstepd) and the VMHA_TASK_* settings vmha-task reads from
// the task's environment. Bad input is refused with a message or ignored;
// a crash, an exception or a value accepted out of its range is a finding.
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "plugins/seam/job_hints.h"
#include "plugins/spank/lib/ha_settings.h"
#include "tests/fuzz/fuzz_target.h"

namespace {

void check_hints(std::string_view text) {
  duet::plugin::JobHints h = duet::plugin::parse_job_hints(text);
  if (h.ref_s != -1 && !(std::isfinite(h.ref_s) && h.ref_s > 0)) __builtin_trap();
  if (h.ref_s > 0) {  // what `duet replay` writes reads back as the same type
    auto again = duet::plugin::parse_job_hints(duet::plugin::format_job_hints(h.ref_s, h.type));
    if (again.type != h.type || !(again.ref_s > 0)) __builtin_trap();
  }
}

void check_ha_value(const std::string& value) {
  for (auto from : {vmha_spank::HaSource::kOption, vmha_spank::HaSource::kEnvironment}) {
    bool on = false;
    int epoch = -1;
    std::string why;
    if (vmha_spank::parse_ha_value(value.c_str(), from, &on, &epoch, &why)) {
      if (on && epoch != 0 && (epoch < vmha::kMinEpochMs || epoch > vmha::kMaxEpochMs)) __builtin_trap();
    } else if (why.empty()) {
      __builtin_trap();  // refused without saying why
    }
  }
}

// Lines "NAME=VALUE" of the input become the task's environment.
void check_task_environment(std::string_view text) {
  std::map<std::string, std::string> env;
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    size_t eq = line.find('=');
    if (eq != std::string_view::npos) env[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
    start = end + 1;
  }
  vmha_spank::HaSettings s;
  std::string why;
  auto get = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  if (!vmha_spank::settings_from_environment(get, &s, &why)) {
    if (why.empty()) __builtin_trap();
    return;
  }
  if (s.epoch_ms < vmha::kMinEpochMs || s.epoch_ms > vmha::kMaxEpochMs) __builtin_trap();
  if (s.lease_ms < vmha::kMinLeaseMs || s.lease_ms > vmha::kMaxLeaseMs) __builtin_trap();
  if (s.mode != "async" && s.mode != "stop-copy") __builtin_trap();
  if (s.backup != "next" && s.backup != "last") __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  check_hints(text);
  check_ha_value(std::string(text.substr(0, text.find('\0'))));
  check_task_environment(text);
  return 0;
}
