// Sizes of the learned scheduler's networks and the names and shapes of their
// parameters. Torch-free: the model file, the plain-C++ placement head and
// the LibTorch modules all agree on these lists.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace duet::learn {

struct OrderingNetConfig {
  std::uint32_t job_features = 16;     // raw features per pending job
  std::uint32_t cluster_features = 8;  // cluster summary
  std::uint32_t hidden = 48;           // encoder hidden width
  std::uint32_t embed = 32;            // job embedding width
  std::uint32_t head_hidden = 32;      // scoring head width
  std::uint32_t order_message = 4;     // ordering -> placement, per job
  // Non-zero: preemptive ordering. Running jobs are ranked with pending ones
  // each decision period (the ranked prefix that fits is kept, the rest
  // preempted), and a gate from the squeeze context ("ordering.gate") blends
  // the QSSF-like prior with a second prior (order_prior.h): discretised LAS
  // (kPreemptLas) or the Gittins rank (kPreemptGittins). 0: neither (format 1).
  std::uint32_t preemptive = 0;
};
inline constexpr std::uint32_t kPreemptLas = 1, kPreemptGittins = 2;

struct PlacementNetConfig {
  std::uint32_t machine_features = 9;  // see placement_features.h
  std::uint32_t hidden = 32;
  std::uint32_t placement_message = 4;  // placement -> ordering
};

struct CriticNetConfig {
  std::uint32_t hidden = 64;
};

struct NetConfig {
  OrderingNetConfig ordering;
  PlacementNetConfig placement;
  CriticNetConfig critic;
  // Throws std::invalid_argument naming the first size out of 1..4096.
  void validate() const;
};

struct ParamShape {
  std::string name;                 // e.g. "ordering.enc1.weight"
  std::vector<std::int64_t> shape;  // row-major; Linear weight is [out, in]
};

// Parameters, in order, of each network (prefixes "ordering.", "placement.",
// "critic."). Architecture: duet-model(5), section NETWORKS.
std::vector<ParamShape> ordering_param_shapes(const NetConfig& c);
std::vector<ParamShape> placement_param_shapes(const NetConfig& c);
std::vector<ParamShape> critic_param_shapes(const NetConfig& c);
std::vector<ParamShape> all_param_shapes(const NetConfig& c);

// A named float array (one network parameter).
struct NamedArray {
  std::string name;
  std::vector<std::int64_t> shape;
  std::vector<float> data;
};

std::string shape_string(std::span<const std::int64_t> shape);  // "[48,16]"

// Per-feature affine normalisation x' = (x - mean) * scale, applied before a
// network sees its inputs. Empty vectors of the right size are not allowed.
struct FeatureNorm {
  std::vector<float> mean, scale;
  static FeatureNorm identity(std::size_t n);
  std::size_t size() const { return mean.size(); }
};

}  // namespace duet::learn
