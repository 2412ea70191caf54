// `vmha bench`'s failover measurement: a `vmha run --backup` of a program
// (this executable, as a child) is killed with SIGKILL at a random point;
// how long until the backup has resumed the guest, and until output flows
// again. Both sides are processes on this host, as in a real failover.
#pragma once
#include <string>
#include <vector>

namespace vmha {

struct FailoverSample {
  double takeover_ms = 0;  // kill -> the backup wrote takeover=1 (--stats-file), as it resumes
  double output_ms = 0;    // kill -> the first byte after the kill reached the output file
  bool exact = false;      // the output equals the native run's, every line once
  int threads = 0;         // the guest threads the takeover resumed (its --stats-file)
};

struct FailoverBench {
  int lease_ms = 0;
  std::vector<FailoverSample> samples;  // kills that hit a running primary
  std::string error;                    // why it could not run ("" = it did)
};

// When the primary is killed: once a random share (1/12 to 2/3) of the
// native output is out, for programs that print while they run; or once
// the backup acknowledged a random checkpoint of the running program (from
// the primary's --stats-file, vmha(1)) in the first two thirds of those a
// run without a kill took, for programs that print only at their end
// (sort, gzip, md5sum). With kCheckpoint a kill counts only when the
// takeover resumed the program mid-run.
enum class KillTrigger { kOutput, kCheckpoint };

// `kills` failovers of `program` (argv; its output must be the same every
// run) with the default lease; key: a 0600 key file; dir: a scratch directory,
// the programs' working directory.
FailoverBench failover_bench(const std::vector<std::string>& program, const std::string& key, const std::string& dir,
                             int epoch_ms, int kills, KillTrigger trigger = KillTrigger::kOutput);

}  // namespace vmha
