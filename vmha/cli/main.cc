// vmha: run static Linux programs in a KVM process VM (`vmha run`) and
// measure it (`vmha bench`).
#include <CLI/CLI.hpp>

#include "vmha/cli/bench_command.h"
#include "vmha/cli/run_command.h"

int main(int argc, char** argv) {
  CLI::App app{"vmha: a KVM process VM for static x86-64 Linux programs, with exact dirty-page tracking"};
  app.require_subcommand(1);

  vmha::RunCommandOptions run;
  CLI::App* run_cmd = app.add_subcommand("run", "Run PROGRAM ARGS... inside a process VM");
  run_cmd->add_option("--tracker", run.tracker, "Dirty-page tracker: ring, bitmap or none")->capture_default_str();
  run_cmd->add_option("--workdir", run.workdir, "Directory the guest is confined to")->capture_default_str();
  run_cmd->add_option("--memory", run.memory_mib, "Guest memory in MiB (reserved, not committed)")->capture_default_str();
  run_cmd->add_option("--snapshot-at-syscall", run.snapshot_at_syscall, "Stop after this many system calls and snapshot the VM");
  run_cmd->add_option("--snapshot-after-ms", run.snapshot_after_ms, "Stop the vCPU after this many milliseconds (from another thread) and snapshot the VM");
  run_cmd->add_flag("--restore", run.restore, "After the snapshot, continue in a fresh VM restored from it");
  run_cmd->add_option("--snapshot-file", run.snapshot_file, "Also write the snapshot to this file");
  run_cmd->add_flag("--stats", run.stats, "Print run time, system calls and dirty pages to stderr");
  run_cmd->add_option("program", run.argv, "PROGRAM ARGS... (after --)")->required();

  vmha::BenchOptions bench;
  CLI::App* bench_cmd = app.add_subcommand("bench", "Compare workloads in vmha with native runs");
  bench_cmd->add_flag("--native-only", bench.native_only, "Compare with native only (no replication yet; the default)");
  bench_cmd->add_option("--workloads", bench.workload_dir, "Directory holding the built workload programs")->capture_default_str();
  bench_cmd->add_option("--reps", bench.reps, "Repetitions per measurement (best is kept)")->capture_default_str();
  bench_cmd->add_option("--harvest-ms", bench.harvest_ms, "Period of the harvester thread in milliseconds")->capture_default_str();
  bench_cmd->add_option("--only", bench.only, "Run only workloads whose name contains this");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (*run_cmd) return vmha::run_command(run);
  return vmha::bench_command(bench);
}
