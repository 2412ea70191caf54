// Small deterministic random numbers, identical on every platform (the
// standard library's distributions are not), so a seed gives the same run.
#pragma once

#include <cmath>
#include <cstdint>

namespace duet {

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Mixes a seed with stream identifiers (e.g. "machine speed", machine index).
inline uint64_t mix_seed(uint64_t seed, uint64_t a, uint64_t b = 0) {
  return splitmix64(splitmix64(seed ^ splitmix64(a)) ^ b);
}

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(splitmix64(seed)) {}
  uint64_t next() { return s_ = splitmix64(s_); }
  // Uniform in [0, 1).
  double uniform() { return (next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n).
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }
  // Standard normal (Box-Muller; one value per call, deterministic).
  double normal() {
    double u1 = uniform(), u2 = uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  uint64_t s_;
};

}  // namespace duet
