// duet convert sacct and duet convert slurm-nodes (cmd_convert_slurm.cc),
// added under `convert` beside philly and pai.
#pragma once

#include <CLI/CLI.hpp>

namespace duet::cli {

void setup_convert_slurm(CLI::App* convert);

}  // namespace duet::cli
