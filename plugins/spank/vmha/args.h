// The plugin's option (--ha[=EPOCH_MS]) and settings, parsed in one place.
#pragma once
#include <string>

#include "plugins/spank/lib/ha_settings.h"
#include "plugins/spank/vmha/spank_api.h"

namespace vmha_spank {

// Site defaults from plugstack.conf, then the job's request applied.
HaSettings& settings();

// Parses the plugin's plugstack.conf arguments; registers --ha where
// options exist (srun, sbatch, salloc, slurmstepd). -1 after logging an error.
int init_args(spank_t sp, int argc, char** argv);

// Whether this job/step asked for vmha, and with which epoch (0: default).
struct HaRequest {
  bool on = false;
  int epoch_ms = 0;
  std::string source;  // "--ha", "SLURM_HA", "sbatch --ha"
};

// srun/sbatch/salloc: the option if given, else $SLURM_HA. -1 after an error.
int request_from_command(HaRequest* req);

// slurmstepd: the step's --ha, else the job environment's SLURM_HA or the
// sbatch/salloc option Slurm exported into it. -1 after an error.
int request_from_step(spank_t sp, HaRequest* req);

}  // namespace vmha_spank
