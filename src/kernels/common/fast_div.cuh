// Division by a divisor that is fixed for a launch, as one multiply-high and a shift: the host
// makes the FastDiv (common/gemm_params.cuh, fast_div_for) and the kernel divides with fast_div.
// The integer division it replaces compiles to ~25 dependent instructions around a MUFU.RCP; the
// persistent sm90 kernel decoded its first work unit with five of them on the producer's path to
// its first TMA load, i.e. on every launch's critical path (bench/RESULTS.md, 2026-12-06 session 14).
//
// With s = ceil(log2(d)) the multiplier m = ceil(2^(32+s) / d) lies in [2^32, 2^33), and
// floor(n * m / 2^(32+s)) = floor(n / d) for every 0 <= n < 2^31: m = (2^(32+s) + e) / d with
// 0 <= e < d, so n * m / 2^(32+s) exceeds n / d by n * e / (d * 2^(32+s)) < n / 2^(32+s) < 2^-(s+1)
// <= 1 / (2d), while n / d is at most 1 - 1 / d past a whole number. The kernel multiplies by
// m - 2^32 (FastDiv::mul, 32 bits) and adds n back: floor(n * m / 2^32) = umulhi(n, m - 2^32) + n,
// below 2^32 for n < 2^31; then shifts by s. No branch: d = 1 or a power of two has mul = 0.
// tests/cpu/test_fast_div.cpp checks it against `/` (exhaustively for small n and d).
#pragma once

#include "common/gemm_params.cuh"

// n / d for 0 <= n < 2^31, where f = fast_div_for(d).
__device__ __forceinline__ int fast_div(int n, const FastDiv& f) {
#ifdef __CUDA_ARCH__
  const unsigned hi = __umulhi(unsigned(n), f.mul);
#else
  const unsigned hi = unsigned(((unsigned long long)unsigned(n) * f.mul) >> 32);
#endif
  return int((hi + unsigned(n)) >> f.shift);
}
