// duet: simulate and evaluate GPU cluster schedulers (man duet(1)).
// Each subcommand lives in its own file and registers itself.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "config.h"
#include "policy/cli/common.h"

int main(int argc, char** argv) {
  CLI::App app{"duet: learned GPU scheduling for Slurm clusters -- simulator, baselines and evaluation"};
  app.set_version_flag("--version", std::string("duet ") + PACKAGE_VERSION);
  app.require_subcommand(1);
  duet::cli::setup_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    duet::cli::progress_done();
    std::fprintf(stderr, "duet: %s\n", e.what());
    return 1;
  }
  return 0;
}
