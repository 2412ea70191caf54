// duet model: model files of the learned scheduler (duet-model(5)).
//   duet model init --out M [--seed N]   an untrained model
//   duet model info M                    what a model file holds
//   duet model combine --order A --place B --out M
//                                        agents of two models in one
//   duet model set M --spread-sets R --out N
//                                        a copy with another spread rule
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "tools/duet/commands.h"
#include "tools/duet/common.h"
#include "policy/learn/agents/order_prior.h"
#include "policy/learn/model/model_combine.h"
#include "policy/learn/model/model_file.h"
#include "policy/learn/nets/model_init.h"

namespace duet::cli {
namespace {

struct ModelArgs {
  std::string out, in, order_from, place_from;
  uint64_t seed = 1;
  bool preemptive = false;
  std::string prior = "las";
  std::string spread;
};

}  // namespace

void setup_model(CLI::App* app) {
  auto args = std::make_shared<ModelArgs>();
  app->require_subcommand(1);
  CLI::App* init =
      app->add_subcommand("init", "write an untrained model (seeded random weights, identity normalisation)");
  init->add_option("--out,-o", args->out, "model file to write")->required();
  init->add_option("--seed", args->seed, "seed for the initial weights")->capture_default_str();
  auto* preemptive = init->add_flag("--preemptive", args->preemptive,
                                    "a preemptive ordering (duet-model(5), PREEMPTION; written as format 2)");
  add_prior_option(init, args->prior, preemptive);
  init->callback([args] {
    learn::NetConfig nc;
    nc.ordering.preemptive = args->preemptive ? learn::preemptive_prior(args->prior) : 0;
    learn::Model m = learn::make_initial_model(nc, learn::GpHyper{}, args->seed);
    m.provenance =
        fmt::format("duet model init --seed {}{}", args->seed, learn::preemptive_flags(nc.ordering.preemptive));
    learn::save_model(m, args->out);
    std::cout << fmt::format("wrote {} ({} arrays, untrained, seed {})\n", args->out, m.weights.size(), args->seed);
  });
  CLI::App* info = app->add_subcommand("info", "print what a model file holds");
  info->add_option("model", args->in, "model file")->required();
  info->callback([args] {
    const learn::Model m = learn::load_model(args->in);
    size_t params = 0;
    for (const auto& w : m.weights) params += w.data.size();
    std::cout << fmt::format(
        "model        {}\nformat       {}\nparameters   {}\nkernel       {}\npreemptive   {}\nspread sets  {}\n"
        "job types    {}\nprovenance   {}\n",
        args->in, learn::model_version(m), params, learn::kernel_kind_name(m.gp.kind),
        m.nets.ordering.preemptive
            ? fmt::format("yes (prior {})", learn::preemptive_prior_name(m.nets.ordering.preemptive))
            : std::string("no"),
        learn::spread_sets_name(m.spread), m.job_types.size(), m.provenance);
  });
  CLI::App* comb = app->add_subcommand(
      "combine", "one model from the ordering agent of one file and the placement agent of another");
  comb->add_option("--order", args->order_from, "model whose ordering agent (and critic) to take")->required();
  comb->add_option("--place", args->place_from, "model whose placement agent (and GP) to take")->required();
  comb->add_option("--out,-o", args->out, "model file to write")->required();
  comb->callback([args] {
    const learn::Model m =
        learn::combine_agents(learn::load_model(args->order_from), learn::load_model(args->place_from));
    learn::save_model(m, args->out);
    std::cout << fmt::format("wrote {} (ordering from {}, placement from {})\n", args->out, args->order_from,
                             args->place_from);
  });
  CLI::App* set = app->add_subcommand("set", "a copy of a model with another spread rule (nothing retrained)");
  set->add_option("model", args->in, "model file to read")->required();
  set->add_option("--spread-sets", args->spread,
                  "the placement's rule for the machines of a job no machine holds alone: fastest, tight, slow or "
                  "learned (duet-train(1), Spread jobs)")
      ->required()
      ->check(CLI::IsMember(learn::spread_sets_names()));
  set->add_option("--out,-o", args->out, "model file to write")->required();
  set->callback([args] {
    learn::Model m = learn::load_model(args->in);
    const learn::SpreadSets was = m.spread;
    m.spread = learn::parse_spread_sets(args->spread);
    m.provenance += fmt::format("; duet model set --spread-sets {}", args->spread);
    learn::save_model(m, args->out);
    std::cout << fmt::format("wrote {} (spread sets {}, was {}; format {})\n", args->out, args->spread,
                             learn::spread_sets_name(was), learn::model_version(m));
  });
}

}  // namespace duet::cli
