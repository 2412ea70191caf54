// vmha: run static Linux programs in a KVM process VM (`vmha run`) and
// measure it (`vmha bench`).
#include <CLI/CLI.hpp>

#include <cstdio>

#include "vmha/bench/native_bench.h"
#include "vmha/bench/repl_bench.h"
#include "vmha/cli/diagnostics_log.h"
#include "vmha/cli/run_command.h"
#include "vmha/engine/backup_service.h"

int main(int argc, char** argv) {
  CLI::App app{"vmha: a KVM process VM for static x86-64 Linux programs, with exact dirty-page tracking"};
  app.require_subcommand(1);

  vmha::RunCommandOptions run;
  CLI::App* run_cmd = app.add_subcommand("run", "Run PROGRAM ARGS... inside a process VM");
  run_cmd->add_option("--tracker", run.tracker, "Dirty-page tracker: ring, bitmap or none")->capture_default_str();
  run_cmd->add_option("--workdir", run.workdir, "Directory the guest is confined to")->capture_default_str();
  run_cmd->add_option("--memory", run.memory_mib, "Guest memory in MiB (reserved, not committed)")
      ->capture_default_str();
  run_cmd->add_option("--snapshot-at-syscall", run.snapshot_at_syscall,
                      "Stop after this many system calls and snapshot the VM");
  run_cmd->add_option("--snapshot-after-ms", run.snapshot_after_ms,
                      "Stop the vCPU after this many milliseconds (from another thread) and snapshot the VM");
  run_cmd->add_flag("--restore", run.restore, "After the snapshot, continue in a fresh VM restored from it");
  run_cmd->add_option("--snapshot-file", run.snapshot_file, "Also write the snapshot to this file");
  run_cmd->add_flag("--stats", run.stats, "Print run time, system calls and dirty pages to stderr");
  run_cmd->add_option("--backup", run.backup,
                      "Replicate to `vmha backup` at HOST:PORT (output is released per acknowledged epoch)");
  run_cmd->add_option("--key", run.key_file, "Shared secret file for the backup channel (mode 0600, 16-4096 bytes)");
  run_cmd->add_option("--mode", run.mode, "Checkpointing: async (prefetch while the guest runs) or stop-copy")
      ->capture_default_str();
  run_cmd->add_option("--epoch-ms", run.epoch_ms, "Longest epoch in milliseconds")->capture_default_str();
  run_cmd
      ->add_option("--lease-ms", run.lease_ms, "Hold output this long after losing the backup, then go on unprotected")
      ->capture_default_str();
  std::string log_file;
  run_cmd->add_option("--stats-file", run.stats_file,
                      "With --backup: write replication statistics (epochs, pauses) to this file at the end");
  run_cmd->add_option(
      "--log", log_file,
      "Write vmha's own diagnostics to this file instead of standard error (which then carries only the guest's)");
  run_cmd->add_option("program", run.argv, "PROGRAM ARGS... (after --)")->required();

  vmha::BenchOptions bench;
  CLI::App* bench_cmd = app.add_subcommand("bench", "Compare workloads in vmha with native runs");
  bench_cmd->add_flag("--native-only", bench.native_only,
                      "Compare with native only: trackers, syscalls, dirty pages (without it: native vs replicated "
                      "async vs stop-copy)");
  bool bench_json = false;
  int bench_epoch_ms = vmha::kDefaultEpochMs;
  bench_cmd->add_flag("--json", bench_json, "Replication comparison as JSON");
  bench_cmd->add_option("--epoch-ms", bench_epoch_ms, "Epoch length for the replication comparison")
      ->capture_default_str();
  bench_cmd->add_option("--workloads", bench.workload_dir, "Directory holding the built workload programs")
      ->capture_default_str();
  bench_cmd
      ->add_option("--reps", bench.reps,
                   "Repetitions per measurement (--native-only: best is kept; replication: medians, epochs pooled)")
      ->capture_default_str();
  bench_cmd->add_option("--harvest-ms", bench.harvest_ms, "Period of the harvester thread in milliseconds")
      ->capture_default_str();
  bench_cmd->add_option("--only", bench.only, "Run only workloads whose name contains this");

  vmha::BackupOptions backup;
  CLI::App* backup_cmd = app.add_subcommand(
      "backup", "Receive checkpoints of a `vmha run --backup` and take over when its primary is lost");
  backup_cmd->add_option("--listen", backup.listen, "HOST:PORT to listen on (port 0: any)")->capture_default_str();
  backup_cmd->add_option("--key", backup.key_file, "Shared secret file (the primary's --key)")->required();
  backup_cmd->add_option("--workdir", backup.workdir, "Working directory of a resumed guest")->capture_default_str();
  backup_cmd->add_option("--fence-cmd", backup.fence_cmd,
                         "Shell command run before a takeover; must exit 0 (fences the primary)");
  backup_cmd->add_option("--lease-ms", backup.lease_ms, "Primary lost: connection gone and silent this long")
      ->capture_default_str();
  backup_cmd->add_option("--address-file", backup.address_file, "Write the listening HOST:PORT to this file");
  backup_cmd->add_option(
      "--stdout", backup.stdout_file,
      "Append a resumed guest's stdout to this file (the primary's output file: its size tells what was released)");
  backup_cmd->add_option("--stderr", backup.stderr_file, "Append a resumed guest's stderr to this file (likewise)");
  backup_cmd->add_option("--accept-timeout", backup.accept_timeout_s, "Seconds to wait for the primary")
      ->capture_default_str();
  backup_cmd->add_option("--log", log_file,
                         "Write vmha's own diagnostics to this file instead of standard error (which then carries only "
                         "the resumed guest's)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) { return app.exit(e); }
  if (!log_file.empty() && !vmha::redirect_diagnostics(log_file)) {
    std::perror(("vmha: --log " + log_file).c_str());
    return 125;
  }
  if (*run_cmd) return vmha::run_command(run);
  if (*backup_cmd) return vmha::run_backup(backup);
  if (bench.native_only) return vmha::bench_command(bench);
  vmha::ReplBenchOptions rb;
  rb.workload_dir = bench.workload_dir;
  rb.only = bench.only;
  rb.reps = bench.reps;
  rb.json = bench_json;
  rb.epoch_ms = bench_epoch_ms;
  return vmha::replication_bench(rb);
}
