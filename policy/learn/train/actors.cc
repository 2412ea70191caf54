#include "policy/learn/train/actors.h"

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

OrderOut order_pass(Nets& n, const NetConfig& nc, const torch::Tensor& jobs, const torch::Tensor& cluster,
                    const torch::Tensor& machines, const torch::Tensor& prior, bool messages) {
  auto e = n.ord->embed(jobs);
  auto ctx = OrderingNetImpl::squeeze(e);
  auto pm = messages ? n.plc->message(machines) : torch::zeros({nc.placement.placement_message});
  OrderOut o;
  o.scores = n.ord->scores(e, ctx, cluster, pm) + prior;
  o.msgs = messages ? n.ord->messages(e, ctx)
                    : torch::zeros({jobs.size(0), static_cast<std::int64_t>(nc.ordering.order_message)});
  return o;
}

torch::Tensor job_msg(const torch::Tensor& msgs, std::int64_t row, const NetConfig& nc) {
  return row >= 0 ? msgs[row] : torch::zeros({nc.ordering.order_message});
}

}  // namespace duet::learn
