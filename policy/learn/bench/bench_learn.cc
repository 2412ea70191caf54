// bench_learn: inference cost of the learned scheduler's building blocks on
// one thread: scoring N pending jobs with the ordering network (the agent's
// kernels, and side by side the same network as a LibTorch module), and
// ranking M machines for one job (GP statistics + placement head + sort).
// Also the cost of one online GP update and of an exact GP refresh.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "policy/learn/agents/dense_kernel.h"
#include "policy/learn/agents/ordering_agent.h"
#include "policy/learn/agents/placement_features.h"
#include "policy/learn/agents/placement_head.h"
#include "policy/learn/gp/gp_likelihood.h"
#include "policy/learn/gp/performance_gp.h"
#include "policy/learn/nets/model_init.h"
#include "policy/learn/nets/nets_torch.h"

using namespace duet::learn;
using Clock = std::chrono::steady_clock;

namespace {

struct Stats {
  double median, p90, min;
};

template <typename F>
Stats time_us(int reps, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto a = Clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t[std::min(t.size() - 1, t.size() * 9 / 10)], t[0]};
}

struct Options {
  std::size_t jobs = 10000, machines = 2000, window = 256;
  std::uint32_t types = 8;
  int reps = 50;
  std::uint64_t seed = 1;
};

struct OrderingCost {
  Stats ordering, scores_only, portable, torch;
};

// Scoring N jobs as deployed (scores and every job's message to the placement
// agent), with the portable kernel, and the same network through LibTorch
// (what training runs), inputs already normalised.
OrderingCost bench_ordering(const Options& o, const Model& model, std::mt19937_64& rng) {
  const auto& cfg = model.nets;
  std::normal_distribution<float> g(0.0f, 1.0f);
  OrderingAgent agent(model);
  std::vector<float> job_rows(o.jobs * cfg.ordering.job_features), cluster(cfg.ordering.cluster_features), scores;
  std::vector<float> pmsg(cfg.placement.placement_message, 0.1f), msgs;
  for (float& x : job_rows) x = g(rng);
  for (float& x : cluster) x = g(rng);
  OrderingCost c;
  agent.score_with_messages(job_rows, o.jobs, cluster, pmsg, scores, msgs);  // warm-up
  c.ordering = time_us(o.reps, [&] { agent.score_with_messages(job_rows, o.jobs, cluster, pmsg, scores, msgs); });
  c.scores_only = time_us(o.reps, [&] { agent.score(job_rows, o.jobs, cluster, pmsg, scores); });
  OrderingAgent portable(model, OrderingAgent::Kernel::kPortable);
  c.portable = time_us(o.reps, [&] { portable.score_with_messages(job_rows, o.jobs, cluster, pmsg, scores, msgs); });
  use_one_torch_thread();
  OrderingNet net(cfg);
  import_weights(*net, "ordering.", model.weights);
  auto torch_pass = [&] {
    c10::InferenceMode guard;
    auto x =
        torch::from_blob(job_rows.data(), {static_cast<long>(o.jobs), static_cast<long>(cfg.ordering.job_features)});
    auto e = net->embed(x);
    auto ctx = OrderingNetImpl::squeeze(e);
    auto s = net->scores(e, ctx, torch::from_blob(cluster.data(), {static_cast<long>(cluster.size())}),
                         torch::from_blob(pmsg.data(), {static_cast<long>(pmsg.size())}));
    auto m = net->messages(e, ctx);
    return s.sum().item<float>() + m.sum().item<float>();
  };
  torch_pass();
  c.torch = time_us(o.reps, torch_pass);
  return c;
}

struct GpCost {
  double build_ms = 0, update_us = 0;
  Stats refresh, lml;
  std::size_t refresh_every = 0;
};

// The GP over M machines (6 GPU types, 40 machines per rack): build, steady
// online updates once the window is full, an exact refresh, and one likelihood
// evaluation as hyper-parameter fitting does it (400 observations).
std::unique_ptr<PerformanceGp> bench_gp(const Options& o, std::mt19937_64& rng, GpCost& c) {
  std::vector<MachineDesc> descs;
  const char* gpu[] = {"V100", "P100", "T4", "A100", "K80", "MISC"};
  for (std::size_t i = 0; i < o.machines; ++i)
    descs.push_back({"node" + std::to_string(i), gpu[rng() % 6], "rack" + std::to_string(i / 40), {}});
  PerformanceGp::Options opt;
  opt.window = o.window;
  c.refresh_every = opt.refresh_every;
  auto t0 = Clock::now();
  auto gp = std::make_unique<PerformanceGp>(descs, o.types, GpHyper{}, opt);
  c.build_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  std::normal_distribution<double> resid(0.0, 0.05);
  auto observe = [&] {
    gp->observe(
        {static_cast<std::uint32_t>(rng() % o.machines), static_cast<std::uint32_t>(rng() % o.types), resid(rng)});
  };
  for (std::size_t i = 0; i < o.window; ++i) observe();
  const int updates = std::max(o.reps, 100);
  t0 = Clock::now();
  for (int i = 0; i < updates; ++i) observe();
  c.update_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / updates;
  c.refresh = time_us(std::max(3, o.reps / 10), [&] { gp->refresh(); });
  std::vector<GpObservation> fit_obs;
  for (int i = 0; i < 400; ++i)
    fit_obs.push_back({static_cast<std::uint32_t>(rng() % o.machines),
                       static_cast<std::uint32_t>(rng() % (o.types + 1)), resid(rng)});
  c.lml =
      time_us(std::max(3, o.reps / 10), [&] { (void)log_marginal_likelihood(*gp->kernel(), gp->hyper(), fit_obs); });
  return gp;
}

struct PlacementCost {
  Stats place, message;
};

// Ranking all M machines for one 4-GPU job, and the placement agent's message
// over every machine (once per ordering pass).
PlacementCost bench_placement(const Options& o, const Model& model, const PerformanceGp& gp, std::mt19937_64& rng) {
  PlacementHead head(model);
  std::vector<MachineState> state(o.machines);
  for (std::size_t i = 0; i < o.machines; ++i)
    state[i] = {static_cast<std::uint32_t>(i),
                static_cast<std::uint16_t>(rng() % 9),
                8,
                static_cast<std::uint16_t>(rng() % 3),
                1.0f + 0.1f * static_cast<float>(rng() % 10),
                static_cast<float>(rng() % 2)};
  std::vector<float> rows, mscores, omsg(model.nets.ordering.order_message, 0.1f), pm;
  std::vector<std::uint32_t> order;
  PlacementJob job{3, 4};
  auto rank = [&] {
    placement_features(gp, job, state, rows);
    head.score(rows, o.machines, omsg, mscores);
    PlacementHead::rank(mscores, order);
  };
  PlacementJob generic{o.types, 1};
  auto message = [&] {
    placement_features(gp, generic, state, rows);
    head.message(rows, o.machines, pm);
  };
  PlacementCost c;
  rank();
  c.place = time_us(o.reps * 10, rank);
  message();
  c.message = time_us(o.reps * 10, message);
  return c;
}

void print_report(const Options& o, const OrderingCost& ord, const GpCost& gp, const PlacementCost& pl) {
  std::printf("bench_learn (one thread; %d reps)\n", o.reps);
  std::printf("  ordering: score %zu jobs           median %8.3f ms  p90 %8.3f ms  min %8.3f ms  (target <= 5 ms)\n",
              o.jobs, ord.ordering.median / 1e3, ord.ordering.p90 / 1e3, ord.ordering.min / 1e3);
  std::printf("    of which messages to placement      %8.3f ms  (scores alone: median %.3f ms)\n",
              (ord.ordering.median - ord.scores_only.median) / 1e3, ord.scores_only.median / 1e3);
  std::printf("    kernel: %s; portable kernel median %.3f ms; LibTorch module median %.3f ms (%.1fx the agent)\n",
              kernel::have_avx2() ? "AVX2+FMA" : "portable (no AVX2+FMA on this CPU)", ord.portable.median / 1e3,
              ord.torch.median / 1e3, ord.torch.median / ord.ordering.median);
  std::printf("  placement: rank %zu machines        median %8.3f ms  p90 %8.3f ms  min %8.3f ms  (target <= 0.5 ms)\n",
              o.machines, pl.place.median / 1e3, pl.place.p90 / 1e3, pl.place.min / 1e3);
  std::printf("  placement: message over %zu machines median %8.3f ms  (once per ordering pass)\n", o.machines,
              pl.message.median / 1e3);
  std::printf("  GP: build %zu machines x %u types   %8.1f ms\n", o.machines, o.types + 1, gp.build_ms);
  std::printf(
      "  GP: online update, window %zu        %8.3f ms per observation (add + drop oldest, refresh every %zu)\n",
      o.window, gp.update_us / 1e3, gp.refresh_every);
  std::printf("  GP: exact refresh, window %zu        median %8.1f ms\n", o.window, gp.refresh.median / 1e3);
  std::printf("  GP: log marginal likelihood, 400 obs  median %8.1f ms (one fitting evaluation)\n",
              gp.lml.median / 1e3);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench_learn: one-thread inference cost of the ordering network and the RWGP placement agent"};
  Options o;
  app.add_option("--jobs", o.jobs, "pending jobs to score")->capture_default_str();
  app.add_option("--machines", o.machines, "machines to rank for one job")->capture_default_str();
  app.add_option("--types", o.types, "job types known to the GP")->capture_default_str();
  app.add_option("--window", o.window, "GP observation window")->capture_default_str();
  app.add_option("--reps", o.reps, "repetitions per measurement")->capture_default_str()->check(CLI::Range(1, 100000));
  app.add_option("--seed", o.seed, "random seed")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  // One generator drawn in the same order as before: ordering inputs, GP, placement.
  std::mt19937_64 rng(o.seed);
  Model model = make_initial_model(NetConfig{}, GpHyper{}, o.seed);
  const OrderingCost ord = bench_ordering(o, model, rng);
  GpCost gpc;
  const auto gp = bench_gp(o, rng, gpc);
  const PlacementCost pl = bench_placement(o, model, *gp, rng);
  print_report(o, ord, gpc, pl);
  return 0;
}
