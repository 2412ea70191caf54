// vmha: run Linux programs in a KVM process VM (`vmha run`) and
// measure it (`vmha bench`). Each subcommand has a setup function below; the
// table after them is the one place that says which subcommands exist.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "config.h"
#include "vmha/bench/corpus_bench.h"
#include "vmha/bench/native_bench.h"
#include "vmha/bench/repl_bench.h"
#include "vmha/cli/diagnostics_log.h"
#include "vmha/cli/run_command.h"
#include "vmha/engine/backup_service.h"
#include "vmha/sys/confinement.h"
#include "vmha/sys/signal_kick.h"

namespace {

// Runs a parsed subcommand; returns vmha's exit status (vmha(1)).
using Runner = std::function<int()>;

struct Command {
  const char* name;
  const char* help;
  // Adds the subcommand's options (`--log` into *log_file, which main opens
  // before running it) and returns what runs it.
  Runner (*setup)(CLI::App* app, std::string* log_file);
};

// --ro and --no-default-ro (vmha(1) CONFINEMENT): the read-only paths of
// the confinement policy, the same for `vmha run` and `vmha backup`.
struct ReadOnlyOptions {
  std::vector<std::string> added;
  bool no_defaults = false;
  std::vector<std::string> paths() const {
    std::vector<std::string> out = no_defaults ? std::vector<std::string>{} : vmha::default_read_only_paths();
    out.insert(out.end(), added.begin(), added.end());
    return out;
  }
};

std::shared_ptr<ReadOnlyOptions> add_read_only_options(CLI::App* app) {
  auto o = std::make_shared<ReadOnlyOptions>();
  app->add_option("--ro", o->added,
                  "Let the guest read (never write) this absolute path too; repeatable (defaults: " +
                      std::string(vmha::kDefaultReadOnlyPaths) + ")")
      // One path per --ro; not expected(1) with TakeAll, with which CLI11
      // refused the program's own options after "--" ("sh -c ..." exited 109).
      ->allow_extra_args(false);
  app->add_flag("--no-default-ro", o->no_defaults, "Drop the default read-only paths (only --ro's remain)");
  return o;
}

Runner setup_run(CLI::App* app, std::string* log_file) {
  auto run = std::make_shared<vmha::RunCommandOptions>();
  app->add_option("--tracker", run->tracker, "Dirty-page tracker: ring, bitmap, hot or none (with --backup in async mode: ring or hot; default hot where KVM offers it)")->capture_default_str();
  app->add_option("--workdir", run->workdir, "The guest's working directory (read-write)")->capture_default_str();
  auto policy = add_read_only_options(app);
  app->add_option("--memory", run->memory_mib, "Guest memory in MiB (reserved, not committed)")->capture_default_str();
  app->add_option("--vcpus", run->vcpus, "vCPUs for the guest's threads, 1-16 (0: one per CPU vmha may run on)")
      ->capture_default_str();
  app->add_option("--snapshot-at-syscall", run->snapshot_at_syscall,
                  "Stop after this many system calls and snapshot the VM");
  app->add_option("--snapshot-after-ms", run->snapshot_after_ms,
                  "Stop the vCPU after this many milliseconds (from another thread) and snapshot the VM");
  app->add_flag("--restore", run->restore, "After the snapshot, continue in a fresh VM restored from it");
  app->add_option("--snapshot-file", run->snapshot_file, "Also write the snapshot to this file");
  app->add_flag("--stats", run->stats, "Print run time, system calls and dirty pages to stderr");
  app->add_option("--backup", run->backup,
                  "Replicate to `vmha backup` at HOST:PORT (output is released per acknowledged epoch)");
  app->add_option("--key", run->key_file, "Shared secret file for the backup channel (mode 0600, 16-4096 bytes)");
  app->add_option("--mode", run->mode, "Checkpointing: async (prefetch while the guest runs) or stop-copy")
      ->capture_default_str();
  app->add_option("--epoch-ms", run->epoch_ms, "Longest epoch in milliseconds")->capture_default_str();
  app->add_option("--lease-ms", run->lease_ms,
                  "Lease in milliseconds: the backup counts the primary lost after 5 leases (at least 2 s) of silence")
      ->capture_default_str();
  app->add_option("--on-backup-loss", run->on_backup_loss,
                  "When the backup is lost: stop (release nothing more, the backup takes over if alive) or continue "
                  "(unprotected, once the backup confirmed it stands down)")
      ->capture_default_str();
  app->add_option("--stats-file", run->stats_file,
                  "Keep statistics in this file, key=value lines (vmha(1)): with --backup the checkpoints while it runs, epochs and pauses at the end; without, the system calls");
  app->add_option(
      "--log", *log_file,
      "Write vmha's own diagnostics to this file instead of standard error (which then carries only the guest's)");
  app->add_option("program", run->argv, "PROGRAM ARGS... (after --)")->required();
  return [run, policy] {
    run->read_only = policy->paths();
    return vmha::run_command(*run);
  };
}

// Options of `vmha bench`: --native-only runs vmha::bench_command, otherwise
// the replication comparison runs with the same workloads, --only and --reps.
struct BenchArgs {
  vmha::BenchOptions bench;
  bool json = false;
  int epoch_ms = vmha::kDefaultEpochMs;
  int kills = 0;
  std::string corpus;
};

int run_bench(const BenchArgs& a) {
  if (a.bench.native_only) return vmha::bench_command(a.bench);
  if (!a.corpus.empty()) {
    vmha::CorpusBenchOptions cb;
    cb.dir = a.corpus;
    cb.only = a.bench.only;
    cb.reps = a.bench.reps;
    cb.epoch_ms = a.epoch_ms == vmha::kDefaultEpochMs ? 0 : a.epoch_ms;
    cb.json = a.json;
    return vmha::corpus_bench(cb);
  }
  vmha::ReplBenchOptions rb;
  rb.workload_dir = a.bench.workload_dir;
  rb.only = a.bench.only;
  rb.reps = a.bench.reps;
  rb.json = a.json;
  rb.epoch_ms = a.epoch_ms;
  rb.kills = a.kills;
  return vmha::replication_bench(rb);
}

Runner setup_bench(CLI::App* app, std::string* /*log_file*/) {
  auto a = std::make_shared<BenchArgs>();
  app->add_flag("--native-only", a->bench.native_only,
                "Compare with native only: trackers, syscalls, dirty pages (without it: native vs replicated "
                "async vs stop-copy)");
  app->add_flag("--json", a->json, "Replication comparison as JSON");
  app->add_option("--epoch-ms", a->epoch_ms, "Epoch length for the replication comparison")->capture_default_str();
  app->add_option("--workloads", a->bench.workload_dir, "Directory holding the built workload programs")
      ->capture_default_str();
  app->add_option("--reps", a->bench.reps,
                  "Repetitions per measurement (--native-only: best is kept; replication: medians, epochs pooled)")
      ->capture_default_str();
  app->add_option("--harvest-ms", a->bench.harvest_ms, "Period of the harvester thread in milliseconds")
      ->capture_default_str();
  app->add_option("--only", a->bench.only, "Run only workloads whose name contains this");
  app->add_option("--corpus", a->corpus,
                  "Run the real programs of DIR/corpus.list (tests/vmha_corpus) natively, under vmha run and "
                  "replicated in both modes, as users run them");
  app->add_option("--kills", a->kills,
                  "Failover kills per program that must hit a running primary (default: max(5, --reps))")
      ->check(CLI::NonNegativeNumber);
  return [a] { return run_bench(*a); };
}

Runner setup_backup(CLI::App* app, std::string* log_file) {
  auto backup = std::make_shared<vmha::BackupOptions>();
  app->add_option("--listen", backup->listen, "HOST:PORT to listen on (port 0: any)")->capture_default_str();
  app->add_option("--key", backup->key_file, "Shared secret file (the primary's --key)")->required();
  app->add_option("--workdir", backup->workdir, "Working directory of a resumed guest")->capture_default_str();
  auto policy = add_read_only_options(app);
  app->add_option("--fence-cmd", backup->fence_cmd,
                  "Shell command run before a takeover; must exit 0 (fences the primary)");
  app->add_option("--lease-ms", backup->lease_ms, "Primary lost: connection gone and silent this long")
      ->capture_default_str();
  app->add_option("--address-file", backup->address_file, "Write the listening HOST:PORT to this file");
  app->add_option(
      "--stdout", backup->stdout_file,
      "Append a resumed guest's stdout to this file (the primary's output file: its size tells what was released)");
  app->add_option("--stderr", backup->stderr_file, "Append a resumed guest's stderr to this file (likewise)");
  app->add_option("--stats-file", backup->stats_file,
                  "At a takeover, write takeover=1, checkpoint=N, undone=N and threads=N to this file (vmha(1))");
  app->add_option("--accept-timeout", backup->accept_timeout_s, "Seconds to wait for the primary")
      ->capture_default_str();
  app->add_option("--log", *log_file,
                  "Write vmha's own diagnostics to this file instead of standard error (which then carries only "
                  "the resumed guest's)");
  return [backup, policy] {
    backup->read_only = policy->paths();
    return vmha::run_backup(*backup);
  };
}

const Command kCommands[] = {
    {"run", "Run PROGRAM ARGS... inside a process VM", setup_run},
    {"bench", "Compare workloads in vmha with native runs", setup_bench},
    {"backup", "Receive checkpoints of a `vmha run --backup` and take over when its primary is lost", setup_backup},
};

}  // namespace

int main(int argc, char** argv) {
  vmha::unblock_vmha_signals();  // before any thread: they all inherit it
  CLI::App app{"vmha: a KVM process VM for x86-64 Linux programs, with exact dirty-page tracking"};
  app.set_version_flag("--version", std::string("vmha ") + PACKAGE_VERSION);
  app.require_subcommand(1);
  std::string log_file;
  std::vector<std::pair<CLI::App*, Runner>> commands;
  for (const Command& c : kCommands) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    commands.emplace_back(sub, c.setup(sub, &log_file));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) { return app.exit(e); }
  if (!log_file.empty() && !vmha::redirect_diagnostics(log_file)) {
    std::perror(("vmha: --log " + log_file).c_str());
    return 125;
  }
  // An exception is vmha's own failure (status 125, said why), never an
  // abort: a primary killed by a signal is taken for a kill and failed over.
  try {
    for (const auto& [sub, run] : commands)
      if (*sub) return run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vmha: internal error: %s\n", e.what());
    return 125;
  }
  return 125;  // not reached: require_subcommand(1) makes parse() throw without one
}
