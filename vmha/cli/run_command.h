// `vmha run`: runs one program in a process VM, with the program's
// exit status, stdout and stderr.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "vmha/common/settings.h"

namespace vmha {

struct RunCommandOptions {
  std::string tracker = "none";  // no backup: nothing reads dirty pages (replicated runs choose their own)
  std::string workdir = ".";
  std::vector<std::string> read_only;  // the policy's read-only paths (vmha(1) CONFINEMENT; main fills it)
  uint64_t memory_mib = 4096;
  long vcpus = 0;                    // vCPU 0 and vcpus-1 helpers; 0: one per CPU (vmha(1) THREADS)
  uint64_t snapshot_at_syscall = 0;  // 0: never
  uint64_t snapshot_after_ms = 0;    // 0: never; else stop the vCPU after this long
  bool restore = false;              // continue in a fresh VM restored from the snapshot
  std::string snapshot_file;         // also write the snapshot here
  bool stats = false;                // print syscalls, dirty pages, time to stderr
  std::vector<std::string> argv;     // program and its arguments
  // Replication (vmha/engine): protected when `backup` is set.
  std::string backup;          // host:port of `vmha backup`
  std::string key_file;        // shared secret file (mode 0600)
  std::string mode = "async";  // async | stop-copy
  int epoch_ms = kDefaultEpochMs;
  int lease_ms = kDefaultLeaseMs;  // the silence limits derive from it (settings.h)
  std::string on_backup_loss = "stop";  // stop | continue (vmha(1))
  std::string stats_file;          // statistics here (common/run_stats.h, vmha(1))
};

// Returns the exit status vmha itself should exit with (or raises the
// guest's fatal signal).
int run_command(const RunCommandOptions& opts);

}  // namespace vmha
