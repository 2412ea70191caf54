// Gradient averaging and the initial broadcast over the workers' Gloo group
// (grad_sync.h): one flat buffer per collective.
#include "policy/learn/train/grad_sync.h"

#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO 1
#endif
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <stdexcept>
#include <string>

namespace duet::learn {
namespace {

bool alone(const WorkerGroup* g) { return g == nullptr || g->size() == 1; }

std::int64_t total_numel(const std::vector<torch::Tensor>& params) {
  std::int64_t n = 0;
  for (const auto& p : params) {
    if (p.scalar_type() != torch::kFloat32) throw std::logic_error("workers: parameters are float32");
    n += p.numel();
  }
  return n;
}

}  // namespace

bool average_grads(WorkerGroup* g, const std::vector<torch::Tensor>& params, bool contributed) {
  if (alone(g)) return contributed;
  torch::NoGradGuard ng;
  // [every gradient, flattened | one "has a gradient" flag per parameter | "had a loss"]
  const std::int64_t n = total_numel(params), np = static_cast<std::int64_t>(params.size());
  auto buf = torch::zeros({n + np + 1}, torch::kFloat32);
  if (contributed) {
    std::int64_t off = 0;
    for (std::int64_t i = 0; i < np; ++i) {
      const auto& p = params[static_cast<size_t>(i)];
      if (p.grad().defined()) {
        buf.narrow(0, off, p.numel()).copy_(p.grad().reshape({-1}));
        buf[n + i] = 1;
      }
      off += p.numel();
    }
    buf[n + np] = 1;
  }
  std::vector<at::Tensor> t{buf};
  WorkerGroup::collective("averaging the gradients", [&] { g->group().allreduce(t)->wait(); });
  const float count = buf[n + np].item<float>();
  if (count == 0) return false;
  std::int64_t off = 0;
  for (std::int64_t i = 0; i < np; ++i) {
    auto p = params[static_cast<size_t>(i)];
    if (buf[n + i].item<float>() > 0) {
      auto mean = buf.narrow(0, off, p.numel()).view(p.sizes()) / count;
      if (p.grad().defined())
        p.mutable_grad().copy_(mean);
      else
        p.mutable_grad() = mean.clone();
    } else {
      p.mutable_grad() = torch::Tensor();
    }
    off += p.numel();
  }
  return true;
}

void broadcast_params(WorkerGroup* g, const std::vector<torch::Tensor>& params) {
  if (alone(g)) return;
  torch::NoGradGuard ng;
  auto buf = torch::zeros({total_numel(params)}, torch::kFloat32);
  std::int64_t off = 0;
  for (const auto& p : params) {
    buf.narrow(0, off, p.numel()).copy_(p.reshape({-1}));
    off += p.numel();
  }
  std::vector<at::Tensor> t{buf};
  c10d::BroadcastOptions o;
  o.rootRank = 0;
  WorkerGroup::collective("taking worker 0's weights", [&] { g->group().broadcast(t, o)->wait(); });
  off = 0;
  for (auto p : params) {
    p.copy_(buf.narrow(0, off, p.numel()).view(p.sizes()));
    off += p.numel();
  }
}

}  // namespace duet::learn
