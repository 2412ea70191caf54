// Save and load of the performance GP's learned state (for Slurm's
// StateSaveLocation and for training checkpoints). Format: duet-model(5),
// section "GP STATE FILE".
#pragma once

#include <string>
#include <vector>

#include "policy/learn/gp/performance_gp.h"

namespace duet::learn {

inline constexpr char kGpStateMagic[] = "DUETGPST";
inline constexpr std::uint32_t kGpStateVersion = 1;

struct GpStateLoadReport {
  std::size_t saved_machines = 0;
  std::size_t machines_missing = 0;      // saved machines absent from the new list
  std::size_t observations_dropped = 0;  // window entries on missing machines
};

// Writes atomically (temporary file + rename). Throws FormatError on I/O errors.
void save_gp_state(const PerformanceGp& gp, const std::string& path);

// Rebuilds a GP over `machines` (the cluster as it is now) from a saved
// state. Machines are matched by name; state of machines that disappeared is
// dropped and counted in *report. Throws FormatError (bad magic, version,
// truncation, checksum, values) naming the file.
PerformanceGp load_gp_state(const std::string& path, std::vector<MachineDesc> machines,
                            GpStateLoadReport* report = nullptr);

}  // namespace duet::learn
