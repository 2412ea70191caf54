// The duet subcommands: each fills the subcommand main() made for it (its
// options and its callback). main.cc lists them, in the order --help shows.
#pragma once

#include <CLI/CLI.hpp>

namespace duet::cli {

void setup_sim(CLI::App* app);
void setup_eval(CLI::App* app);
void setup_convert(CLI::App* app);
void setup_bench(CLI::App* app);
void setup_model(CLI::App* app);
void setup_replay(CLI::App* app);
void setup_report(CLI::App* app);
void setup_explain(CLI::App* app);
void setup_train(CLI::App* app);
void setup_scenario(CLI::App* app);
void setup_check_config(CLI::App* app);

}  // namespace duet::cli
