#include "plugins/spank/vmha/args.h"

#include <cstdlib>

namespace vmha_spank {

namespace {

// Filled by the option callback (srun, sbatch, salloc and, with srun's
// --ha, slurmstepd): the raw value, checked when it arrives.
bool g_option_seen = false;
bool g_option_on = false;
int g_option_epoch = 0;

int on_ha_option(int /*val*/, const char* optarg, int /*remote*/) {
  try {  // Slurm calls this directly: nothing may escape
    // sbatch's bare --ha reaches the job's srun as SLURM_SPANK_..._ha=(null).
    if (optarg && std::string(optarg) == "(null)") optarg = nullptr;
    std::string error;
    if (!parse_ha_value(optarg, HaSource::kOption, &g_option_on, &g_option_epoch, &error)) {
      slurm_error("vmha: --ha=%s: %s", optarg ? optarg : "", error.c_str());
      return -1;
    }
    g_option_seen = true;
    return 0;
  } catch (...) {
    slurm_error("vmha: --ha: unexpected failure");
    return -1;
  }
}

struct spank_option g_ha_option = {
    const_cast<char*>("ha"),
    const_cast<char*>("EPOCH_MS"),
    const_cast<char*>("Run each task in a vmha process VM replicated to another node of the "
                      "allocation (epoch EPOCH_MS ms, site default without a value); "
                      "the job survives the loss of a task's primary. Env: SLURM_HA"),
    2 /* optional argument */,
    0,
    on_ha_option};

int from_value(const char* value, const char* source, HaSource from, HaRequest* req) {
  std::string error;
  if (!parse_ha_value(value, from, &req->on, &req->epoch_ms, &error)) {
    slurm_error("vmha: %s=%s: %s", source, value ? value : "", error.c_str());
    return -1;
  }
  req->source = source;
  return 0;
}

}  // namespace

HaSettings& settings() {
  static HaSettings s;
  return s;
}

int init_args(spank_t sp, int argc, char** argv) {
  std::string error;
  if (!apply_plugstack_args(argc, argv, &settings(), &error)) {
    slurm_error("vmha: plugstack.conf: %s", error.c_str());
    return -1;
  }
  spank_context_t ctx = spank_context();
  if (ctx == S_CTX_LOCAL || ctx == S_CTX_ALLOCATOR || ctx == S_CTX_REMOTE) {
    if (spank_option_register(sp, &g_ha_option) != ESPANK_SUCCESS) {
      slurm_error("vmha: cannot register --ha");
      return -1;
    }
  }
  return 0;
}

int request_from_command(HaRequest* req) {
  if (g_option_seen) {
    req->on = g_option_on;
    req->epoch_ms = g_option_epoch;
    req->source = "--ha";
    return 0;
  }
  if (const char* v = std::getenv(kEnvHa)) return from_value(v, kEnvHa, HaSource::kEnvironment, req);
  return 0;
}

int request_from_step(spank_t sp, HaRequest* req) {
  if (g_option_seen) {
    req->on = g_option_on;
    req->epoch_ms = g_option_epoch;
    req->source = "--ha";
    return 0;
  }
  char buf[256];
  if (spank_getenv(sp, kEnvHa, buf, sizeof buf) == ESPANK_SUCCESS)
    return from_value(buf, kEnvHa, HaSource::kEnvironment, req);
  // sbatch/salloc --ha: Slurm exports the option into the job's environment.
  if (spank_getenv(sp, kEnvSpankHa, buf, sizeof buf) == ESPANK_SUCCESS)
    return from_value(std::string(buf) == "(null)" ? "" : buf, "sbatch --ha", HaSource::kOption, req);
  return 0;
}

}  // namespace vmha_spank
