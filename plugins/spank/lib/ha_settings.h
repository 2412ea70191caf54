// Settings of the vmha SPANK plugin: site defaults from the plugin's
// arguments in plugstack.conf (`key=value`), the job's `--ha[=EPOCH_MS]` (or
// SLURM_HA in the environment), and how they travel to the task supervisor
// (vmha-task) in the task's environment. No Slurm headers here.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "vmha/common/settings.h"

namespace vmha_spank {

// Where `make install` puts vmha and vmha-task (configure's bindir, pkglibexecdir).
std::string default_vmha_path();
std::string default_task_path();

struct HaSettings {
  int epoch_ms = vmha::kDefaultEpochMs;    // epoch=       longest epoch (ms)
  std::string mode = "async";              // mode=        async | stop-copy
  int lease_ms = vmha::kDefaultLeaseMs;    // lease=       primary/backup silent this long: lost (ms)
  std::string on_loss = "stop";            // on_loss=     stop | continue (vmha run --on-backup-loss)
  uint64_t memory_mib = 1024;              // memory=      guest memory (MiB)
  std::string backup = "next";             // backup=      next | last: which other node of the allocation
  std::string statedir = "/tmp/vmha-ha";   // statedir= per-job files (keys, output, results)
  std::string vmha = default_vmha_path();  // vmha=   path of the vmha command
  std::string task = default_task_path();  // task=   path of the vmha-task supervisor
  std::string transports;                  // transports=  UCX_TLS for both sides ("" = UCX's choice)
  std::string srun_args;                   // srun_args=   extra srun arguments of the backup step
  // ro= the guest's read-only paths, colon-separated, in place of the
  // default list ("" = none; the working directory is always read-write).
  std::string ro = vmha::kDefaultReadOnlyPaths;
};

// One plugstack.conf argument `key=value` applied to `s`. On error returns
// false and sets *error to what was expected.
bool apply_plugstack_arg(const std::string& arg, HaSettings* s, std::string* error);

// All arguments; *error names the argument's position and text.
bool apply_plugstack_args(int argc, char** argv, HaSettings* s, std::string* error);

// Where a --ha value comes from: the option takes an epoch or nothing
// (vmha_spank(8)); the environment may also turn protection off.
enum class HaSource { kOption, kEnvironment };

// The value of --ha=VALUE or SLURM_HA=VALUE. nullptr, "", "yes", "on",
// "true": on with the default epoch (*epoch_ms = 0); an integer 1..60000: on,
// epoch in ms; from the environment only, "no", "off", "false", "0": off.
// Returns false on anything else with *error saying what was expected.
bool parse_ha_value(const char* value, HaSource from, bool* on, int* epoch_ms, std::string* error);

// ro= as options of `vmha run` and `vmha backup`: --no-default-ro, then one
// --ro PATH per path (the primary and its backup get the same policy).
std::vector<std::string> read_only_options(const HaSettings& s);

// The settings as environment variables VMHA_TASK_* for the supervisor, and back.
std::vector<std::pair<std::string, std::string>> task_environment(const HaSettings& s);
bool settings_from_environment(const std::function<const char*(const char*)>& get, HaSettings* s, std::string* error);

// Names of the environment variables the plugin and the supervisor use.
inline constexpr const char* kEnvHa = "SLURM_HA";                                // user's fallback for --ha
inline constexpr const char* kEnvSpankHa = "SPANK__SLURM_SPANK_OPTION_vmha_ha";  // sbatch --ha, in the job
inline constexpr const char* kEnvRole = "VMHA_HA_ROLE";                          // "backup": a backup step, untouched
inline constexpr const char* kEnvArgv0 = "VMHA_TASK_ARGV0";                      // the task's own program
inline constexpr const char* kEnvStep = "VMHA_TASK_STEP";                        // "batch": the batch step's task
inline constexpr const char* kEnvPrefix = "VMHA_TASK_";

}  // namespace vmha_spank
