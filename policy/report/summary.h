// Evaluation reports: one table (summary.md), the same as JSON (summary.json),
// and gnuplot PNGs (JCT CDF, queue length and GPU utilisation over time).
#pragma once

#include <string>
#include <vector>

#include "policy/sim/metrics.h"

namespace duet {

struct EvalMeta {
  std::string trace, cluster;
  uint64_t seed = 0;
  bool ideal = false;
  int64_t jobs = 0, dropped = 0;
  int total_gpus = 0;
  bool measured = false;  // a real Slurm run read from sacct (duet report), not a simulation
};

// Index of the best non-oracle row by mean JCT, or -1.
int best_non_oracle(const std::vector<SimResult>& rows);

void write_summary_md(const std::string& path, const EvalMeta& meta, const std::vector<SimResult>& rows);
void write_summary_json(const std::string& path, const EvalMeta& meta, const std::vector<SimResult>& rows);

// Writes the data files and a gnuplot script under dir and runs gnuplot.
// Returns the PNGs made; throws std::runtime_error if gnuplot fails. Without
// gnuplot (GNUPLOT empty) writes the data and script only and returns none.
std::vector<std::string> write_plots(const std::string& dir, const std::vector<SimResult>& rows,
                                     const std::string& gnuplot);

}  // namespace duet
