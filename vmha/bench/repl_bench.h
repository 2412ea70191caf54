// `vmha bench` (replication): per workload, native vs vmha async vs vmha
// stop-copy in one run — run time overhead, pause per epoch p50/p99, pages
// per checkpoint, output latency added p50/p99, and async/stop-copy ratios.
// The backup is a `vmha backup` child on this host (UCX shared memory).
#pragma once
#include <sys/types.h>

#include <string>

#include "vmha/common/settings.h"

namespace vmha {

struct ReplBenchOptions {
  std::string workload_dir = "vmha/workloads";
  std::string only;  // substring filter on workload names
  int epoch_ms = kDefaultEpochMs;
  int reps = 1;
  int kills = 0;  // failover kills per program (0: max(5, reps))
  bool json = false;
};

int replication_bench(const ReplBenchOptions& opts);

// Starts `vmha backup` (this executable) on a free port, its resumed guest
// in `workdir` ("": the current directory); returns its pid (-1 when it did
// not listen) and its address in *addr.
pid_t start_backup(const std::string& key, const std::string& addr_file, std::string* addr,
                   const std::string& workdir = "");

}  // namespace vmha
