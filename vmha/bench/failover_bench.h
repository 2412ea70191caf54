// `vmha bench`'s failover measurement: a `vmha run --backup` of a program
// that prints numbered lines (this executable, as a child) is killed with
// SIGKILL at a random point; how long until the backup has resumed the
// guest, and until output flows again. Both sides are processes on this
// host, as in a real failover.
#pragma once
#include <string>
#include <vector>

namespace vmha {

struct FailoverSample {
  double takeover_ms = 0;  // kill -> the backup logged "resuming from checkpoint"
  double output_ms = 0;    // kill -> the first byte after the kill reached the output file
  bool exact = false;      // the output equals the native run's, every line once
  int threads = 0;         // the guest threads the takeover resumed
};

struct FailoverBench {
  int lease_ms = 0;
  std::vector<FailoverSample> samples;  // kills that hit a running primary
  std::string error;                    // why it could not run ("" = it did)
};

// `kills` failovers of `program` (argv; its output must be the same every
// run) with the default lease; key: a 0600 key file; dir: a scratch directory,
// the programs' working directory.
FailoverBench failover_bench(const std::vector<std::string>& program, const std::string& key, const std::string& dir,
                             int epoch_ms, int kills);

}  // namespace vmha
