#include "policy/learn/ordering_agent.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "policy/learn/nets_torch.h"

namespace duet::learn {

struct OrderingAgent::Impl {
  explicit Impl(const Model& m) : net(m.nets), job_norm(m.job_norm), cluster_norm(m.cluster_norm) {
    import_weights(*net, "ordering.", m.weights);
    net->eval();
  }
  OrderingNet net;
  FeatureNorm job_norm, cluster_norm;

  void run(std::span<const float> jobs, std::size_t n, std::span<const float> cluster,
           std::span<const float> pmsg, std::vector<float>& scores, std::vector<float>* messages) const;
};

OrderingAgent::OrderingAgent(const Model& m) {
  use_one_torch_thread();
  impl_ = std::make_unique<Impl>(m);
}
OrderingAgent::~OrderingAgent() = default;
OrderingAgent::OrderingAgent(OrderingAgent&&) noexcept = default;
OrderingAgent& OrderingAgent::operator=(OrderingAgent&&) noexcept = default;

const NetConfig& OrderingAgent::config() const { return impl_->net->cfg; }

namespace {
void check_size(const char* what, std::size_t got, std::size_t want) {
  if (got != want)
    throw std::invalid_argument(std::string("ordering agent: ") + what + " has " + std::to_string(got) +
                                " values, expected " + std::to_string(want));
}
}  // namespace

void OrderingAgent::Impl::run(std::span<const float> jobs, std::size_t n, std::span<const float> cluster,
                              std::span<const float> pmsg, std::vector<float>& scores,
                              std::vector<float>* messages) const {
  const auto& c = net->cfg;
  const std::size_t d = c.ordering.job_features;
  check_size("job feature rows", jobs.size(), n * d);
  check_size("cluster summary", cluster.size(), c.ordering.cluster_features);
  if (!pmsg.empty()) check_size("placement message", pmsg.size(), c.placement.placement_message);
  scores.resize(n);
  if (messages) messages->resize(n * c.ordering.order_message);
  if (n == 0) return;
  c10::InferenceMode guard;
  // normalise while copying into the input tensor
  auto x = torch::empty({static_cast<std::int64_t>(n), static_cast<std::int64_t>(d)}, torch::kFloat32);
  float* xp = x.data_ptr<float>();
  const float* mean = job_norm.mean.data();
  const float* scale = job_norm.scale.data();
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t f = 0; f < d; ++f) xp[i * d + f] = (jobs[i * d + f] - mean[f]) * scale[f];
  auto cl = torch::empty({static_cast<std::int64_t>(cluster.size())}, torch::kFloat32);
  for (std::size_t f = 0; f < cluster.size(); ++f)
    cl.data_ptr<float>()[f] = (cluster[f] - cluster_norm.mean[f]) * cluster_norm.scale[f];
  auto pm = torch::zeros({static_cast<std::int64_t>(c.placement.placement_message)}, torch::kFloat32);
  if (!pmsg.empty()) std::copy(pmsg.begin(), pmsg.end(), pm.data_ptr<float>());
  auto e = net->embed(x);
  auto ctx = OrderingNetImpl::squeeze(e);
  auto s = net->scores(e, ctx, cl, pm).contiguous();
  std::copy(s.data_ptr<float>(), s.data_ptr<float>() + n, scores.begin());
  if (messages) {
    auto msg = net->messages(e, ctx).contiguous();
    std::copy(msg.data_ptr<float>(), msg.data_ptr<float>() + msg.numel(), messages->begin());
  }
}

void OrderingAgent::score(std::span<const float> jobs, std::size_t num_jobs, std::span<const float> cluster,
                          std::span<const float> placement_msg, std::vector<float>& scores) const {
  impl_->run(jobs, num_jobs, cluster, placement_msg, scores, nullptr);
}

void OrderingAgent::score_with_messages(std::span<const float> jobs, std::size_t num_jobs,
                                        std::span<const float> cluster, std::span<const float> placement_msg,
                                        std::vector<float>& scores, std::vector<float>& messages) const {
  impl_->run(jobs, num_jobs, cluster, placement_msg, scores, &messages);
}

void OrderingAgent::softmax(std::span<const float> scores, std::vector<float>& probs) {
  probs.resize(scores.size());
  if (scores.empty()) return;
  const float mx = *std::max_element(scores.begin(), scores.end());
  double sum = 0;
  for (std::size_t i = 0; i < scores.size(); ++i) sum += (probs[i] = std::exp(scores[i] - mx));
  for (float& p : probs) p = static_cast<float>(p / sum);
}

}  // namespace duet::learn
