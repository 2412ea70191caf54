// duet train: joint MAPPO-style training of the learned scheduler
// (duet-train(1)); writes the model, a CSV learning curve and its PNG.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "plugins/seam/duet_conf.h"
#include "tools/duet/commands.h"
#include "tools/duet/common.h"
#include "tools/duet/train_progress.h"
#include "tools/duet/train_workers.h"
#include "policy/learn/agents/order_prior.h"
#include "policy/learn/train/trainer.h"

namespace duet::cli {
namespace {

struct TrainArgs {
  Inputs in;
  learn::TrainOptions t;
  std::string png;
  std::string agents = "both", keep = "best", spread;
  WorkerOptions workers;
  bool preemptive = false;
  std::string prior = "las";
  std::string duet_conf;  // --duet-conf: the site's Preemption and limits
};

// --duet-conf: train for the mode the plugins will run the model in, with
// duet.conf's Preemption and its limits (the simulator's --no-preemption and
// --preempt-* options, which it excludes). Throws naming the file's problems.
void take_duet_conf(const std::string& path, Inputs& in) {
  plugin::ConfResult r = plugin::load_duet_conf(path);
  if (!r.file_found) throw std::runtime_error("--duet-conf " + path + ": not found");
  if (!r.errors.empty()) {
    std::string what = "--duet-conf:";
    for (const plugin::ConfError& e : r.errors) what += (r.errors.size() > 1 ? "\n" : " ") + e.text();
    throw std::runtime_error(what);
  }
  const plugin::DuetConf& c = r.conf;
  in.preemption = c.preemption == "requeue";
  in.preempt_limits.min_run_s = c.preempt_min_run_time_s;
  in.preempt_limits.job_interval_s = c.preempt_job_interval_s;
  in.preempt_limits.max_restarts = c.preempt_max_restarts;
  in.preempt_limits.max_per_pass = c.preempt_max_per_rescore;
}

// learning curve PNG with gnuplot (skipped, with a note, when absent)
void plot_curve(const std::string& csv, const std::string& png) {
  const std::string gp = DUET_GNUPLOT;
  if (gp.empty()) {
    std::cerr << "duet train: gnuplot not found at configure time; no " << png << "\n";
    return;
  }
  const std::string script = png + ".gp";
  std::ofstream s(script);
  s << "set datafile separator ','\nset terminal pngcairo size 900,500 noenhanced\nset output '" << png << "'\n"
    << "set xlabel 'wall seconds'\nset ylabel 'mean JCT (s), greedy, evaluation window'\nset key top right\n"
    << "plot '" << csv << "' every ::1 using 3:5 with linespoints title 'duet (bc then ppo)'\n";
  s.close();
  const std::string cmd = "'" + gp + "' '" + script + "' 2>/dev/null";
  if (std::system(cmd.c_str()) != 0) {
    // pngcairo may be missing from gnuplot-nox: fall back to the png terminal
    std::ofstream s2(script);
    s2 << "set datafile separator ','\nset terminal png size 900,500\nset output '" << png << "'\n"
       << "set xlabel 'wall seconds'\nset ylabel 'mean JCT (s)'\n"
       << "plot '" << csv << "' every ::1 using 3:5 with linespoints title 'duet'\n";
    s2.close();
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("gnuplot failed on " + script);
  }
}

}  // namespace

void setup_train(CLI::App* app) {
  auto a = std::make_shared<TrainArgs>();
  a->in.add_options(*app);
  app->add_option("--out,-o", a->t.out, "model file to write (checkpoints overwrite it; best evaluation kept)")
      ->required();
  app->add_option("--episodes", a->t.episodes, "PPO episodes")->capture_default_str();
  app->add_option("--hours", a->t.hours, "wall-clock budget in hours (0: none)")->capture_default_str();
  app->add_option("--window", a->t.window_jobs, "jobs per episode (a trace window)")->capture_default_str();
  app->add_option("--bc-episodes", a->t.bc_episodes, "behaviour-cloning warm-start rollouts (0: none)")
      ->capture_default_str();
  app->add_option("--lr", a->t.lr, "Adam learning rate")->capture_default_str();
  app->add_option("--anchor", a->t.anchor,
                  "weight of the pull towards the priors: the variance of what the networks add to the prior's "
                  "scores is a loss term (0: none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app->add_option("--fee-lambda", a->t.fee_lambda, "weight of fees (USD) against job-hours in the reward")
      ->capture_default_str();
  app->add_option("--eval-every", a->t.eval_every, "episodes between evaluations and checkpoints")
      ->capture_default_str();
  app->add_option("--curve", a->t.curve_csv, "learning-curve CSV (default: OUT.csv)");
  app->add_option("--png", a->png, "learning-curve PNG (default: OUT.png)");
  auto* resume = app->add_flag("--resume", a->t.resume, "continue from OUT and OUT.state");
  app->add_option("--init", a->t.init,
                  "fine-tune: start from this model file instead of seeded weights (no warm start unless "
                  "--bc-episodes is given)")
      ->excludes(resume);
  auto* preemptive = app->add_flag("--preemptive", a->preemptive,
                                   "the new model's ordering is preemptive: it ranks running jobs with pending ones "
                                   "each period, with a gated prior (--prior; duet-model(5), PREEMPTION); ignored "
                                   "with --init and --resume")
                         ->excludes(resume);
  add_prior_option(app, a->prior, preemptive);
  app->add_option("--update-passes", a->t.max_update_passes,
                  "passes each PPO/behaviour-cloning epoch learns from; an episode with more uses a fresh random "
                  "subset (0: all; default -1: all, or " +
                      std::to_string(learn::kPreemptiveUpdatePasses) + " for a preemptive model)")
      ->check(CLI::Range(-1, 1000000))
      ->capture_default_str();
  app->add_option("--agents", a->agents,
                  "agents to train: both (jointly), order or place (the other keeps its starting weights)")
      ->check(CLI::IsMember({"both", "order", "place"}))
      ->capture_default_str();
  app->add_option("--spread-sets", a->spread,
                  "machines of a job no machine holds alone: fastest (the fastest that hold it), tight, slow, or "
                  "learned (the placement agent's first machine decides); the model keeps the rule, and its "
                  "placement follows it in the simulator and in select/duet (default: the --init model's, else "
                  "fastest; duet-train(1))")
      ->check(CLI::IsMember(learn::spread_sets_names()));
  app->add_option("--keep", a->keep, "model written to OUT: best (evaluation) or last (checkpoint)")
      ->check(CLI::IsMember({"best", "last"}))
      ->capture_default_str();
  app->add_option("--workers", a->workers.workers,
                  "training worker processes on this host, each with its own rollout of every episode, gradients "
                  "averaged (under srun -n N the step's tasks are the workers instead)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app->add_option("--store", a->workers.store,
                  "in a Slurm step: HOST[:PORT] of task 0's rendezvous store (default: the step's first node, a port "
                  "from the job and step ids)");
  app->add_option("--store-secret", a->workers.secret_file,
                  "in a Slurm step: file with the secret the tasks' rendezvous store needs (yours, mode 0600, the "
                  "same on every node; default ~/.duet/train-secret)");
  app->add_option("--worker-timeout", a->workers.timeout_s,
                  "seconds the workers wait for each other (joining, each gradient exchange) before the run fails")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  auto* conf = app->add_option("--duet-conf", a->duet_conf,
                               "train for the site's mode: duet.conf's Preemption (off: the model never preempts in "
                               "rollouts and evaluations, as priority/duet and site_factor/duet run it) and its "
                               "PreemptMinRunTime, PreemptJobInterval, PreemptMaxRestarts, PreemptMaxPerRescore");
  for (const char* o : {"--no-preemption", "--preempt-min-run-time", "--preempt-job-interval", "--preempt-max-restarts",
                        "--preempt-max-per-pass"})
    conf->excludes(app->get_option(o));
  app->callback([a, app] {
    if (!a->duet_conf.empty()) take_duet_conf(a->duet_conf, a->in);
    a->t.agents = learn::parse_train_agents(a->agents);
    // a fine-tuned model is already past imitating the heuristic
    if (!a->t.init.empty() && app->get_option("--bc-episodes")->count() == 0) a->t.bc_episodes = 0;
    a->t.keep_last = a->keep == "last";
    if (!a->spread.empty()) a->t.spread = learn::parse_spread_sets(a->spread);
    a->t.preemptive = a->preemptive ? learn::preemptive_prior(a->prior) : 0;
    a->t.seed = a->in.seed;
    a->t.ideal = a->in.ideal;
    a->t.period_s = a->in.period;
    a->t.restart_overhead_s = a->in.restart_overhead;
    a->t.preempt_limits = a->in.preempt_limits;
    a->t.preemption = a->in.preemption;  // --no-preemption (Inputs) or --duet-conf
    a->t.messages = a->in.messages;      // --no-messages (Inputs)
    policy_context(a->in);               // a --model that does not load fails here, as in sim and eval
    auto l = load(a->in);
    a->workers.workers_given = app->get_option("--workers")->count() > 0;
    TrainWorkers w = start_workers(a->workers, [](const char* n) { return std::getenv(n); });
    a->t.workers = w.group.get();
    if (!w.lead()) {
      // the other workers: their share of the updates, quiet unless they fail
      try {
        learn::train(l->trace, l->cluster, l->table, &l->prices, a->t);
      } catch (const std::exception& e) { throw std::runtime_error(w.role() + ": " + e.what()); }
      return;
    }
    // lines, not a bar: a training run's output is often a file
    a->t.on_episode = TrainProgressLines(stderr, a->t.hours);
    learn::TrainReport r = learn::train(l->trace, l->cluster, l->table, &l->prices, a->t);
    w.finish();
    const std::string csv = a->t.curve_csv.empty() ? a->t.out + ".csv" : a->t.curve_csv;
    const std::string png = a->png.empty() ? a->t.out + ".png" : a->png;
    plot_curve(csv, png);
    std::cout << fmt::format(
        "model        {}\nepisodes     {}\nmean JCT s   untrained {:.1f}  best {:.1f}  saved {:.1f}\ncurve        {}, "
        "{}\n"
        "wall s       {:.1f}\n",
        a->t.out, r.episodes_done, r.initial_jct_s, r.best_jct_s, r.final_jct_s, csv, png, r.wall_s);
  });
}

}  // namespace duet::cli
