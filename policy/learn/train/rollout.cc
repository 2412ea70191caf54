#include "policy/learn/train/rollout.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "policy/learn/agents/placement_features.h"
#include "policy/sim/simulator.h"

namespace duet::learn {

Rollout::Rollout(Nets& n, const Model& m, std::uint64_t seed, bool sample_, const DuetPolicyOptions& agents)
    : nets(&n), base(&m), popt(agents), rng(seed), sample(sample_) {
  for (size_t i = 0; i < m.job_types.size(); ++i) type_index[m.job_types[i]] = static_cast<std::uint32_t>(i);
}

void Rollout::record(std::size_t bytes, double now_s) {
  recorded_bytes += bytes;
  if (byte_limit == 0 || recorded_bytes <= byte_limit) return;
  throw std::runtime_error(fmt::format(
      "a training episode's record of decisions passed {:.1f} GiB ({} scheduling passes, {:.0f} simulated hours "
      "into the window): the window is too congested to train on in memory; use the --preempt-* limits (e.g. "
      "--preempt-min-run-time 300 --preempt-max-restarts 3), a smaller --window, a longer --period, or a trace "
      "that the cluster can serve",
      static_cast<double>(byte_limit) / (1u << 30), passes.size(), now_s / 3600));
}

double Rollout::gumbel() {
  std::uniform_real_distribution<double> u(1e-12, 1.0);
  return -std::log(-std::log(u(rng)));
}

std::uint32_t Rollout::job_type(std::string_view n) const {
  auto it = type_index.find(std::string(n));
  return it != type_index.end() ? it->second : static_cast<std::uint32_t>(base->job_types.size());
}

void Rollout::ensure_gp(const ClusterView& c) {
  if (gp && gp->num_machines() == c.machines.size()) return;
  gp = std::make_unique<PerformanceGp>(machine_descs(c), static_cast<std::uint32_t>(base->job_types.size()), base->gp);
}

namespace {

// The simulator's rule for a preemptive pass (Scheduler::keep_ranked_prefix):
// down the ranking, a job is kept while its GPUs fit in what the jobs before
// it left of the GPUs the ranked jobs may hold (the free ones and those of the
// running jobs ranked). Returns the position after the last job kept.
int kept_prefix(std::span<const JobView> jobs, const std::vector<size_t>& order, int free_gpus) {
  long budget = free_gpus;
  for (const JobView& j : jobs)
    if (j.running) budget += j.gpus;
  int prefix = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    const JobView& j = jobs[order[k]];
    if (j.gpus <= budget) budget -= j.gpus, prefix = static_cast<int>(k) + 1;
  }
  return prefix;
}

}  // namespace

void TrainOrdering::rank(std::span<const JobView> jobs, const ClusterView& c, std::vector<size_t>& order) {
  order.clear();
  if (jobs.empty()) return;
  torch::NoGradGuard ng;
  r_.ensure_gp(c);
  const ClusterSummary s = summarise(c);
  std::vector<float> rows, cl, mrows;
  std::vector<MachineState> states;
  job_feature_rows(jobs, s, r_.history, rows);
  cluster_features(c, jobs, s, cl);
  Pass p;
  p.t = c.now_s;
  p.jobs = rows_tensor(rows, static_cast<std::int64_t>(jobs.size()), kJobFeatures);
  p.cluster = torch::from_blob(cl.data(), {static_cast<std::int64_t>(kClusterFeatures)}, torch::kFloat32).clone();
  // The placement head's view for its message: every machine, a generic 1-GPU job.
  std::vector<std::uint32_t> all(c.machines.size());
  std::iota(all.begin(), all.end(), 0u);
  candidate_rows(*r_.gp, c.machines, all, PlacementJob{static_cast<std::uint32_t>(r_.base->job_types.size()), 1}, -1,
                 states, mrows);
  p.machines = rows_tensor(mrows, static_cast<std::int64_t>(all.size()), kPlacementFeatures);
  // Act as deployed (DuetOrdering, priority/duet): the network's score on
  // top of the QSSF-like prior, so the network learns that residual.
  p.prior = order_prior(r_.base->nets, p.jobs, rows, r_.popt.order_prior_weight);
  OrderOut out = order_pass(*r_.nets, r_.base->nets, p.jobs, p.cluster, p.machines, p.prior, r_.popt.messages);
  p.order_msgs = out.msgs;
  std::vector<double> key(jobs.size());
  auto acc = out.scores.accessor<float, 1>();
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
  // A preemptive pass decides with the whole ranking which running jobs to
  // keep: the distribution scores the prefix up to the last job kept.
  // As deployed, a job just preempted is then left out if it would be a
  // filler (restart_hold.h).
  if (preemptive()) {
    p.prefix = kept_prefix(jobs, order, c.free_gpus);
    r_.hold.apply(jobs, c, order);
  }
  // the tensors' data, about 4 KiB of tensor headers, 100 bytes of maps
  // and ids per job
  const std::size_t bytes =
      4 * static_cast<std::size_t>(p.jobs.numel() + p.machines.numel() + p.order_msgs.numel() + p.perm.numel() * 2) +
      4096 + 100 * jobs.size();
  r_.passes.push_back(std::move(p));
  r_.record(bytes, c.now_s);
}

namespace {

// The placement routine's scorer while training: the LibTorch network with
// the job's message from its ordering pass; the first machine sampled from
// softmax(total) (Gumbel-max) and recorded in `step`.
class NetScorer : public PlacementScorer {
 public:
  NetScorer(Rollout& r, torch::Tensor order_msg, PlaceStep& step) : r_(r), msg_(std::move(order_msg)), st_(step) {}

  void score(std::span<const float> rows, std::size_t k, std::vector<float>& scores) override {
    auto t = torch::from_blob(const_cast<float*>(rows.data()),
                              {static_cast<std::int64_t>(k), static_cast<std::int64_t>(kPlacementFeatures)},
                              torch::kFloat32);
    auto out = r_.nets->plc->forward(t, msg_).contiguous();
    scores.assign(out.data_ptr<float>(), out.data_ptr<float>() + k);
  }

  std::uint32_t choose(const PlacementScores& s, std::span<const std::uint32_t> among) override {
    const std::size_t k = among.size();
    std::vector<float> rows(k * kPlacementFeatures), prior(k), logits(k);
    std::size_t best = 0, best_fit = 0;
    double best_key = -1e300;
    float bf = 1e30f;
    for (std::size_t i = 0; i < k; ++i) {
      const float* row = s.rows.data() + static_cast<std::size_t>(among[i]) * kPlacementFeatures;
      std::copy(row, row + kPlacementFeatures, rows.begin() + static_cast<std::ptrdiff_t>(i * kPlacementFeatures));
      prior[i] = static_cast<float>(s.prior[among[i]]);
      logits[i] = s.total[among[i]];
      const double key = logits[i] + (r_.sample ? r_.gumbel() : 0.0);
      if (key > best_key) best_key = key, best = i;
      // warm-start label: best fit (least left over), else the largest share of the job
      const float fit = row[kLeftOver] >= 0 ? row[kLeftOver] : 10 - row[kJobShare];
      if (fit < bf) bf = fit, best_fit = i;
    }
    st_.rows = rows_tensor(rows, static_cast<std::int64_t>(k), kPlacementFeatures);
    st_.prior = torch::tensor(prior, torch::kFloat32);
    st_.choice = static_cast<std::int64_t>(best);
    st_.bc_label = static_cast<int>(best_fit);
    st_.old_logp = torch::log_softmax(torch::tensor(logits, torch::kFloat32), 0)[st_.choice].item<float>();
    return among[best];
  }

 private:
  Rollout& r_;
  torch::Tensor msg_;
  PlaceStep& st_;
};

}  // namespace

std::optional<Placement> TrainPlacement::place(const JobView& job, const ClusterView& c) {
  if (job.gpus <= 0 || r_.passes.empty()) return std::nullopt;
  torch::NoGradGuard ng;
  r_.ensure_gp(c);
  const PlacementJob pj{r_.job_type(job.job_type), static_cast<std::uint16_t>(std::min(job.gpus, 65535))};
  Pass& pass = r_.passes.back();
  PlaceStep st;
  if (auto it = pass.row.find(job.id); it != pass.row.end()) st.job_row = it->second;
  NetScorer scorer(r_, job_msg(pass.order_msgs, st.job_row, r_.base->nets), st);
  const PriorWeights w{r_.popt.prior_weight, r_.popt.risk_aversion, r_.popt.spread.value_or(r_.base->spread),
                       r_.popt.speed_floor};
  const std::span<const MachineView> ms = job_machines(r_.popt.job_speeds.get(), job, c, r_.factor, r_.view);
  std::optional<Placement> p = place_job(*r_.gp, ms, job, pj, scorer, w, r_.scores);
  if (!p) return std::nullopt;
  if (auto it = pass.pos.find(job.id); it != pass.pos.end()) pass.prefix = std::max(pass.prefix, it->second + 1);
  pass.places.push_back(static_cast<int>(r_.steps.size()));
  const std::size_t bytes = 4 * static_cast<std::size_t>(st.rows.numel() + st.prior.numel()) + 1024;
  r_.steps.push_back(std::move(st));
  r_.record(bytes, c.now_s);
  r_.placed[job.id] = {*p, placement_speed(ms, *p)};
  return p;
}

void TrainPlacement::on_finish(const JobView& job, double run_s) {
  auto it = r_.placed.find(job.id);
  if (it == r_.placed.end()) return;
  auto [where, expected] = std::move(it->second);
  r_.placed.erase(it);
  if (!r_.gp || !(job.oracle_duration_s > 0) || !(run_s > 0) || std::abs(job.run_s - run_s) > 1e-6 * run_s) return;
  const double v = std::clamp(std::log(job.oracle_duration_s / run_s / expected), -2.0, 2.0);
  for (const auto& part : where)
    if (static_cast<std::size_t>(part.machine) < r_.gp->num_machines())
      r_.gp->observe(GpObservation{static_cast<std::uint32_t>(part.machine), r_.job_type(job.job_type), v});
}

namespace {

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

}  // namespace

Episode rollout(Nets& nets, const Model& base, const Trace& t, const ClusterModel& c, const ThroughputTable& table,
                const PriceTable* prices, std::uint64_t seed, const SimOptions& sim, bool sample,
                const DuetPolicyOptions& agents, std::size_t byte_limit) {
  Rollout r(nets, base, seed, sample, agents);
  r.byte_limit = byte_limit;
  TrainOrdering o(r);
  TrainPlacement p(r);
  Finishes f;
  SimOptions so = sim;
  so.model.seed = seed;
  Simulator s(t, c, table, prices, so);
  s.set_policies(&o, &p);
  s.set_observer(&f);
  SimResult res = s.run();
  assign_rewards(r.passes, f);
  Episode e;
  e.passes = std::move(r.passes);
  e.steps = std::move(r.steps);
  e.jct = res.avg_jct_s;
  e.fees = res.fees_usd;
  e.preemptions = res.preemptions;
  return e;
}

}  // namespace duet::learn
