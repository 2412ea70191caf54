// RunStats: what a replicated vmha reports, as data, to whoever watches it
// (--stats-file, vmha(1)): the SPANK plugin's task supervisor and its
// accounting, `vmha bench` and the tests. Nobody parses vmha's log lines:
// those are for people, and may quote what a peer sent.
//
// The file is key=value lines (key_value.h), first format=vmha-run-stats/1
// and side=primary, side=backup or side=local, then that side's keys:
//   primary, while the program runs: running=1, checkpoints=N (the last
//     checkpoint the backup acknowledged); at the end running=0 and the
//     totals: epochs, pause_ms_mean, pause_ms_max, pause_count,
//     prefetched_pages, residual_pages, zero_pages, backup_lost, stopped
//     (it lost the backup and stopped the program), unprotected (it went on
//     without one), guest_signal (the signal that killed the program, 0: none)
//   backup, written at a takeover before the program resumes: takeover=1,
//     checkpoint (the one it resumed from), undone (file-system changes of
//     the primary's after that checkpoint it undid), threads (the guest
//     threads that checkpoint held; 0 when the program had finished)
//   local (a run without a backup), at the end: syscalls (the guest's
//     system calls, over a snapshot and restore too)
// Written atomically (temp file + rename); read back strictly: a key of the
// other side, an unknown or repeated key, or a value out of its bounds makes
// the whole file an error, never a half-read one.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "vmha/common/status.h"

namespace vmha {

struct RunStats {
  enum class Side { kPrimary, kBackup, kLocal };
  Side side = Side::kPrimary;

  // primary
  bool running = false;
  uint64_t checkpoints = 0;
  uint64_t epochs = 0;
  double pause_ms_mean = 0, pause_ms_max = 0;
  uint64_t pause_count = 0;
  uint64_t prefetched_pages = 0, residual_pages = 0, zero_pages = 0;
  bool backup_lost = false, stopped = false, unprotected = false;
  int guest_signal = 0;

  // backup
  bool takeover = false;
  uint64_t checkpoint = 0;
  uint64_t undone = 0;
  uint64_t threads = 0;

  // local
  uint64_t syscalls = 0;
};

// Bounds a run can reach: an epoch every millisecond for thirty years, a
// guest of 2^40 pages, a pause of hours, Linux's signal numbers.
constexpr uint64_t kMaxStatsEpochs = 1000000000000ull;
constexpr uint64_t kMaxStatsPages = 1ull << 40;
constexpr double kMaxStatsPauseMs = 1e7;
constexpr int kMaxStatsSignal = 64;
constexpr uint64_t kMaxStatsThreads = 1u << 20;
constexpr uint64_t kMaxStatsSyscalls = 1000000000000000ull;
// A stats file is a few hundred bytes; anything larger is not vmha's.
constexpr std::size_t kMaxRunStatsBytes = 4096;

std::string format_run_stats(const RunStats& s);
// Error: "line N: KEY: expected ..., got '...'" and the like, escaped.
Status parse_run_stats(std::string_view text, RunStats* out);

Status write_run_stats(const std::string& path, const RunStats& s);
// Opens no symlink, reads only a regular file of at most kMaxRunStatsBytes.
// Errors do not name the file (the caller does); missing() (key_value.h)
// tells a file that is not there (yet).
Status read_run_stats(const std::string& path, RunStats* out);

}  // namespace vmha
