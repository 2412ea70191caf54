// `vmha backup`: receives checkpoints from one primary, keeps the last
// committed image, and when the primary is lost (connection gone AND nothing
// heard for longer than the lease, AND the fencing command confirmed it dead)
// resumes the guest from that image in a fresh VMM on this host, continuing
// the released output exactly once (epoch_state.h).
#pragma once
#include <string>
#include <vector>

#include "vmha/common/settings.h"

namespace vmha {

struct BackupOptions {
  std::string listen = "127.0.0.1:0";
  std::string key_file;
  std::string workdir = ".";  // the resumed guest's working directory
  // The resumed guest's read-only paths: the primary's policy (its --ro and
  // --no-default-ro), given again on this side's command line.
  std::vector<std::string> read_only;
  std::string fence_cmd;     // run before a takeover; must exit 0
  std::string address_file;  // write the listening address here
  std::string transports;    // UCX_TLS ("" = UCX default)
  // Where a resumed guest's stdout/stderr go ("" = this process's own). The
  // primary's output files: appending to them directly is what lets the
  // takeover see, from their size, exactly what the primary released; a pipe
  // (e.g. srun's I/O forwarding) lags behind and hides it.
  std::string stdout_file, stderr_file;
  int lease_ms = kDefaultLeaseMs;  // the takeover waits this long: most of a failover (vmha bench)
  int accept_timeout_s = 60;
  // At a takeover, before the guest resumes: RunStats (common/run_stats.h,
  // side=backup, takeover=1) written here: what a supervisor or a bench
  // reads, never the log, whose lines are for people and may quote a peer.
  std::string stats_file;
};

// Returns the exit status for `vmha backup`: the program's own when this side
// finished it (or learned from the primary how it ended), 125 on failure.
int run_backup(const BackupOptions& opts);

}  // namespace vmha
