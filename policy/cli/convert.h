// Pieces `duet convert`'s subcommands share: writing the output, and the
// Slurm converters (cmd_convert_slurm.cc) beside philly and pai.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>

#include <CLI/CLI.hpp>

namespace duet::cli {

// Writes through OUT.tmp and renames it; "" or "-" = standard output.
void write_to(const std::string& out, const std::function<void(std::ostream&)>& w);

// duet convert sacct and duet convert slurm-nodes, under `convert`.
void setup_convert_slurm(CLI::App* convert);

}  // namespace duet::cli
