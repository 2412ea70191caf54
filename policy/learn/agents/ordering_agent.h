// The ordering agent at inference (the simulator's policy adapter, the Slurm
// priority plugin): scores every pending job with the squeeze-and-communicate
// network. Training uses the same network as a LibTorch module (nets_torch.h);
// this evaluation needs no LibTorch: blocked kernels (dense_kernel.h) on the
// calling thread, with AVX2+FMA where the CPU has it. Both read the
// "ordering.*" weights of the model file and agree up to float rounding.
//
// const methods are safe to call from several threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "policy/learn/model/model_file.h"

namespace duet::learn {

class OrderingAgent {
 public:
  // kPortable: never the AVX2 kernel (tests compare both).
  enum class Kernel { kBest, kPortable };
  explicit OrderingAgent(const Model& m, Kernel k = Kernel::kBest);  // m must be valid (load_model checks)
  ~OrderingAgent();
  OrderingAgent(OrderingAgent&&) noexcept;
  OrderingAgent& operator=(OrderingAgent&&) noexcept;

  const NetConfig& config() const;

  // jobs: num_jobs raw feature rows (row-major, job_features each); cluster:
  // cluster_features raw values; placement_msg: the placement agent's message
  // (placement_message values, or empty for zeros). scores: one logit per
  // job, higher = schedule earlier. num_jobs may be 0 (no scores). gate, if
  // given: a preemptive model's weight of its second prior (LAS or Gittins, order_prior.h) for
  // this queue, else 0.
  void score(std::span<const float> jobs, std::size_t num_jobs, std::span<const float> cluster,
             std::span<const float> placement_msg, std::vector<float>& scores, float* gate = nullptr) const;

  // Scores and, for every job, its message to the placement agent
  // (order_message values per job, row-major).
  void score_with_messages(std::span<const float> jobs, std::size_t num_jobs, std::span<const float> cluster,
                           std::span<const float> placement_msg, std::vector<float>& scores,
                           std::vector<float>& messages, float* gate = nullptr) const;

  // Numerically stable softmax (the policy's distribution over jobs).
  static void softmax(std::span<const float> scores, std::vector<float>& probs);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace duet::learn
