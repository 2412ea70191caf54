#include "policy/learn/nets/nets_torch.h"

#include <mutex>
#include <stdexcept>

#include "policy/learn/agents/order_prior.h"
#include "policy/learn/nets/model_init.h"

namespace duet::learn {

namespace {
torch::nn::Linear linear(torch::nn::Module& m, const char* name, std::int64_t in, std::int64_t out) {
  return m.register_module(name, torch::nn::Linear(in, out));
}
}  // namespace

OrderingNetImpl::OrderingNetImpl(const NetConfig& c) : cfg(c) {
  const auto& o = c.ordering;
  enc1 = linear(*this, "enc1", o.job_features, o.hidden);
  enc2 = linear(*this, "enc2", o.hidden, o.embed);
  head1 = linear(*this, "head1", 3 * o.embed + o.cluster_features + c.placement.placement_message, o.head_hidden);
  head2 = linear(*this, "head2", o.head_hidden, 1);
  msg = linear(*this, "msg", 3 * o.embed, o.order_message);
  if (o.preemptive) gate = linear(*this, "gate", 2 * o.embed + o.cluster_features, 1);
}

torch::Tensor OrderingNetImpl::embed(const torch::Tensor& jobs) const {
  auto h = torch::addmm(enc1->bias, jobs, enc1->weight.t()).relu_();
  return torch::addmm(enc2->bias, h, enc2->weight.t()).relu_();
}

torch::Tensor OrderingNetImpl::squeeze(const torch::Tensor& e) {
  return torch::cat({e.mean(0), std::get<0>(e.max(0))});
}

torch::Tensor OrderingNetImpl::scores(const torch::Tensor& e, const torch::Tensor& ctx, const torch::Tensor& cluster,
                                      const torch::Tensor& placement_msg) const {
  const std::int64_t d = cfg.ordering.embed;
  auto w_e = head1->weight.narrow(1, 0, d);
  auto w_g = head1->weight.narrow(1, d, head1->weight.size(1) - d);
  auto shared = torch::addmv(head1->bias, w_g, torch::cat({ctx, cluster, placement_msg}));
  auto h = torch::addmm(shared, e, w_e.t()).relu_();
  return torch::addmm(head2->bias, h, head2->weight.t()).squeeze(1);
}

torch::Tensor OrderingNetImpl::messages(const torch::Tensor& e, const torch::Tensor& ctx) const {
  const std::int64_t d = cfg.ordering.embed;
  auto w_e = msg->weight.narrow(1, 0, d);
  auto w_c = msg->weight.narrow(1, d, 2 * d);
  auto shared = torch::addmv(msg->bias, w_c, ctx);
  return torch::addmm(shared, e, w_e.t()).tanh();
}

torch::Tensor OrderingNetImpl::forward(const torch::Tensor& jobs, const torch::Tensor& cluster,
                                       const torch::Tensor& placement_msg) {
  auto e = embed(jobs);
  return scores(e, squeeze(e), cluster, placement_msg);
}

torch::Tensor OrderingNetImpl::gate_value(const torch::Tensor& ctx, const torch::Tensor& cluster) const {
  return torch::sigmoid(torch::addmv(gate->bias, gate->weight, torch::cat({ctx, cluster}))).squeeze(0);
}

PlacementNetImpl::PlacementNetImpl(const NetConfig& c) : cfg(c) {
  const auto& p = c.placement;
  l1 = linear(*this, "l1", p.machine_features + c.ordering.order_message, p.hidden);
  l2 = linear(*this, "l2", p.hidden, 1);
  msg = linear(*this, "msg", 2 * p.hidden, p.placement_message);
}

torch::Tensor PlacementNetImpl::forward(const torch::Tensor& machines, const torch::Tensor& order_msg) {
  const std::int64_t f = cfg.placement.machine_features;
  auto shared = torch::addmv(l1->bias, l1->weight.narrow(1, f, l1->weight.size(1) - f), order_msg);
  auto h = torch::addmm(shared, machines, l1->weight.narrow(1, 0, f).t()).relu_();
  return torch::addmm(l2->bias, h, l2->weight.t()).squeeze(1);
}

torch::Tensor PlacementNetImpl::message(const torch::Tensor& machines) {
  const std::int64_t f = cfg.placement.machine_features;
  auto h = torch::addmm(l1->bias, machines, l1->weight.narrow(1, 0, f).t()).relu_();
  auto pooled = torch::cat({h.mean(0), std::get<0>(h.max(0))});
  return torch::addmv(msg->bias, msg->weight, pooled).tanh();
}

CriticNetImpl::CriticNetImpl(const NetConfig& c) : cfg(c) {
  const std::int64_t h = c.critic.hidden;
  job = linear(*this, "job", c.ordering.job_features, h);
  machine = linear(*this, "machine", c.placement.machine_features, h);
  v1 = linear(*this, "v1", 4 * h + c.ordering.cluster_features, h);
  v2 = linear(*this, "v2", h, 1);
}

torch::Tensor CriticNetImpl::forward(const torch::Tensor& jobs, const torch::Tensor& machines,
                                     const torch::Tensor& cluster) {
  auto pool = [](const torch::Tensor& x) { return torch::cat({x.mean(0), std::get<0>(x.max(0))}); };
  auto j = job->forward(jobs).relu();
  auto m = machine->forward(machines).relu();
  auto h = v1->forward(torch::cat({pool(j), pool(m), cluster})).relu();
  return v2->forward(h).squeeze(0);
}

std::vector<NamedArray> export_weights(const torch::nn::Module& m, const std::string& prefix) {
  std::vector<NamedArray> out;
  for (const auto& p : m.named_parameters()) {
    auto t = p.value().detach().to(torch::kFloat32).contiguous();
    NamedArray a;
    a.name = prefix + p.key();
    a.shape.assign(t.sizes().begin(), t.sizes().end());
    a.data.assign(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
    out.push_back(std::move(a));
  }
  return out;
}

void import_weights(torch::nn::Module& m, const std::string& prefix, const std::vector<NamedArray>& weights) {
  torch::NoGradGuard no_grad;
  for (auto& p : m.named_parameters()) {
    const std::string name = prefix + p.key();
    const NamedArray* found = nullptr;
    for (const auto& a : weights)
      if (a.name == name) found = &a;
    if (!found) throw std::invalid_argument("weights " + name + " missing");
    std::vector<std::int64_t> want(p.value().sizes().begin(), p.value().sizes().end());
    if (found->shape != want)
      throw std::invalid_argument("weights " + name + ": shape " + shape_string(found->shape) + ", network needs " +
                                  shape_string(want));
    auto src = torch::from_blob(const_cast<float*>(found->data.data()), want, torch::kFloat32);
    p.value().copy_(src);
  }
}

void use_one_torch_thread() {
  static std::once_flag once;
  std::call_once(once, [] {
    torch::set_num_threads(1);
    try {
      torch::set_num_interop_threads(1);
    } catch (const std::exception&) {
      // already set, or inter-op work already ran: harmless for inference
    }
  });
}

Model make_initial_model(const NetConfig& nets, const GpHyper& gp, std::uint64_t seed) {
  nets.validate();
  use_one_torch_thread();
  torch::manual_seed(seed);
  OrderingNet o(nets);
  PlacementNet p(nets);
  CriticNet c(nets);
  {
    // The weights that read the other agent's message start at zero: an
    // untrained pair acts as if nothing were said, and training learns to
    // listen only where it pays (the senders' weights stay random, so the
    // gradient reaches the listeners from the first update).
    torch::NoGradGuard ng;
    const auto& oc = nets.ordering;
    o->head1->weight.narrow(1, 3 * oc.embed + oc.cluster_features, nets.placement.placement_message).zero_();
    p->l1->weight.narrow(1, nets.placement.machine_features, oc.order_message).zero_();
    // The gate starts at a constant, mostly LAS (order_prior.h).
    if (oc.preemptive) {
      o->gate->weight.zero_();
      o->gate->bias.fill_(kLasGateInitBias);
    }
    // A Gittins-prior model starts as its prior: the score head's last layer
    // at zero, so an untrained model orders as the blend does (a random
    // residual is noise in a continuous rank, not only a tie-break inside a
    // LAS queue); its gradient is not zero, so training moves it at once.
    if (oc.preemptive == kPreemptGittins) o->head2->weight.zero_();
  }
  Model m;
  m.nets = nets;
  m.job_norm = FeatureNorm::identity(nets.ordering.job_features);
  m.cluster_norm = FeatureNorm::identity(nets.ordering.cluster_features);
  m.machine_norm = FeatureNorm::identity(nets.placement.machine_features);
  m.gp = gp;
  m.weights = export_weights(*o, "ordering.");
  for (auto& a : export_weights(*p, "placement.")) m.weights.push_back(std::move(a));
  for (auto& a : export_weights(*c, "critic.")) m.weights.push_back(std::move(a));
  m.provenance = "untrained, seed " + std::to_string(seed);
  return m;
}

}  // namespace duet::learn
