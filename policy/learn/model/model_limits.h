// Limits a model file must keep (duet-model(5), LIMITS). A header of its own,
// free of Eigen, so that the plugins' Slurm-free library can check a model
// file's size before the learn library loads it.
#pragma once

#include <cstdint>

namespace duet::learn {

inline constexpr std::uint64_t kMaxModelBytes = std::uint64_t{256} << 20;  // 256 MiB, refused before reading
inline constexpr std::int64_t kMaxWeightValues = std::int64_t{1} << 26;    // values in one weight array

}  // namespace duet::learn
