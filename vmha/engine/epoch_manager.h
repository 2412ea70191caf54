// The primary's epoch manager (vmha(1), EPOCH PROTOCOL). The guest runs on its
// own thread; this thread cuts its run into epochs. During an epoch (async
// mode) it harvests the dirty ring every few milliseconds and sends the pages
// so the backup pulls them while the guest runs. At the epoch end it pauses
// the vCPU, harvests the rest, sends the pages dirtied since their last pull
// (with CRC32C) and the state blob, resumes the guest at once, waits for the
// acknowledgement and only then releases the epoch's held output.
// Stop-copy mode: bitmap tracker, no prefetch: every dirty page is pulled
// while the guest is paused. Same code otherwise.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "vmha/common/settings.h"
#include "vmha/vmm/vm.h"

namespace vmha {

struct EngineOptions {
  std::string backup;    // host:port of `vmha backup`
  std::string key_file;  // shared secret (SharedKeyAuthenticator)
  bool async = true;     // false: stop-copy
  int epoch_ms = kDefaultEpochMs;
  int min_epoch_ms = 2;  // async: an epoch with output waiting ends after this long
  // async: kRing or kHot as the user chose (vmha run --tracker); kNone: hot
  // where KVM offers it, else the ring. Stop-copy always uses the bitmap.
  TrackerKind async_tracker = TrackerKind::kNone;
  // async: also harvest and send every this many ms during the epoch (0: only
  // the pre-copy rounds at its end). Off by default: without PML each harvest
  // makes every page the guest keeps writing fault again (measured: steps ran
  // 6x slower with 10 ms prefetch than with pre-copy at the end only).
  int prefetch_ms = 0;
  int lease_ms = kDefaultLeaseMs;  // the backup's silence limit is derived from it (settings.h)
  // When the backup is lost (silent past the limit, a refusal, a broken
  // connection): false (the default, vmha(1) --on-backup-loss stop) stops
  // the guest and releases nothing more, so a backup that is only slow
  // takes over alone; true goes on unprotected, but only once the backup
  // confirmed it stands down (otherwise it stops all the same). Output is
  // never released by both sides.
  bool continue_after_loss = false;
  std::string transports;          // UCX_TLS ("" = UCX default)
  bool quiet = false;              // no "backup lost" report (bench)
  // Called on the epoch manager's thread after the backup acknowledged
  // checkpoint N (its output is released by then); `finished`: the one of
  // the guest's end. Progress a supervisor or test can wait on (vmha(1),
  // --stats-file).
  std::function<void(uint64_t checkpoint, bool finished)> on_acknowledged;
};

struct EngineStats {
  uint64_t epochs = 0;
  std::vector<double> pause_ms;  // per epoch: vCPU paused
  // Where the pause goes, per epoch: stopping the vCPU, harvesting the rest
  // of the log, checksums + waiting for the backup to read the residual
  // pages, saving vCPU/VMM state and sending it.
  std::vector<double> stop_ms, harvest_ms, pull_ms, state_ms;
  std::vector<double> catch_up_ms;        // async: before the pause, waiting for the backup to read prefetched pages
  double startup_s = 0;                   // VMM, transport, connection, first checkpoint
  double guest_s = 0;                     // guest start to its end, wall clock
  double guest_cpu_s = 0;                 // CPU time of the vCPU threads (guest + VMM system calls + faults)
  std::vector<double> pages_per_ckpt;     // distinct pages per checkpoint
  std::vector<double> output_latency_ms;  // per output record: written -> released
  uint64_t prefetched_pages = 0, residual_pages = 0;
  uint64_t zero_pages = 0;  // sent as numbers: all zeros, nothing read
  bool backup_lost = false;
  bool stopped = false;      // lost the backup and stopped (continue_after_loss false, or no stand-down)
  bool unprotected = false;  // went on without a backup (it stood down)
  std::string backup_error;
};

// Runs the loaded `vm` under replication. The VM must have been created on
// memory from the transport in `channel_memory` (see run_protected()).
// Returns how the guest ended; output released as acknowledged.
struct ProtectedRun {
  RunResult result;
  EngineStats stats;
};

// Creates the transport, the VM on its registered memory, connects to the
// backup and runs the program protected. `vo` as for Vm::create (memory_base
// is filled in). Failures before the guest starts come back as kFailed.
ProtectedRun run_protected(const EngineOptions& eo, VmOptions vo, const std::vector<std::string>& argv);

}  // namespace vmha
