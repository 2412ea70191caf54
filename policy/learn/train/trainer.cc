// Joint MAPPO-style trainer (see trainer.h and duet-train(1)): the loop of
// rollouts (rollout.h), updates (ppo.h), greedy evaluations and checkpoints.
#include "policy/learn/train/trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <stdexcept>

#include <fmt/format.h>
#include <unistd.h>

#include "policy/learn/agents/duet_policy.h"
#include "policy/learn/agents/order_prior.h"
#include "policy/util/rng.h"
#include "policy/learn/model/model_file.h"
#include "policy/learn/nets/model_init.h"
#include "policy/learn/nets/nets_torch.h"
#include "policy/learn/train/actors.h"
#include "policy/learn/train/grad_sync.h"
#include "policy/learn/train/ppo.h"
#include "policy/learn/train/rollout.h"
#include "policy/learn/train/workers.h"
#include "policy/sim/simulator.h"

namespace duet::learn {
namespace {

Trace window(const Trace& t, size_t start, size_t n) {
  Trace w;
  w.source = t.source;
  const size_t end = std::min(t.jobs.size(), start + n);
  w.jobs.assign(t.jobs.begin() + static_cast<std::ptrdiff_t>(start), t.jobs.begin() + static_cast<std::ptrdiff_t>(end));
  const double t0 = w.jobs.empty() ? 0 : w.jobs.front().submit;
  for (auto& j : w.jobs) j.submit -= t0;
  return w;
}

double greedy_jct(const Model& m, const Trace& t, const ClusterModel& c, const ThroughputTable& table,
                  std::uint64_t seed, const SimOptions& sim, const DuetPolicyOptions& po) {
  auto sm = std::make_shared<const Model>(m);
  auto o = make_duet_ordering(sm, po);
  auto p = make_duet_placement(sm, po);
  SimOptions so = sim;
  so.model.seed = seed;
  Simulator run(t, c, table, nullptr, so);
  run.set_policies(o.get(), p.get());
  return run.run().avg_jct_s;
}

// What --resume continues from (out + ".state").
struct State {
  int episodes = 0;
  double best = 0, initial = 0;
};
State read_state(const std::string& path) {
  State s;
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the trainer state (needed by --resume)");
  if (!(in >> s.episodes >> s.best >> s.initial))
    throw std::runtime_error(path + ":1: expected 'EPISODES BEST_JCT INITIAL_JCT'");
  return s;
}
void write_state(const std::string& path, const State& s) {
  std::ofstream out(path + ".tmp");
  out << s.episodes << " " << s.best << " " << s.initial << "\n";
  out.close();
  std::filesystem::rename(path + ".tmp", path);
}

int workers(const TrainOptions& o) { return o.workers ? o.workers->size() : 1; }

// Seeds of worker `rank`'s rollouts, windows and update subsets: worker 0's
// are those of a run alone; the others' lie far from them and each other's.
std::uint64_t worker_seed(std::uint64_t seed, int rank) {
  return seed + static_cast<std::uint64_t>(rank) * 0x9E3779B97F4A7C15ULL;
}

// The --preempt-* limits that are set, as options (none without preemption).
std::string preempt_limit_flags(const SimOptions::PreemptLimits& l) {
  return (l.min_run_s > 0 ? fmt::format(" --preempt-min-run-time {:g}", l.min_run_s) : "") +
         (l.job_interval_s > 0 ? fmt::format(" --preempt-job-interval {:g}", l.job_interval_s) : "") +
         (l.max_restarts > 0 ? fmt::format(" --preempt-max-restarts {}", l.max_restarts) : "") +
         (l.max_per_pass > 0 ? fmt::format(" --preempt-max-per-pass {}", l.max_per_pass) : "");
}

std::string provenance(const TrainOptions& o) {
  return "duet train --seed " + std::to_string(o.seed) + " --episodes " + std::to_string(o.episodes) +
         (workers(o) > 1 ? " --workers " + std::to_string(workers(o)) : "") + " --bc-episodes " +
         std::to_string(o.bc_episodes) +
         (o.agents == TrainAgents::both ? "" : std::string(" --agents ") + train_agents_name(o.agents)) +
         (o.messages ? "" : " --no-messages") + (o.preemption ? "" : " --no-preemption") +
         (!o.spread || (*o.spread == SpreadSets::fastest && o.init.empty())
              ? ""
              : std::string(" --spread-sets ") + spread_sets_name(*o.spread)) +
         (o.period_s == TrainOptions{}.period_s ? "" : fmt::format(" --period {:g}", o.period_s)) +
         (o.restart_overhead_s == TrainOptions{}.restart_overhead_s
              ? ""
              : fmt::format(" --restart-overhead {:g}", o.restart_overhead_s)) +
         (o.preemption ? preempt_limit_flags(o.preempt_limits) : "") + (o.init.empty() ? "" : " --init " + o.init) +
         (o.init.empty() ? preemptive_flags(o.preemptive) : "") +
         (o.max_update_passes >= 0 ? " --update-passes " + std::to_string(o.max_update_passes) : "") +
         (o.anchor > 0 ? fmt::format(" --anchor {:g}", o.anchor) : "");
}

// TrainOptions::rollout_byte_limit, 0 resolved from the host's memory.
std::size_t rollout_byte_limit(const TrainOptions& o) {
  if (o.rollout_byte_limit > 0) return o.rollout_byte_limit;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return std::size_t{8} << 30;
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) / 3 / static_cast<std::size_t>(workers(o));
}

// What rollouts and evaluations simulate with (the seed set per run).
SimOptions sim_options(const TrainOptions& o) {
  SimOptions so;
  so.model.ideal = o.ideal;
  so.model.restart_overhead_s = o.restart_overhead_s;
  so.period_s = o.period_s;
  so.preempt_limits = o.preempt_limits;
  so.drop_oversized = true;
  return so;
}

// What rollouts and evaluations run the agents with (the start model's
// spread rule, each job type's speeds from the table, as deployed).
DuetPolicyOptions agent_options(const TrainOptions& o, const Model& start, const ThroughputTable& table) {
  DuetPolicyOptions po;
  po.messages = o.messages;
  po.preemption = o.preemption;
  po.spread = start.spread;
  po.job_speeds = std::make_shared<const JobTypeSpeeds>(job_type_speeds(table));
  return po;
}

// --update-passes, -1 resolved for the start model (0: every pass).
int update_passes(const TrainOptions& o, const Model& start) {
  if (o.max_update_passes >= 0) return o.max_update_passes;
  return start.nets.ordering.preemptive && o.preemption ? kPreemptiveUpdatePasses : 0;
}

// One training run: the networks, the optimiser, the curve and the state
// file; with workers, this worker's part of it.
class TrainRun {
 public:
  TrainRun(const Trace& trace, const ClusterModel& cluster, const ThroughputTable& table, const PriceTable* prices,
           const TrainOptions& o)
      : trace_(trace),
        cluster_(cluster),
        table_(table),
        prices_(prices),
        o_(o),
        csv_(o.curve_csv.empty() ? o.out + ".csv" : o.curve_csv),
        state_path_(o.out + ".state"),
        base_(start_model()),
        update_passes_(update_passes(o, base_)),
        nets_(base_),
        opt_(nets_.params(o.agents), torch::optim::AdamOptions(o.lr)),
        eval_(window(trace, 0, o.window_jobs)),
        prov_(provenance(o)),
        agents_(agent_options(o, base_, table)),
        sim_(sim_options(o)),
        byte_limit_(rollout_byte_limit(o)),
        rank_(o.workers ? o.workers->rank() : 0) {
    // the same start everywhere, whatever each worker read
    broadcast_params(o_.workers, nets_.params(TrainAgents::both));
  }

  TrainReport run() {
    if (lead()) {
      if (!o_.resume) start_curve();
      curve_.open(csv_, std::ios::app);
      if (!curve_) throw std::runtime_error(csv_ + ": cannot write the learning curve");
    }
    rng_.seed(worker_seed(o_.seed * 7919 + static_cast<std::uint64_t>(st_.episodes), rank_));
    const bool resumed_past_bc = o_.resume && st_.episodes > 0;
    total_ = (resumed_past_bc ? 0 : o_.bc_episodes) + o_.episodes;
    if (!resumed_past_bc) behaviour_cloning();
    ppo();
    TrainReport rep;
    rep.initial_jct_s = st_.initial;
    rep.episodes_done = st_.episodes;
    rep.best_jct_s = st_.best;
    if (lead()) rep.final_jct_s = greedy_jct(load_model(o_.out), eval_, cluster_, table_, o_.seed, sim_, agents_);
    rep.wall_s = elapsed();
    return rep;
  }

 private:
  // The seeded initial model, the --init model, or (--resume) the last one
  // saved and its state.
  Model start_model() {
    NetConfig nc;
    nc.ordering.preemptive = o_.preemptive;
    Model m = o_.init.empty() ? make_initial_model(nc, GpHyper{}, o_.seed) : load_model(o_.init);
    if (o_.resume) {
      m = load_model(o_.out);
      st_ = read_state(state_path_);
    }
    if (o_.spread) m.spread = *o_.spread;  // kept in every model this run writes
    return m;
  }

  // A fresh run: the untrained start's evaluation, saved as the first checkpoint.
  void start_curve() {
    st_.initial = greedy_jct(base_, eval_, cluster_, table_, o_.seed, sim_, agents_);
    st_.best = st_.initial;
    std::ofstream(csv_) << "phase,episode,wall_s,rollout_jct_s,eval_jct_s,loss\n";
    save_model(export_model(nets_, base_, prov_ + " (untrained start)"), o_.out);
    write_state(state_path_, st_);
  }

  void behaviour_cloning() {
    for (int b = 0; b < o_.bc_episodes && !out_of_time(); ++b) {
      Trace w = pick_window();
      Episode e = rollout(nets_, base_, w, cluster_, table_, prices_, worker_seed(o_.seed + 1000 + b, rank_), sim_,
                          true, agents_, byte_limit_);
      const double reward = total_reward(e);  // (before the update uses the episode)
      const double loss = bc_update(nets_, opt_, e, base_.nets, o_, update_passes_,
                                    worker_seed(mix_seed(o_.seed, 0xbc, static_cast<std::uint64_t>(b)), rank_));
      checkpoint("bc", b, e.jct, loss);
      episode_done("bc", b + 1, o_.bc_episodes, reward, e, true);
    }
  }

  void ppo() {
    double ret_scale = 0;
    const int end = st_.episodes + o_.episodes;
    for (int ep = st_.episodes; ep < end && !out_of_time(); ++ep) {
      Trace w = pick_window();
      Episode e =
          rollout(nets_, base_, w, cluster_, table_, prices_,
                  worker_seed(o_.seed + 17 * static_cast<std::uint64_t>(ep), rank_), sim_, true, agents_, byte_limit_);
      const double reward = total_reward(e);
      const double loss = ppo_update(nets_, opt_, e, base_.nets, o_, update_passes_, ret_scale,
                                     worker_seed(mix_seed(o_.seed, 0x990, static_cast<std::uint64_t>(ep)), rank_));
      st_.episodes = ep + 1;
      const bool eval = (ep + 1) % std::max(1, o_.eval_every) == 0 || ep + 1 == end;
      if (eval) checkpoint("ppo", ep, e.jct, loss);
      episode_done("ppo", ep + 1, end, reward, e, eval);
    }
  }

  // Greedy evaluation on the fixed window; saves the model if it is the
  // best so far (or always, with keep_last). With workers, the curve has
  // their mean rollout JCT and loss, and the others go on meanwhile.
  void checkpoint(const char* phase, int episode, double rollout_jct, double loss) {
    if (workers(o_) > 1) {
      std::vector<double> v{rollout_jct, loss};
      o_.workers->sum(v);
      rollout_jct = v[0] / workers(o_);
      loss = v[1] / workers(o_);
    }
    if (!lead()) return;
    Model m = export_model(nets_, base_, prov_);
    const double jct = greedy_jct(m, eval_, cluster_, table_, o_.seed, sim_, agents_);
    curve_ << phase << "," << episode << "," << elapsed() << "," << rollout_jct << "," << jct << "," << loss << "\n";
    curve_.flush();
    last_eval_ = jct;
    if (jct < st_.best || o_.keep_last) save_model(m, o_.out);
    st_.best = std::min(st_.best, jct);
    write_state(state_path_, st_);
  }

  Trace pick_window() {
    if (trace_.jobs.size() <= o_.window_jobs) return trace_;
    std::uniform_int_distribution<size_t> u(0, trace_.jobs.size() - o_.window_jobs);
    return window(trace_, u(rng_), o_.window_jobs);
  }
  static double total_reward(const Episode& e) {
    double r = 0;
    for (const Pass& p : e.passes) r += p.reward;
    return r;
  }
  void episode_done(const char* phase, int episode, int phase_total, double reward, const Episode& e, bool evaluated) {
    ++done_;
    if (o_.progress) o_.progress(static_cast<double>(done_) / total_);
    if (!o_.on_episode || !lead()) return;
    TrainProgress p;
    p.phase = phase;
    p.done = done_;
    p.total = total_;
    p.episode = episode;
    p.phase_total = phase_total;
    p.reward = reward;
    p.rollout_jct_s = e.jct;
    p.preemptions = e.preemptions;
    p.eval_jct_s = last_eval_ > 0 ? last_eval_ : st_.initial;
    p.initial_jct_s = st_.initial;
    p.evaluated = evaluated;
    p.elapsed_s = elapsed();
    o_.on_episode(p);
  }
  double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }
  // With workers, worker 0's clock decides for all (they must stop together).
  bool out_of_time() const {
    if (o_.hours <= 0) return false;
    const bool late = lead() && elapsed() > o_.hours * 3600;
    return workers(o_) > 1 ? o_.workers->any(late) : late;
  }
  bool lead() const { return rank_ == 0; }

  const std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  const Trace& trace_;
  const ClusterModel& cluster_;
  const ThroughputTable& table_;
  const PriceTable* prices_;
  const TrainOptions& o_;
  const std::string csv_, state_path_;
  State st_;
  Model base_;
  const int update_passes_;  // per update epoch, at most (0: all)
  Nets nets_;
  torch::optim::Adam opt_;
  const Trace eval_;  // the first window of the trace, evaluated with a fixed seed
  const std::string prov_;
  const DuetPolicyOptions agents_;  // messages and spread rule of rollouts and evaluations
  const SimOptions sim_;            // what they simulate with
  const std::size_t byte_limit_;    // of one rollout's record (rollout.h)
  std::ofstream curve_;
  std::mt19937_64 rng_;
  int total_ = 0, done_ = 0;
  double last_eval_ = 0;  // the latest greedy evaluation of this run (0: none yet)
  const int rank_;
};

}  // namespace

TrainAgents parse_train_agents(const std::string& s) {
  if (s == "both") return TrainAgents::both;
  if (s == "order") return TrainAgents::order;
  if (s == "place") return TrainAgents::place;
  throw std::invalid_argument("--agents: expected both, order or place, got '" + s + "'");
}
const char* train_agents_name(TrainAgents a) {
  return a == TrainAgents::order ? "order" : a == TrainAgents::place ? "place" : "both";
}

TrainReport train(const Trace& trace, const ClusterModel& cluster, const ThroughputTable& table,
                  const PriceTable* prices, const TrainOptions& o) {
  use_one_torch_thread();
  if (trace.jobs.empty()) throw std::runtime_error(trace.source + ": the trace has no jobs to train on");
  torch::manual_seed(o.seed);
  return TrainRun(trace, cluster, table, prices, o).run();
}

}  // namespace duet::learn
