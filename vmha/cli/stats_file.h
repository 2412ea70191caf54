// `vmha run --backup ... --stats-file FILE`: the replication statistics of a
// finished run as `key=value` lines, for the SPANK plugin's accounting:
//   epochs=N  pause_ms_mean=X  pause_ms_max=X  pause_count=N
//   prefetched_pages=N  residual_pages=N  backup_lost=0|1
#pragma once
#include <string>

#include "vmha/cli/run_command.h"
#include "vmha/engine/epoch_manager.h"

namespace vmha {

// Writes FILE atomically (a temporary name, then rename). False on failure.
bool write_stats_file(const std::string& path, const EngineStats& stats);

// `vmha run --backup` with --stats-file: the engine's run_replicated() plus
// the statistics file.
int run_replicated_with_stats(const RunCommandOptions& opts);

}  // namespace vmha
