#include "vmha/engine/replicated_run.h"

#include <signal.h>

#include <cstdio>

#include "vmha/engine/epoch_manager.h"
#include "vmha/engine/guest_exit.h"

namespace vmha {

int run_replicated(const RunCommandOptions& o) {
  signal(SIGPIPE, SIG_IGN);
  EngineOptions eo;
  eo.backup = o.backup;
  eo.key_file = o.key_file;
  if (o.mode == "async") eo.async = true;
  else if (o.mode == "stop-copy") eo.async = false;
  else return std::fprintf(stderr, "vmha: --mode %s: expected async or stop-copy\n", o.mode.c_str()), 125;
  if (o.key_file.empty()) return std::fprintf(stderr, "vmha: --backup needs --key FILE\n"), 125;
  if (o.epoch_ms < 1 || o.epoch_ms > 60000) return std::fprintf(stderr, "vmha: --epoch-ms %d: expected 1..60000\n", o.epoch_ms), 125;
  eo.epoch_ms = o.epoch_ms;
  eo.lease_ms = o.lease_ms;
  VmOptions vo;
  vo.workdir = o.workdir;
  vo.memory_bytes = o.memory_mib << 20;
  ProtectedRun run = run_protected(eo, vo, o.argv);
  if (o.stats) {
    std::fprintf(stderr, "vmha: %llu epochs, %llu pages prefetched, %llu residual%s\n",
                 static_cast<unsigned long long>(run.stats.epochs),
                 static_cast<unsigned long long>(run.stats.prefetched_pages),
                 static_cast<unsigned long long>(run.stats.residual_pages),
                 run.stats.backup_lost ? ", backup lost" : "");
  }
  return exit_like_guest(run.result, "vmha");
}

}  // namespace vmha
