#include "policy/learn/model/net_config.h"

#include <stdexcept>

namespace duet::learn {

void NetConfig::validate() const {
  auto check = [](const char* name, std::uint32_t v) {
    if (v < 1 || v > 4096)
      throw std::invalid_argument(std::string("network size ") + name + " = " + std::to_string(v) +
                                  ": expected 1..4096");
  };
  check("ordering.job_features", ordering.job_features);
  check("ordering.cluster_features", ordering.cluster_features);
  check("ordering.hidden", ordering.hidden);
  check("ordering.embed", ordering.embed);
  check("ordering.head_hidden", ordering.head_hidden);
  check("ordering.order_message", ordering.order_message);
  check("placement.machine_features", placement.machine_features);
  check("placement.hidden", placement.hidden);
  check("placement.placement_message", placement.placement_message);
  check("critic.hidden", critic.hidden);
  if (ordering.preemptive > kPreemptGittins)
    throw std::invalid_argument("ordering.preemptive = " + std::to_string(ordering.preemptive) +
                                ": expected 0, 1 (LAS prior) or 2 (Gittins prior)");
}

namespace {
void linear(std::vector<ParamShape>& out, const std::string& name, std::int64_t in, std::int64_t outw) {
  out.push_back({name + ".weight", {outw, in}});
  out.push_back({name + ".bias", {outw}});
}
}  // namespace

std::vector<ParamShape> ordering_param_shapes(const NetConfig& c) {
  const auto& o = c.ordering;
  std::vector<ParamShape> v;
  linear(v, "ordering.enc1", o.job_features, o.hidden);
  linear(v, "ordering.enc2", o.hidden, o.embed);
  // communicate: [embedding, mean pool, max pool, cluster, placement message]
  linear(v, "ordering.head1", 3 * o.embed + o.cluster_features + c.placement.placement_message, o.head_hidden);
  linear(v, "ordering.head2", o.head_hidden, 1);
  linear(v, "ordering.msg", 3 * o.embed, o.order_message);
  // gate between the QSSF-like and the LAS or Gittins prior, from [mean pool, max pool, cluster]
  if (o.preemptive) linear(v, "ordering.gate", 2 * o.embed + o.cluster_features, 1);
  return v;
}

std::vector<ParamShape> placement_param_shapes(const NetConfig& c) {
  const auto& p = c.placement;
  std::vector<ParamShape> v;
  linear(v, "placement.l1", p.machine_features + c.ordering.order_message, p.hidden);
  linear(v, "placement.l2", p.hidden, 1);
  linear(v, "placement.msg", 2 * p.hidden, p.placement_message);
  return v;
}

std::vector<ParamShape> critic_param_shapes(const NetConfig& c) {
  const auto h = c.critic.hidden;
  std::vector<ParamShape> v;
  linear(v, "critic.job", c.ordering.job_features, h);
  linear(v, "critic.machine", c.placement.machine_features, h);
  linear(v, "critic.v1", 4 * h + c.ordering.cluster_features, h);
  linear(v, "critic.v2", h, 1);
  return v;
}

std::vector<ParamShape> all_param_shapes(const NetConfig& c) {
  auto v = ordering_param_shapes(c);
  for (auto& s : placement_param_shapes(c)) v.push_back(std::move(s));
  for (auto& s : critic_param_shapes(c)) v.push_back(std::move(s));
  return v;
}

std::string shape_string(std::span<const std::int64_t> shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

FeatureNorm FeatureNorm::identity(std::size_t n) { return {std::vector<float>(n, 0.0f), std::vector<float>(n, 1.0f)}; }

}  // namespace duet::learn
