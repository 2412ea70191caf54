// Dense layers for the agents' inference on one thread, without LibTorch:
// an AVX2+FMA kernel chosen at run time where the CPU has it, and a portable
// one otherwise (same results up to float rounding).
// LibTorch's addmm chain pays per-op dispatch and whole-queue intermediates;
// these keep a block of jobs in registers and L1 (bench_learn times both).
#pragma once

#include <cstddef>

namespace duet::learn::kernel {

// Whether this CPU runs the AVX2+FMA kernel (checked once).
bool have_avx2();

// Widths handed to dense() are padded to a multiple of this (zero weights).
inline constexpr std::size_t kLanes = 16;
inline constexpr std::size_t padded(std::size_t n) { return (n + kLanes - 1) / kLanes * kLanes; }

// y[r][c] = b[c] + sum_k x[r][k] * wt[k][c] for r < rows, c < out, where
// x has `in` values per row (row stride ldx), wt is in x out row-major,
// y has row stride ldy and out % kLanes == 0. Columns c < relu_cols (a
// multiple of kLanes) then go through max(0, .).
void dense(const float* x, std::size_t rows, std::size_t in, std::size_t ldx, const float* wt, std::size_t out,
           const float* b, float* y, std::size_t ldy, std::size_t relu_cols, bool avx2);

}  // namespace duet::learn::kernel
