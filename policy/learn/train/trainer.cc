// Joint MAPPO-style trainer (see trainer.h and duet-train(1)).
#include "policy/learn/train/trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <unordered_map>

#include "policy/learn/duet_policy.h"
#include "policy/learn/features.h"
#include "policy/learn/model_file.h"
#include "policy/learn/model_init.h"
#include "policy/learn/nets_torch.h"
#include "policy/learn/performance_gp.h"
#include "policy/learn/placement_features.h"
#include "policy/sim/simulator.h"

namespace duet::learn {
namespace {

// Positions of the ranked prefix scored by the ordering distribution: only
// the jobs up to the last one that started matter; capped for cost.
constexpr int kMaxPrefix = 32;

torch::Tensor rows_tensor(const std::vector<float>& rows, std::int64_t n, std::int64_t f) {
  return torch::from_blob(const_cast<float*>(rows.data()), {n, f}, torch::kFloat32).clone();
}

// log P(perm[0..L)) under Plackett-Luce with logits s: sum_i s_pi(i) - logsumexp(s over the rest).
torch::Tensor pl_logp(const torch::Tensor& s, const torch::Tensor& perm, std::int64_t L) {
  auto sp = s.index_select(0, perm);                   // scores in ranked order
  auto tail = sp.flip(0).logcumsumexp(0).flip(0);      // logsumexp of positions i..n-1
  return (sp.narrow(0, 0, L) - tail.narrow(0, 0, L)).sum();
}

// One scheduling pass as the actors saw it.
struct Pass {
  double t = 0;
  torch::Tensor jobs, cluster, machines;  // critic + ordering inputs
  torch::Tensor prior;                    // the ordering prior under the network's score (add_order_prior)
  torch::Tensor perm;                     // sampled order (int64)
  std::vector<std::int64_t> ids;          // job ids in input order
  std::unordered_map<std::int64_t, int> pos;  // job id -> position in perm
  int prefix = 0;                         // L (0: nothing started)
  float old_logp = 0;
  std::vector<int> places;                // PlaceStep indices
  torch::Tensor order_msgs;               // [n, order_message] as sent in the rollout
  std::unordered_map<std::int64_t, std::int64_t> row;  // job id -> input row
  double reward = 0, value = 0, adv = 0, ret = 0;
};
struct PlaceStep {
  torch::Tensor rows, prior;  // [k, 9] candidates, [k] risk-aware prior
  std::int64_t job_row = -1;  // the job's row in its pass (its message); -1: zeros
  std::int64_t choice = 0;
  int bc_label = 0;           // best-fit candidate (warm start)
  float old_logp = 0;
};

bool trains_order(TrainAgents a) { return a != TrainAgents::place; }
bool trains_place(TrainAgents a) { return a != TrainAgents::order; }

struct Nets {
  OrderingNet ord;
  PlacementNet plc;
  CriticNet critic;
  explicit Nets(const NetConfig& c) : ord(c), plc(c), critic(c) {}
  // What the optimiser updates: the trained actors and the critic.
  std::vector<torch::Tensor> params(TrainAgents a) {
    std::vector<torch::Tensor> p;
    if (trains_order(a))
      for (auto& x : ord->parameters()) p.push_back(x);
    if (trains_place(a))
      for (auto& x : plc->parameters()) p.push_back(x);
    for (auto& x : critic->parameters()) p.push_back(x);
    return p;
  }
};

// One ordering pass as deployed (DuetOrdering): the placement head's message
// about the machines goes into the ordering scores, on top of the prior;
// the same pass yields each job's message to the placement head. Gradients
// flow through both messages, which is how the agents learn to talk.
struct OrderOut {
  torch::Tensor scores;  // [n] logits (prior included)
  torch::Tensor msgs;    // [n, order_message]; zeros without messages
};
OrderOut order_pass(Nets& n, const NetConfig& nc, const torch::Tensor& jobs, const torch::Tensor& cluster,
                    const torch::Tensor& machines, const torch::Tensor& prior, bool messages) {
  auto e = n.ord->embed(jobs);
  auto ctx = OrderingNetImpl::squeeze(e);
  auto pm = messages ? n.plc->message(machines) : torch::zeros({nc.placement.placement_message});
  OrderOut o;
  o.scores = n.ord->scores(e, ctx, cluster, pm) + prior;
  o.msgs = messages ? n.ord->messages(e, ctx) : torch::zeros({jobs.size(0), static_cast<std::int64_t>(nc.ordering.order_message)});
  return o;
}
torch::Tensor job_msg(const torch::Tensor& msgs, std::int64_t row, const NetConfig& nc) {
  return row >= 0 ? msgs[row] : torch::zeros({nc.ordering.order_message});
}

// Shared state of both actors during one rollout.
struct Rollout {
  Nets* nets = nullptr;
  const Model* base = nullptr;
  DuetPolicyOptions popt;
  std::mt19937_64 rng;
  bool sample = true;
  bool messages = true;
  std::vector<Pass> passes;
  std::vector<PlaceStep> steps;
  JobHistory history;
  std::unique_ptr<PerformanceGp> gp;
  std::unordered_map<std::int64_t, std::pair<Placement, double>> placed;
  std::unordered_map<std::string, std::uint32_t> type_index;

  double gumbel() {
    std::uniform_real_distribution<double> u(1e-12, 1.0);
    return -std::log(-std::log(u(rng)));
  }
  std::uint32_t job_type(std::string_view n) const {
    auto it = type_index.find(std::string(n));
    return it != type_index.end() ? it->second : static_cast<std::uint32_t>(base->job_types.size());
  }
  void ensure_gp(const ClusterView& c) {
    if (gp && gp->num_machines() == c.machines.size()) return;
    std::vector<MachineDesc> d;
    for (const MachineView& m : c.machines)
      d.push_back(MachineDesc{std::string(m.name),
                              static_cast<size_t>(m.gpu_type) < c.gpu_types.size() ? c.gpu_types[m.gpu_type] : "?",
                              "r" + std::to_string(m.rack), {std::log(std::max(1e-3, m.speed))}});
    gp = std::make_unique<PerformanceGp>(std::move(d), static_cast<std::uint32_t>(base->job_types.size()), base->gp);
  }
  // Feature rows of machines idx for job pj (locality: same rack as `rack`).
  void machine_rows(const ClusterView& c, const std::vector<std::uint32_t>& idx, const PlacementJob& pj, int rack,
                    std::vector<float>& rows) {
    std::vector<MachineState> st(idx.size());
    for (size_t k = 0; k < idx.size(); ++k) {
      const MachineView& mv = c.machines[idx[k]];
      st[k] = MachineState{idx[k], static_cast<std::uint16_t>(std::clamp(mv.free_gpus, 0, 65535)),
                           static_cast<std::uint16_t>(std::clamp(mv.total_gpus, 1, 65535)),
                           static_cast<std::uint16_t>(std::clamp(mv.jobs, 0, 65535)), static_cast<float>(mv.speed),
                           rack >= 0 && mv.rack == rack ? 1.f : 0.f};
    }
    placement_features(*gp, pj, st, rows);
  }
};

class TrainOrdering : public OrderingPolicy {
 public:
  explicit TrainOrdering(Rollout& r) : r_(r) {}
  std::string name() const override { return "duet-train"; }
  void rank(std::span<const JobView> jobs, const ClusterView& c, std::vector<size_t>& order) override {
    order.clear();
    if (jobs.empty()) return;
    torch::NoGradGuard ng;
    r_.ensure_gp(c);
    const ClusterSummary s = summarise(c);
    std::vector<float> rows, cl, mrows;
    job_feature_rows(jobs, s, r_.history, rows);
    cluster_features(c, jobs, s, cl);
    Pass p;
    p.t = c.now_s;
    p.jobs = rows_tensor(rows, static_cast<std::int64_t>(jobs.size()), kJobFeatures);
    p.cluster = torch::from_blob(cl.data(), {static_cast<std::int64_t>(kClusterFeatures)}, torch::kFloat32).clone();
    std::vector<std::uint32_t> all(c.machines.size());
    std::iota(all.begin(), all.end(), 0u);
    r_.machine_rows(c, all, PlacementJob{static_cast<std::uint32_t>(r_.base->job_types.size()), 1}, -1, mrows);
    p.machines = rows_tensor(mrows, static_cast<std::int64_t>(all.size()), kPlacementFeatures);
    const auto& nc = r_.base->nets;
    // Act as deployed (DuetOrdering, priority/duet): the network's score on
    // top of the QSSF-like prior, so the network learns that residual.
    p.prior = p.jobs.select(1, 11) * static_cast<float>(-r_.popt.order_prior_weight);
    OrderOut out = order_pass(*r_.nets, nc, p.jobs, p.cluster, p.machines, p.prior, r_.messages);
    auto& scores = out.scores;
    p.order_msgs = out.msgs;
    std::vector<double> key(jobs.size());
    auto acc = scores.accessor<float, 1>();
    for (size_t i = 0; i < jobs.size(); ++i) key[i] = acc[static_cast<std::int64_t>(i)] + (r_.sample ? r_.gumbel() : 0.0);
    order.resize(jobs.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key[a] > key[b]; });
    std::vector<std::int64_t> perm(order.begin(), order.end());
    p.perm = torch::tensor(perm, torch::kInt64);
    for (size_t i = 0; i < jobs.size(); ++i) {
      p.ids.push_back(jobs[i].id);
      p.row[jobs[i].id] = static_cast<std::int64_t>(i);
    }
    for (size_t k = 0; k < order.size(); ++k) p.pos[jobs[order[k]].id] = static_cast<int>(k);
    r_.passes.push_back(std::move(p));
  }
  void on_finish(const JobView& job, double run_s) override { r_.history.on_finish(job, run_s); }

 private:
  Rollout& r_;
};

class TrainPlacement : public PlacementPolicy {
 public:
  explicit TrainPlacement(Rollout& r) : r_(r) {}
  std::string name() const override { return "duet-train"; }
  std::optional<Placement> place(const JobView& job, const ClusterView& c) override {
    if (job.gpus <= 0 || r_.passes.empty()) return std::nullopt;
    torch::NoGradGuard ng;
    r_.ensure_gp(c);
    std::vector<std::uint32_t> cand, fit;
    int free_allowed = 0;
    for (size_t i = 0; i < c.machines.size(); ++i) {
      const MachineView& mv = c.machines[i];
      if (mv.free_gpus <= 0 || !type_allowed(job, mv)) continue;
      cand.push_back(static_cast<std::uint32_t>(i));
      free_allowed += mv.free_gpus;
      if (mv.free_gpus >= job.gpus) fit.push_back(static_cast<std::uint32_t>(i));
    }
    if (free_allowed < job.gpus) return std::nullopt;
    const PlacementJob pj{r_.job_type(job.job_type), static_cast<std::uint16_t>(std::min(job.gpus, 65535))};
    // The sampled choice: among machines that hold the whole job if any,
    // else the first machine of a machine set (as DuetPlacement does).
    const std::vector<std::uint32_t>& choose_from = fit.empty() ? cand : fit;
    std::vector<float> rows;
    r_.machine_rows(c, choose_from, pj, -1, rows);
    const auto k = static_cast<std::int64_t>(choose_from.size());
    PlaceStep st;
    st.rows = rows_tensor(rows, k, kPlacementFeatures);
    st.prior = (st.rows.select(1, 3) - r_.popt.risk_aversion * st.rows.select(1, 1)) * r_.popt.prior_weight;
    const auto& nc = r_.base->nets;
    const Pass& cur = r_.passes.back();
    if (auto it = cur.row.find(job.id); it != cur.row.end()) st.job_row = it->second;
    const auto omsg = job_msg(cur.order_msgs, st.job_row, nc);
    auto logits = r_.nets->plc->forward(st.rows, omsg) + st.prior;
    auto acc = logits.accessor<float, 1>();
    std::int64_t best = 0;
    double best_key = -1e300;
    float bf = 1e30f;
    for (std::int64_t i = 0; i < k; ++i) {
      const double key = acc[i] + (r_.sample ? r_.gumbel() : 0.0);
      if (key > best_key) best_key = key, best = i;
      const float left = rows[static_cast<size_t>(i) * kPlacementFeatures + 6];  // (free - asked) / total
      const float score = left >= 0 ? left : 10 - rows[static_cast<size_t>(i) * kPlacementFeatures + 5];
      if (score < bf) bf = score, st.bc_label = static_cast<int>(i);
    }
    st.choice = best;
    st.old_logp = torch::log_softmax(logits, 0)[best].item<float>();
    const std::uint32_t first = choose_from[static_cast<size_t>(best)];
    Placement p;
    if (!fit.empty()) {
      p.push_back({static_cast<int>(first), job.gpus});
    } else {
      // the rest of the machine set: greedy by score with locality to `first`
      r_.machine_rows(c, cand, pj, c.machines[first].rack, rows);
      auto t = rows_tensor(rows, static_cast<std::int64_t>(cand.size()), kPlacementFeatures);
      auto sc = r_.nets->plc->forward(t, omsg) +
                (t.select(1, 3) - r_.popt.risk_aversion * t.select(1, 1)) * r_.popt.prior_weight;
      auto sa = sc.accessor<float, 1>();
      std::vector<size_t> ord(cand.size());
      std::iota(ord.begin(), ord.end(), size_t{0});
      std::stable_sort(ord.begin(), ord.end(), [&](size_t a, size_t b) {
        if ((cand[a] == first) != (cand[b] == first)) return cand[a] == first;
        return sa[static_cast<std::int64_t>(a)] > sa[static_cast<std::int64_t>(b)];
      });
      int need = job.gpus;
      for (size_t i : ord) {
        const int take = std::min(need, c.machines[cand[i]].free_gpus);
        p.push_back({static_cast<int>(cand[i]), take});
        need -= take;
        if (need == 0) break;
      }
    }
    Pass& pass = r_.passes.back();
    if (auto it = pass.pos.find(job.id); it != pass.pos.end()) pass.prefix = std::max(pass.prefix, it->second + 1);
    pass.places.push_back(static_cast<int>(r_.steps.size()));
    r_.steps.push_back(std::move(st));
    double expected = 1e300;
    for (const auto& part : p) expected = std::min(expected, c.machines[part.machine].speed);
    r_.placed[job.id] = {p, expected};
    return p;
  }
  void on_finish(const JobView& job, double run_s) override {
    auto it = r_.placed.find(job.id);
    if (it == r_.placed.end()) return;
    auto [where, expected] = std::move(it->second);
    r_.placed.erase(it);
    if (!r_.gp || !(job.oracle_duration_s > 0) || !(run_s > 0) || std::abs(job.run_s - run_s) > 1e-6 * run_s) return;
    const double v = std::clamp(std::log(job.oracle_duration_s / run_s / expected), -2.0, 2.0);
    for (const auto& part : where)
      gp_observe(static_cast<std::uint32_t>(part.machine), r_.job_type(job.job_type), v);
  }

 private:
  void gp_observe(std::uint32_t m, std::uint32_t t, double v) {
    if (m < r_.gp->num_machines()) r_.gp->observe(GpObservation{m, t, v});
  }
  Rollout& r_;
};

// Finish times for the reward: N(t) = jobs submitted and not finished.
struct Finishes : SimObserver {
  std::vector<std::pair<double, int>> events;  // (time, +1 submit / -1 finish)
  void on_finish(const JobView& j, double now) override {
    events.emplace_back(j.submit_s, +1);
    events.emplace_back(now, -1);
  }
};

// Rewards per pass: -(integral of N(t) over [t_k, t_{k+1})) in job-hours.
void assign_rewards(std::vector<Pass>& passes, Finishes& f) {
  std::sort(f.events.begin(), f.events.end());
  std::vector<double> q;
  for (const Pass& p : passes) q.push_back(p.t);
  q.push_back(f.events.empty() ? 0 : f.events.back().first);
  // F(t) = integral_0^t N, evaluated at the (non-decreasing) query times
  std::vector<double> F(q.size());
  double acc = 0, last = 0;
  int n = 0;
  size_t e = 0;
  for (size_t i = 0; i < q.size(); ++i) {
    while (e < f.events.size() && f.events[e].first <= q[i]) {
      acc += n * (f.events[e].first - last);
      last = f.events[e].first;
      n += f.events[e].second;
      ++e;
    }
    F[i] = acc + n * (q[i] - last);
  }
  for (size_t i = 0; i < passes.size(); ++i) passes[i].reward = -(F[i + 1] - F[i]) / 3600.0;
}

Trace window(const Trace& t, size_t start, size_t n) {
  Trace w;
  w.source = t.source;
  const size_t end = std::min(t.jobs.size(), start + n);
  w.jobs.assign(t.jobs.begin() + static_cast<std::ptrdiff_t>(start), t.jobs.begin() + static_cast<std::ptrdiff_t>(end));
  const double t0 = w.jobs.empty() ? 0 : w.jobs.front().submit;
  for (auto& j : w.jobs) j.submit -= t0;
  return w;
}

Model export_model(Nets& n, const Model& base, const std::string& provenance) {
  Model m = base;
  m.weights = export_weights(*n.ord, "ordering.");
  for (auto& a : export_weights(*n.plc, "placement.")) m.weights.push_back(std::move(a));
  for (auto& a : export_weights(*n.critic, "critic.")) m.weights.push_back(std::move(a));
  m.provenance = provenance;
  return m;
}

double greedy_jct(const Model& m, const Trace& t, const ClusterModel& c, const ThroughputTable& table,
                  std::uint64_t seed, bool ideal, bool messages) {
  auto sm = std::make_shared<const Model>(m);
  DuetPolicyOptions po;
  po.messages = messages;
  auto o = make_duet_ordering(sm, po);
  auto p = make_duet_placement(sm);
  SimOptions so;
  so.model.seed = seed;
  so.model.ideal = ideal;
  so.drop_oversized = true;
  Simulator sim(t, c, table, nullptr, so);
  sim.set_policies(o.get(), p.get());
  return sim.run().avg_jct_s;
}

struct Episode {
  std::vector<Pass> passes;
  std::vector<PlaceStep> steps;
  double jct = 0, fees = 0;
};

Episode rollout(Nets& nets, const Model& base, const Trace& t, const ClusterModel& c, const ThroughputTable& table,
                const PriceTable* prices, std::uint64_t seed, bool ideal, bool sample, bool messages) {
  Rollout r;
  r.nets = &nets;
  r.messages = messages;
  r.base = &base;
  r.rng.seed(seed);
  r.sample = sample;
  for (size_t i = 0; i < base.job_types.size(); ++i) r.type_index[base.job_types[i]] = static_cast<std::uint32_t>(i);
  TrainOrdering o(r);
  TrainPlacement p(r);
  Finishes f;
  SimOptions so;
  so.model.seed = seed;
  so.model.ideal = ideal;
  so.drop_oversized = true;
  Simulator sim(t, c, table, prices, so);
  sim.set_policies(&o, &p);
  sim.set_observer(&f);
  SimResult res = sim.run();
  assign_rewards(r.passes, f);
  Episode e;
  e.passes = std::move(r.passes);
  e.steps = std::move(r.steps);
  e.jct = res.avg_jct_s;
  e.fees = res.fees_usd;
  return e;
}

// Behaviour cloning towards the heuristic labels on recorded states.
double bc_update(Nets& n, torch::optim::Optimizer& opt, const Episode& e, const NetConfig& nc, int epochs,
                 TrainAgents agents, bool messages) {
  double last = 0;
  for (int ep = 0; ep < epochs; ++ep) {
    opt.zero_grad();
    torch::Tensor loss = torch::zeros({});
    int terms = 0;
    for (const Pass& p : e.passes) {
      const std::int64_t njobs = p.jobs.size(0);
      const bool order_term = njobs >= 2 && trains_order(agents);
      if (!order_term && (p.places.empty() || !trains_place(agents))) continue;
      OrderOut out = order_pass(n, nc, p.jobs, p.cluster, p.machines, p.prior, messages);
      if (order_term) {
        // target order: shortest predicted remaining GPU-time (feature 11) first
        auto target = p.jobs.select(1, 11).argsort(0, false);
        loss = loss - pl_logp(out.scores, target, std::min<std::int64_t>(njobs, 8));
        ++terms;
      }
      if (trains_place(agents))
        for (int si : p.places) {
          const PlaceStep& st = e.steps[static_cast<size_t>(si)];
          if (st.rows.size(0) < 2) continue;
          auto logits = n.plc->forward(st.rows, job_msg(out.msgs, st.job_row, nc)) + st.prior;
          loss = loss - torch::log_softmax(logits, 0)[st.bc_label];
          ++terms;
        }
    }
    if (terms == 0) return 0;
    loss = loss / terms;
    loss.backward();
    torch::nn::utils::clip_grad_norm_(n.params(agents), 1.0);
    opt.step();
    last = loss.item<double>();
  }
  return last;
}

double ppo_update(Nets& n, torch::optim::Optimizer& opt, Episode& e, const NetConfig& nc, const TrainOptions& o,
                  double& ret_scale) {
  auto& P = e.passes;
  if (P.empty()) return 0;
  {
    torch::NoGradGuard ng;
    for (Pass& p : P) {
      p.value = n.critic->forward(p.jobs, p.machines, p.cluster).item<double>() * ret_scale;
      if (p.prefix > 0 && trains_order(o.agents)) {
        auto s = order_pass(n, nc, p.jobs, p.cluster, p.machines, p.prior, o.messages).scores;
        p.prefix = std::min(p.prefix, kMaxPrefix);
        p.old_logp = pl_logp(s, p.perm, p.prefix).item<float>();
      }
    }
  }
  // GAE over passes (terminal after the last; fees at the end)
  P.back().reward -= o.fee_lambda * e.fees;
  double gae = 0;
  for (size_t i = P.size(); i-- > 0;) {
    const double next = i + 1 < P.size() ? P[i + 1].value : 0.0;
    const double delta = P[i].reward + o.gamma * next - P[i].value;
    gae = delta + o.gamma * o.gae_lambda * gae;
    P[i].adv = gae;
    P[i].ret = gae + P[i].value;
  }
  double mean = 0, sq = 0;
  for (const Pass& p : P) mean += p.adv;
  mean /= P.size();
  for (const Pass& p : P) sq += (p.adv - mean) * (p.adv - mean);
  const double sd = std::sqrt(sq / P.size()) + 1e-8;
  if (ret_scale <= 0) {
    double rs = 0;
    for (const Pass& p : P) rs += p.ret * p.ret;
    ret_scale = std::max(1e-3, std::sqrt(rs / P.size()));
  }
  double last = 0;
  for (int ep = 0; ep < o.ppo_epochs; ++ep) {
    opt.zero_grad();
    torch::Tensor pol = torch::zeros({}), val = torch::zeros({}), ent = torch::zeros({});
    int terms = 0;
    for (const Pass& p : P) {
      const double a = (p.adv - mean) / sd;
      auto clipped = [&](const torch::Tensor& logp, float old) {
        auto ratio = (logp - old).exp();
        return -torch::min(ratio * a, ratio.clamp(1 - o.clip, 1 + o.clip) * a);
      };
      auto v = n.critic->forward(p.jobs, p.machines, p.cluster);
      val = val + (v - p.ret / ret_scale).pow(2);
      const bool order_term = p.prefix > 0 && trains_order(o.agents);
      const bool place_terms = trains_place(o.agents) && !p.places.empty();
      OrderOut out;
      if (order_term || place_terms) out = order_pass(n, nc, p.jobs, p.cluster, p.machines, p.prior, o.messages);
      if (order_term) {
        pol = pol + clipped(pl_logp(out.scores, p.perm, p.prefix), p.old_logp);
        auto lp = torch::log_softmax(out.scores, 0);
        ent = ent - (lp.exp() * lp).sum();
      }
      if (place_terms)
        for (int si : p.places) {
          const PlaceStep& st = e.steps[static_cast<size_t>(si)];
          auto lp = torch::log_softmax(n.plc->forward(st.rows, job_msg(out.msgs, st.job_row, nc)) + st.prior, 0);
          pol = pol + clipped(lp[st.choice], st.old_logp);
          ent = ent - (lp.exp() * lp).sum();
        }
      ++terms;
    }
    auto loss = (pol + o.value_coef * val - o.entropy * ent) / terms;
    loss.backward();
    torch::nn::utils::clip_grad_norm_(n.params(o.agents), 0.5);
    opt.step();
    last = loss.item<double>();
  }
  return last;
}

struct State {
  int episodes = 0;
  double best = 0, initial = 0;
};
State read_state(const std::string& path) {
  State s;
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the trainer state (needed by --resume)");
  if (!(in >> s.episodes >> s.best >> s.initial)) throw std::runtime_error(path + ":1: expected 'EPISODES BEST_JCT INITIAL_JCT'");
  return s;
}
void write_state(const std::string& path, const State& s) {
  std::ofstream out(path + ".tmp");
  out << s.episodes << " " << s.best << " " << s.initial << "\n";
  out.close();
  std::filesystem::rename(path + ".tmp", path);
}

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

double evaluate_model(const std::string& model, const Trace& trace, const ClusterModel& cluster,
                      const ThroughputTable& table, std::uint64_t seed, bool ideal, bool messages) {
  return greedy_jct(load_model(model), trace, cluster, table, seed, ideal, messages);
}

TrainReport train(const Trace& trace, const ClusterModel& cluster, const ThroughputTable& table,
                  const PriceTable* prices, const TrainOptions& o) {
  use_one_torch_thread();
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  if (trace.jobs.empty()) throw std::runtime_error(trace.source + ": the trace has no jobs to train on");
  const std::string csv = o.curve_csv.empty() ? o.out + ".csv" : o.curve_csv;
  const std::string state_path = o.out + ".state";
  torch::manual_seed(o.seed);

  Model base = make_initial_model(NetConfig{}, GpHyper{}, o.seed);
  State st;
  if (o.resume) {
    base = load_model(o.out);
    st = read_state(state_path);
  }
  Nets nets(base.nets);
  import_weights(*nets.ord, "ordering.", base.weights);
  import_weights(*nets.plc, "placement.", base.weights);
  import_weights(*nets.critic, "critic.", base.weights);
  torch::optim::Adam opt(nets.params(o.agents), torch::optim::AdamOptions(o.lr));

  // Evaluation window: the first window of the trace, fixed seed.
  const Trace eval = window(trace, 0, o.window_jobs);
  const std::string prov = "duet train --seed " + std::to_string(o.seed) + " --episodes " +
                           std::to_string(o.episodes) + " --bc-episodes " + std::to_string(o.bc_episodes) +
                           (o.agents == TrainAgents::both ? "" : std::string(" --agents ") + train_agents_name(o.agents)) +
                           (o.messages ? "" : " --no-messages");
  TrainReport rep;
  if (!o.resume) {
    st.initial = greedy_jct(base, eval, cluster, table, o.seed, o.ideal, o.messages);
    st.best = st.initial;
    std::ofstream(csv) << "phase,episode,wall_s,rollout_jct_s,eval_jct_s,loss\n";
    save_model(export_model(nets, base, prov + " (untrained start)"), o.out);
    write_state(state_path, st);
  }
  std::ofstream curve(csv, std::ios::app);
  if (!curve) throw std::runtime_error(csv + ": cannot write the learning curve");
  rep.initial_jct_s = st.initial;
  rep.best_jct_s = st.best;
  std::mt19937_64 rng(o.seed * 7919 + static_cast<std::uint64_t>(st.episodes));
  auto pick_window = [&] {
    if (trace.jobs.size() <= o.window_jobs) return trace;
    std::uniform_int_distribution<size_t> u(0, trace.jobs.size() - o.window_jobs);
    return window(trace, u(rng), o.window_jobs);
  };
  auto checkpoint = [&](const char* phase, int episode, double rollout_jct, double loss) {
    Model m = export_model(nets, base, prov);
    const double jct = greedy_jct(m, eval, cluster, table, o.seed, o.ideal, o.messages);
    curve << phase << "," << episode << "," << elapsed() << "," << rollout_jct << "," << jct << "," << loss << "\n";
    curve.flush();
    if (jct < st.best || o.keep_last) save_model(m, o.out);
    st.best = std::min(st.best, jct);
    write_state(state_path, st);
  };
  const bool resumed_past_bc = o.resume && st.episodes > 0;
  const int total = (resumed_past_bc ? 0 : o.bc_episodes) + o.episodes;
  int done = 0;
  auto out_of_time = [&] { return o.hours > 0 && elapsed() > o.hours * 3600; };
  if (!resumed_past_bc)
    for (int b = 0; b < o.bc_episodes && !out_of_time(); ++b) {
      Trace w = pick_window();
      Episode e = rollout(nets, base, w, cluster, table, prices, o.seed + 1000 + b, o.ideal, true, o.messages);
      const double loss = bc_update(nets, opt, e, base.nets, o.bc_epochs, o.agents, o.messages);
      checkpoint("bc", b, e.jct, loss);
      if (o.progress) o.progress(static_cast<double>(++done) / total);
    }
  double ret_scale = 0;
  const int end = st.episodes + o.episodes;
  for (int ep = st.episodes; ep < end && !out_of_time(); ++ep) {
    Trace w = pick_window();
    Episode e = rollout(nets, base, w, cluster, table, prices, o.seed + 17 * static_cast<std::uint64_t>(ep), o.ideal, true, o.messages);
    const double loss = ppo_update(nets, opt, e, base.nets, o, ret_scale);
    st.episodes = ep + 1;
    if ((ep + 1) % std::max(1, o.eval_every) == 0 || ep + 1 == end) checkpoint("ppo", ep, e.jct, loss);
    if (o.progress) o.progress(static_cast<double>(++done) / total);
  }
  rep.episodes_done = st.episodes;
  rep.best_jct_s = st.best;
  rep.final_jct_s = evaluate_model(o.out, eval, cluster, table, o.seed, o.ideal, o.messages);
  rep.wall_s = elapsed();
  return rep;
}

}  // namespace duet::learn
