// duet: simulate and evaluate GPU cluster schedulers (man duet(1)).
// Each subcommand lives in its own cmd_*.cc; the table below is the one
// place that says which subcommands exist.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include <CLI/CLI.hpp>

#include "config.h"
#include "tools/duet/commands.h"
#include "tools/duet/common.h"

namespace {

struct Command {
  const char* name;
  const char* help;
  void (*setup)(CLI::App* app);
};

const Command kCommands[] = {
    {"sim", "simulate one ordering + placement pair on a trace and a cluster", duet::cli::setup_sim},
    {"eval", "compare ordering/placement pairs: summary.md, summary.json, PNG plots", duet::cli::setup_eval},
    {"convert", "convert real data (Philly jobs, PAI machines, a Slurm site's sacct and nodes) to duet's formats",
     duet::cli::setup_convert},
    {"bench", "simulator speed: events/s at 1x and k x the trace (default: full Philly on full PAI)",
     duet::cli::setup_bench},
    {"model", "create and inspect learned-scheduler model files (duet-model(5))", duet::cli::setup_model},
    {"replay", "submit a trace slice to Slurm as duet-emujob jobs at its scaled submit times", duet::cli::setup_replay},
    {"report",
     "metrics of a real Slurm run from sacct (as duet eval writes them), or compare two runs: duet report A B",
     duet::cli::setup_report},
    {"explain", "why duet's Slurm plugins ranked and placed a job (its SystemComment)", duet::cli::setup_explain},
    {"train", "train the learned scheduler (joint MAPPO, duet-train(1))", duet::cli::setup_train},
    {"scenario", "draw a workload and a cluster from a seed and a spec (duet-scenario(1))", duet::cli::setup_scenario},
    {"check-config", "check duet.conf, its models and files, and slurm.conf's duet lines before slurmctld uses them",
     duet::cli::setup_check_config},
};

std::string command_names() {
  std::string s;
  for (const Command& c : kCommands) s += (s.empty() ? "" : ", ") + std::string(c.name);
  return s;
}

// A missing or unknown subcommand is a usage error (exit 2) that names the
// known ones; CLI11 alone says only "A subcommand is required" (exit 106).
int usage_error(const char* argv1) {
  if (argv1)
    std::fprintf(stderr, "duet: unknown %s '%s' (subcommands: %s); see duet --help\n",
                 argv1[0] == '-' ? "option" : "subcommand", argv1, command_names().c_str());
  else
    std::fprintf(stderr, "duet: a subcommand is required (subcommands: %s); see duet --help\n",
                 command_names().c_str());
  return 2;
}

bool is_command(const char* name) {
  for (const Command& c : kCommands)
    if (std::strcmp(c.name, name) == 0) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage_error(nullptr);
  const std::string first = argv[1];
  if (!is_command(argv[1]) && first != "-h" && first != "--help" && first != "--version") return usage_error(argv[1]);
  CLI::App app{"duet: learned GPU scheduling for Slurm clusters -- simulator, baselines and evaluation"};
  app.set_version_flag("--version", std::string("duet ") + PACKAGE_VERSION);
  app.require_subcommand(1);
  for (const Command& c : kCommands) c.setup(app.add_subcommand(c.name, c.help));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end here with 0; every command-line error exits 2 (duet(1)).
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const std::exception& e) {
    duet::cli::progress_done();
    std::fprintf(stderr, "duet: %s\n", e.what());
    return 1;
  }
  return 0;
}
