#include "policy/learn/train/ppo.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "policy/learn/agents/features.h"
#include "policy/learn/train/grad_sync.h"
#include "policy/util/rng.h"

namespace duet::learn {
namespace {

// Positions of the ranked prefix scored by the ordering distribution: only
// the jobs up to the last one that started matter; capped for cost.
constexpr int kMaxPrefix = 32;

// log P(perm[0..L)) under Plackett-Luce with logits s: sum_i s_pi(i) - logsumexp(s over the rest).
torch::Tensor pl_logp(const torch::Tensor& s, const torch::Tensor& perm, std::int64_t L) {
  auto sp = s.index_select(0, perm);               // scores in ranked order
  auto tail = sp.flip(0).logcumsumexp(0).flip(0);  // logsumexp of positions i..n-1
  return (sp.narrow(0, 0, L) - tail.narrow(0, 0, L)).sum();
}

// The placement head's residual for a recorded step, with its job's message;
// the actor's logits are it plus the step's prior.
torch::Tensor place_residual(Nets& n, const PlaceStep& st, const OrderOut& out, const NetConfig& nc) {
  return n.plc->forward(st.rows, job_msg(out.msgs, st.job_row, nc));
}

// The critic's values and the ordering actor's log-probabilities under the
// weights the rollout ran with (before any update).
void old_values(Nets& n, std::vector<Pass>& P, const NetConfig& nc, const TrainOptions& o, double ret_scale) {
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

// GAE over passes (terminal after the last; fees at the end). Returns the
// advantages' mean and sd; sets ret_scale from these returns if unset.
std::pair<double, double> advantages(std::vector<Pass>& P, double fees, const TrainOptions& o, double& ret_scale) {
  P.back().reward -= o.fee_lambda * fees;
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
  return {mean, sd};
}

// The PPO loss sums over an episode: clipped policy, value, entropy, and the
// anchor (the residuals' variance, TrainOptions::anchor).
struct PpoLoss {
  torch::Tensor pol = torch::zeros({}), val = torch::zeros({}), ent = torch::zeros({}), anchor = torch::zeros({});
};

// The variance of a residual over the choices it ranks (0 for one choice).
torch::Tensor spread(const torch::Tensor& r) { return (r - r.mean()).pow(2).mean(); }

void add_pass_loss(Nets& n, const Pass& p, const Episode& e, const NetConfig& nc, const TrainOptions& o, double a,
                   double ret_scale, PpoLoss& l) {
  auto clipped = [&](const torch::Tensor& logp, float old) {
    auto ratio = (logp - old).exp();
    return -torch::min(ratio * a, ratio.clamp(1 - o.clip, 1 + o.clip) * a);
  };
  auto v = n.critic->forward(p.jobs, p.machines, p.cluster);
  l.val = l.val + (v - p.ret / ret_scale).pow(2);
  const bool order_term = p.prefix > 0 && trains_order(o.agents);
  const bool place_terms = trains_place(o.agents) && !p.places.empty();
  if (!order_term && !place_terms) return;
  OrderOut out = order_pass(n, nc, p.jobs, p.cluster, p.machines, p.prior, o.messages);
  if (order_term) {
    l.pol = l.pol + clipped(pl_logp(out.scores, p.perm, p.prefix), p.old_logp);
    auto lp = torch::log_softmax(out.scores, 0);
    l.ent = l.ent - (lp.exp() * lp).sum();
    if (o.anchor > 0) l.anchor = l.anchor + spread(out.learned);
  }
  if (place_terms)
    for (int si : p.places) {
      const PlaceStep& st = e.steps[static_cast<size_t>(si)];
      auto learned = place_residual(n, st, out, nc);
      auto lp = torch::log_softmax(learned + st.prior, 0);
      l.pol = l.pol + clipped(lp[st.choice], st.old_logp);
      l.ent = l.ent - (lp.exp() * lp).sum();
      if (o.anchor > 0) l.anchor = l.anchor + spread(learned);
    }
}

// The passes one epoch uses: all of them, in order, when there are at most
// `cap` (or cap is 0); otherwise `cap` of them drawn without replacement (partial
// Fisher-Yates), in episode order. The mean over the subset is an unbiased
// estimate of the mean over the episode.
std::vector<size_t> epoch_passes(size_t n, int cap, Rng& rng) {
  std::vector<size_t> idx(n);
  for (size_t i = 0; i < n; ++i) idx[i] = i;
  if (cap <= 0 || n <= static_cast<size_t>(cap)) return idx;
  const size_t k = static_cast<size_t>(cap);
  for (size_t i = 0; i < k; ++i) std::swap(idx[i], idx[i + rng.below(n - i)]);
  idx.resize(k);
  std::sort(idx.begin(), idx.end());
  return idx;
}

}  // namespace

double bc_update(Nets& n, torch::optim::Optimizer& opt, const Episode& e, const NetConfig& nc,
                 const TrainOptions& o, int max_passes, std::uint64_t seed) {
  const TrainAgents agents = o.agents;
  const bool messages = o.messages;
  const std::vector<torch::Tensor> params = n.params(agents);
  Rng rng(seed);
  double last = 0;
  for (int ep = 0; ep < o.bc_epochs; ++ep) {
    opt.zero_grad();
    torch::Tensor loss = torch::zeros({});
    int terms = 0;
    for (size_t pi : epoch_passes(e.passes.size(), max_passes, rng)) {
      const Pass& p = e.passes[pi];
      const std::int64_t njobs = p.jobs.size(0);
      const bool order_term = njobs >= 2 && trains_order(agents);
      if (!order_term && (p.places.empty() || !trains_place(agents))) continue;
      OrderOut out = order_pass(n, nc, p.jobs, p.cluster, p.machines, p.prior, messages);
      if (order_term) {
        // target order: shortest predicted remaining GPU-time first
        auto target = p.jobs.select(1, kJobRemainingGpuHours).argsort(0, false);
        loss = loss - pl_logp(out.scores, target, std::min<std::int64_t>(njobs, 8));
        ++terms;
      }
      if (trains_place(agents))
        for (int si : p.places) {
          const PlaceStep& st = e.steps[static_cast<size_t>(si)];
          if (st.rows.size(0) < 2) continue;
          loss = loss - torch::log_softmax(place_residual(n, st, out, nc) + st.prior, 0)[st.bc_label];
          ++terms;
        }
    }
    if (terms > 0) {
      loss = loss / terms;
      loss.backward();
    }
    // no worker with terms: none steps (alone, as before: the update ends)
    if (!average_grads(o.workers, params, terms > 0)) return 0;
    torch::nn::utils::clip_grad_norm_(params, 1.0);
    opt.step();
    last = terms > 0 ? loss.item<double>() : 0;
  }
  return last;
}

double ppo_update(Nets& n, torch::optim::Optimizer& opt, Episode& e, const NetConfig& nc, const TrainOptions& o,
                  int max_passes, double& ret_scale, std::uint64_t seed) {
  auto& P = e.passes;
  WorkerGroup* g = o.workers;
  const bool shared = g != nullptr && g->size() > 1;
  if (P.empty() && !shared) return 0;
  const std::vector<torch::Tensor> params = n.params(o.agents);
  const bool first = ret_scale <= 0;
  double mean = 0, sd = 1;
  if (!P.empty()) {
    old_values(n, P, nc, o, ret_scale);
    std::tie(mean, sd) = advantages(P, e.fees, o, ret_scale);
  }
  if (first && shared) {
    // one critic scale for all: the mean over the workers' first episodes
    std::vector<double> v{P.empty() ? 0.0 : ret_scale, P.empty() ? 0.0 : 1.0};
    g->sum(v);
    ret_scale = v[1] > 0 ? v[0] / v[1] : 0;
  }
  Rng rng(seed);
  double last = 0;
  for (int ep = 0; ep < o.ppo_epochs; ++ep) {
    opt.zero_grad();
    torch::Tensor loss;
    if (!P.empty()) {
      PpoLoss l;
      const std::vector<size_t> use = epoch_passes(P.size(), max_passes, rng);
      for (size_t pi : use) add_pass_loss(n, P[pi], e, nc, o, (P[pi].adv - mean) / sd, ret_scale, l);
      loss = (l.pol + o.value_coef * l.val - o.entropy * l.ent + o.anchor * l.anchor) / static_cast<double>(use.size());
      loss.backward();
    }
    // a worker with an empty episode joins every exchange with nothing
    if (!average_grads(g, params, !P.empty())) return 0;
    torch::nn::utils::clip_grad_norm_(params, 0.5);
    opt.step();
    last = P.empty() ? 0 : loss.item<double>();
  }
  return last;
}

}  // namespace duet::learn
