#include "policy/learn/train/actors.h"

#include "policy/learn/agents/features.h"
#include "policy/learn/agents/order_prior.h"

namespace duet::learn {

void Nets::load(const Model& m) {
  import_weights(*ord, "ordering.", m.weights);
  import_weights(*plc, "placement.", m.weights);
  import_weights(*critic, "critic.", m.weights);
}

std::vector<torch::Tensor> Nets::params(TrainAgents a) {
  std::vector<torch::Tensor> p;
  if (trains_order(a))
    for (auto& x : ord->parameters()) p.push_back(x);
  if (trains_place(a))
    for (auto& x : plc->parameters()) p.push_back(x);
  for (auto& x : critic->parameters()) p.push_back(x);
  return p;
}

Model export_model(Nets& n, const Model& base, const std::string& provenance) {
  Model m = base;
  m.weights = export_weights(*n.ord, "ordering.");
  for (auto& a : export_weights(*n.plc, "placement.")) m.weights.push_back(std::move(a));
  for (auto& a : export_weights(*n.critic, "critic.")) m.weights.push_back(std::move(a));
  m.provenance = provenance;
  return m;
}

torch::Tensor rows_tensor(const std::vector<float>& rows, std::int64_t n, std::int64_t f) {
  return torch::from_blob(const_cast<float*>(rows.data()), {n, f}, torch::kFloat32).clone();
}

OrderPrior order_prior(const NetConfig& nc, const torch::Tensor& jobs, const std::vector<float>& rows, double weight) {
  OrderPrior p;
  p.weight = static_cast<float>(weight);
  if (!nc.ordering.preemptive) {
    p.fixed = jobs.select(1, kJobRemainingGpuHours) * static_cast<float>(-weight);
    return p;
  }
  std::vector<float> q, l;
  order_prior_terms(nc.ordering.preemptive, rows, static_cast<std::size_t>(jobs.size(0)), q, l);
  p.qssf = torch::tensor(q, torch::kFloat32);
  p.las = torch::tensor(l, torch::kFloat32);
  return p;
}

OrderOut order_pass(Nets& n, const NetConfig& nc, const torch::Tensor& jobs, const torch::Tensor& cluster,
                    const torch::Tensor& machines, const OrderPrior& prior, bool messages) {
  auto e = n.ord->embed(jobs);
  auto ctx = OrderingNetImpl::squeeze(e);
  auto pm = messages ? n.plc->message(machines) : torch::zeros({nc.placement.placement_message});
  OrderOut o;
  o.learned = n.ord->scores(e, ctx, cluster, pm);
  if (nc.ordering.preemptive) {
    auto g = n.ord->gate_value(ctx, cluster);
    o.scores = o.learned - prior.weight * ((1 - g) * prior.qssf + g * prior.las);
  } else {
    o.scores = o.learned + prior.fixed;
  }
  o.msgs = messages ? n.ord->messages(e, ctx)
                    : torch::zeros({jobs.size(0), static_cast<std::int64_t>(nc.ordering.order_message)});
  return o;
}

torch::Tensor job_msg(const torch::Tensor& msgs, std::int64_t row, const NetConfig& nc) {
  return row >= 0 ? msgs[row] : torch::zeros({nc.ordering.order_message});
}

}  // namespace duet::learn
