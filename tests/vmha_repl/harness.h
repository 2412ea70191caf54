// Two-process replication harness for the transport tests and the benchmark:
// a backup process (listens, receives, commits) and a primary process whose
// fake guest memory is dirtied by a writer thread with a known pattern while a
// prefetch thread has the backup pull dirty pages; at each epoch end the writer
// is paused, residual pages are pulled, and the backup checks its committed
// image against the primary's memory (CRC32C in the state blob, plus an exact
// comparison with the primary's last snapshot). Every wait is bounded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vmha::test {

enum class Fault {
  kNone,
  kWrongKey,        // primary holds another key
  kWrongMethod,     // primary uses another authentication method
  kCorruptFrame,    // after checkpoint 1: a State frame with a flipped payload byte
  kTruncatedFrame,  // after checkpoint 1: half a State frame, then the primary closes and exits
  kBadCounts,       // after checkpoint 1: End claims one page more than sent
  kKillPrimary,     // after checkpoint 1: SIGKILL
};

struct HarnessConfig {
  std::string transports;              // UCX_TLS value ("" = UCX default)
  std::string listen = "127.0.0.1:0";  // backup's address
  std::string backup_netns;            // network namespace names (empty: current)
  std::string primary_netns;
  std::uint64_t pages = 4096;  // fake guest memory, 4 KiB pages
  int epochs = 6;
  int epoch_ms = 40;
  int writer_pause_every = 4;  // writer sleeps 50 us every N page writes
  Fault fault = Fault::kNone;
  int time_limit_s = 60;  // whole run, both processes
};

struct HarnessResult {
  std::string backup_error;   // first error the backup saw ("" if none)
  std::string primary_error;  // first error the primary saw
  int primary_status = -1;    // waitpid status
  int backup_status = -1;
  std::uint64_t commits = 0;
  std::uint64_t committed_epoch = 0;
  std::uint64_t crc_mismatches = 0;  // committed images != primary memory
  bool compared_snapshot = false;    // final image compared byte for byte
  bool snapshot_matches = false;
  std::uint64_t prefetched_pages = 0;  // pulled while the guest ran
  std::uint64_t residual_pages = 0;    // pulled while it was paused
  double pause_p50_ms = 0, pause_max_ms = 0;
  bool lease_held_before_expiry = false;  // kKillPrimary: not lost right away
  bool lease_lost_after_expiry = false;   // ... lost after the lease
};

HarnessResult run_harness(const HarnessConfig& config);
std::string describe(const HarnessResult& r);

}  // namespace vmha::test
