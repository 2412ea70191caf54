// Joint MAPPO-style training of the learned scheduler (duet-train(1)).
//
// Episodes are trace windows replayed in the simulator. Two decentralised
// actors: the ordering agent (Plackett-Luce distribution over pending jobs)
// and the placement agent (categorical over candidate machines); one
// centralised critic V(s) over both agents' observations at each scheduling
// pass. Reward of pass k = -(integral of jobs in system from pass k to pass
// k+1) in job-hours, so the episode return is -(sum of job time in system);
// a fee term -lambda * fees (USD) is added at the end. PPO clipping, GAE.
// Optional warm start: behaviour cloning of a heuristic (shortest predicted
// remaining GPU-time first, best-fit placement). Torch-free header.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "policy/io/trace.h"
#include "policy/learn/agents/machine_set.h"
#include "policy/model/cluster_model.h"
#include "policy/model/prices.h"
#include "policy/model/throughput.h"
#include "policy/sim/simulator.h"

namespace duet::learn {

class WorkerGroup;  // workers.h

// Which agents PPO (and behaviour cloning) update. A fixed agent keeps the
// weights it starts with (the seeded initial ones, or the --resume model's)
// and still samples its actions as in joint training, so the only change
// from joint training is which parameters move: the ablation "independently
// trained agents" trains each agent against a fixed partner.
enum class TrainAgents { both, order, place };
// "both", "order", "place"; throws std::invalid_argument naming the choices.
TrainAgents parse_train_agents(const std::string& s);
const char* train_agents_name(TrainAgents a);

inline constexpr int kPreemptiveUpdatePasses = 1024;

// What the run has done, after each episode (TrainOptions::on_episode).
struct TrainProgress {
  const char* phase = "";            // "bc" (behaviour cloning) or "ppo"
  int done = 0, total = 0;           // episodes of this run, both phases
  int episode = 0, phase_total = 0;  // of the phase, from 1 (ppo: with a --resume's earlier ones)
  double reward = 0;                 // the episode's total reward, -(job-hours in the system)
  double rollout_jct_s = 0;
  std::int64_t preemptions = 0;  // in the episode's rollout
  // The latest greedy evaluation on the validation window, and the
  // untrained start's (their ratio: how far training has come).
  double eval_jct_s = 0, initial_jct_s = 0;
  bool evaluated = false;  // this episode ended with an evaluation
  double elapsed_s = 0;
};

struct TrainOptions {
  std::string out;        // model file (checkpoints overwrite it)
  std::string curve_csv;  // learning curve; "" = out + ".csv"
  std::uint64_t seed = 1;
  int episodes = 50;              // PPO episodes (after behaviour cloning)
  double hours = 0;               // wall-clock budget; 0 = none
  std::size_t window_jobs = 400;  // jobs per episode window (whole trace if smaller)
  int bc_episodes = 4;            // behaviour-cloning rollouts; 0 = no warm start
  int bc_epochs = 20;             // gradient passes per BC rollout
  int ppo_epochs = 4;
  // Passes one PPO or behaviour-cloning epoch back-propagates through: an
  // episode with more uses a fresh random subset of this many each epoch, so
  // an update's cost is bounded whatever the queue does. 0: every pass;
  // -1: every pass for a model that is not preemptive, and
  // kPreemptiveUpdatePasses for a preemptive one (it decides every period:
  // thousands of passes per episode, 40x the rollout's cost when all are used).
  int max_update_passes = -1;
  double lr = 1e-3;
  double clip = 0.2, gamma = 0.99, gae_lambda = 0.95, entropy = 0.01, value_coef = 0.5;
  double fee_lambda = 0.0;  // weight of fees (USD) against job-hours
  // Weight of the pull towards the priors: the variance of what the networks
  // add to them (over a queue's scores, over a choice's machines) is a loss
  // term. A softmax ignores a constant shift, so a residual with no variance
  // acts exactly as the prior does. 0: none.
  double anchor = 0.0;
  int eval_every = 5;   // episodes between greedy evaluations/checkpoints
  bool resume = false;  // continue from `out` and its .state file
  // Fine-tuning: start from this model file (e.g. the shipped model, on a
  // site's own history) instead of the seeded initial weights; "" = none.
  std::string init;
  // The seeded initial model's ordering is preemptive (duet-model(5),
  // PREEMPTION): kPreemptLas or kPreemptGittins (net_config.h), 0 = not;
  // a --init or --resume model keeps its own setting.
  std::uint32_t preemptive = 0;
  TrainAgents agents = TrainAgents::both;
  // false: `out` is the best evaluated checkpoint (default); true: the last
  // one (a fixed training budget, e.g. for ablations).
  bool keep_last = false;
  bool ideal = false;  // simulator --ideal
  // The simulator's --period, --restart-overhead and preemption limits, in
  // rollouts and evaluations alike.
  double period_s = 300;
  double restart_overhead_s = 30;
  SimOptions::PreemptLimits preempt_limits;
  // false: a preemptive model's ordering ranks pending jobs only and never
  // preempts, in rollouts and evaluations, as with duet.conf Preemption=off.
  bool preemption = true;
  // The agents exchange their messages (duet-model(5), MESSAGES) in rollouts,
  // updates and evaluations; false: zeros both ways (an ablation).
  bool messages = true;
  // Which machines a job no machine holds is spread over, in rollouts and
  // evaluations (machine_set.h; learned: the placement agent's first machine
  // decides). The model keeps it (Model::spread), so its "duet" placement
  // and select/duet follow it. nullopt: the --init model's, else fastest.
  std::optional<SpreadSets> spread;
  // An episode whose record of decisions passes this many bytes stops the
  // run with an error that says so (rollout.h); 0: a third of the host's
  // memory, shared by the workers.
  std::size_t rollout_byte_limit = 0;
  // Several workers (workers.h, connected): each runs its own rollout of
  // every episode (its own window and seeds, from the seed and its rank) and
  // the updates average their gradients, so all hold the same weights; only
  // worker 0 evaluates and writes the model, the curve and the state. Every
  // worker is given the same options. nullptr: alone, as with one worker.
  WorkerGroup* workers = nullptr;
  std::function<void(double)> progress;                  // fraction of the run done
  std::function<void(const TrainProgress&)> on_episode;  // worker 0 only
};

struct TrainReport {
  double initial_jct_s = 0;  // greedy evaluation of the starting model
  double final_jct_s = 0;    // greedy evaluation of the saved model
  double best_jct_s = 0;     // best evaluation seen (that model is saved)
  int episodes_done = 0;
  double wall_s = 0;
};

// Trains and writes opt.out (the best evaluated model), opt.curve_csv.
// Throws std::runtime_error / FormatError on bad inputs or files. With
// workers, the report's evaluations are worker 0's (zeros on the others).
TrainReport train(const Trace& trace, const ClusterModel& cluster, const ThroughputTable& table,
                  const PriceTable* prices, const TrainOptions& opt);

}  // namespace duet::learn
