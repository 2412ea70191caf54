#include "policy/learn/agents/dense_kernel.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define DUET_HAVE_AVX2_KERNEL 1
#endif

#include <algorithm>

namespace duet::learn::kernel {

namespace {

#ifdef DUET_HAVE_AVX2_KERNEL
// Four rows by sixteen columns at a time: eight accumulators stay in
// registers while the k loop streams two weight vectors per step.
__attribute__((target("avx2,fma"))) void dense_avx2(const float* x, std::size_t rows, std::size_t in, std::size_t ldx,
                                                    const float* wt, std::size_t out, const float* b, float* y,
                                                    std::size_t ldy, std::size_t relu_cols) {
  const __m256 zero = _mm256_setzero_ps();
  for (std::size_t r = 0; r < rows; r += 4) {
    const std::size_t nr = std::min<std::size_t>(4, rows - r);
    // rows past the end repeat the last one; their results are not stored
    const float* x0 = x + r * ldx;
    const float* x1 = x0 + (nr > 1 ? ldx : 0);
    const float* x2 = x0 + (nr > 2 ? 2 * ldx : 0);
    const float* x3 = x0 + (nr > 3 ? 3 * ldx : 0);
    for (std::size_t c = 0; c < out; c += 16) {
      __m256 a00 = _mm256_loadu_ps(b + c), a01 = _mm256_loadu_ps(b + c + 8);
      __m256 a10 = a00, a11 = a01, a20 = a00, a21 = a01, a30 = a00, a31 = a01;
      for (std::size_t k = 0; k < in; ++k) {
        const __m256 w0 = _mm256_loadu_ps(wt + k * out + c), w1 = _mm256_loadu_ps(wt + k * out + c + 8);
        __m256 v = _mm256_broadcast_ss(x0 + k);
        a00 = _mm256_fmadd_ps(v, w0, a00), a01 = _mm256_fmadd_ps(v, w1, a01);
        v = _mm256_broadcast_ss(x1 + k);
        a10 = _mm256_fmadd_ps(v, w0, a10), a11 = _mm256_fmadd_ps(v, w1, a11);
        v = _mm256_broadcast_ss(x2 + k);
        a20 = _mm256_fmadd_ps(v, w0, a20), a21 = _mm256_fmadd_ps(v, w1, a21);
        v = _mm256_broadcast_ss(x3 + k);
        a30 = _mm256_fmadd_ps(v, w0, a30), a31 = _mm256_fmadd_ps(v, w1, a31);
      }
      if (c < relu_cols) {
        a00 = _mm256_max_ps(a00, zero), a01 = _mm256_max_ps(a01, zero);
        a10 = _mm256_max_ps(a10, zero), a11 = _mm256_max_ps(a11, zero);
        a20 = _mm256_max_ps(a20, zero), a21 = _mm256_max_ps(a21, zero);
        a30 = _mm256_max_ps(a30, zero), a31 = _mm256_max_ps(a31, zero);
      }
      float* y0 = y + r * ldy + c;
      _mm256_storeu_ps(y0, a00), _mm256_storeu_ps(y0 + 8, a01);
      if (nr > 1) _mm256_storeu_ps(y0 + ldy, a10), _mm256_storeu_ps(y0 + ldy + 8, a11);
      if (nr > 2) _mm256_storeu_ps(y0 + 2 * ldy, a20), _mm256_storeu_ps(y0 + 2 * ldy + 8, a21);
      if (nr > 3) _mm256_storeu_ps(y0 + 3 * ldy, a30), _mm256_storeu_ps(y0 + 3 * ldy + 8, a31);
    }
  }
}
#endif

// GCC vector extensions: SSE2 on any x86-64, NEON elsewhere. Two rows by
// sixteen columns: eight four-wide accumulators.
using v4f = float __attribute__((vector_size(16)));

v4f load4(const float* p) {
  v4f v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
void store4(float* p, v4f v) { __builtin_memcpy(p, &v, sizeof v); }

void dense_portable(const float* x, std::size_t rows, std::size_t in, std::size_t ldx, const float* wt, std::size_t out,
                    const float* b, float* y, std::size_t ldy, std::size_t relu_cols) {
  const v4f zero = {0, 0, 0, 0};
  for (std::size_t r = 0; r < rows; r += 2) {
    const bool two = r + 1 < rows;
    const float* x0 = x + r * ldx;
    const float* x1 = two ? x0 + ldx : x0;
    for (std::size_t c = 0; c < out; c += 16) {
      v4f a[2][4];
      for (int q = 0; q < 4; ++q) a[0][q] = a[1][q] = load4(b + c + 4 * q);
      for (std::size_t k = 0; k < in; ++k) {
        const float* w = wt + k * out + c;
        const v4f w0 = load4(w), w1 = load4(w + 4), w2 = load4(w + 8), w3 = load4(w + 12);
        const float s0 = x0[k], s1 = x1[k];
        a[0][0] += s0 * w0, a[0][1] += s0 * w1, a[0][2] += s0 * w2, a[0][3] += s0 * w3;
        a[1][0] += s1 * w0, a[1][1] += s1 * w1, a[1][2] += s1 * w2, a[1][3] += s1 * w3;
      }
      for (int j = 0; j < (two ? 2 : 1); ++j)
        for (int q = 0; q < 4; ++q) {
          v4f v = a[j][q];
          if (c < relu_cols) v = v > zero ? v : zero;
          store4(y + (r + j) * ldy + c + 4 * q, v);
        }
    }
  }
}

}  // namespace

bool have_avx2() {
#ifdef DUET_HAVE_AVX2_KERNEL
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return yes;
#else
  return false;
#endif
}

void dense(const float* x, std::size_t rows, std::size_t in, std::size_t ldx, const float* wt, std::size_t out,
           const float* b, float* y, std::size_t ldy, std::size_t relu_cols, bool avx2) {
#ifdef DUET_HAVE_AVX2_KERNEL
  if (avx2 && have_avx2()) return dense_avx2(x, rows, in, ldx, wt, out, b, y, ldy, relu_cols);
#endif
  (void)avx2;
  dense_portable(x, rows, in, ldx, wt, out, b, y, ldy, relu_cols);
}

}  // namespace duet::learn::kernel
