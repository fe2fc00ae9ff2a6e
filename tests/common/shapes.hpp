// Declarative shape and option lists shared by the GEMM tests (CPU oracle and GPU kernels), kept
// apart from the test code so that tiers can grow without touching it.
#pragma once

#include <cstdint>
#include <vector>

namespace dgemm_test {

// DESIGN.md "shapes that must always pass", in each of M, N and K.
inline const std::vector<int64_t> kEdgeSizes = {1, 7, 15, 16, 17, 63, 64, 65, 127, 128, 129, 1000, 4093};
// Decode-sized M (small-M and skinny swap-AB tiles): around every bucket edge of 8 ... 256.
inline const std::vector<int64_t> kSkinnyMs = {1,  2,  3,  7,   8,   9,   15,  16,  17,  31,
                                               33, 63, 64, 65, 127, 128, 129, 255, 256, 257};

// The two other dimensions while one of M, N, K sweeps kEdgeSizes: small, odd, different.
inline constexpr int64_t kSweepOtherM = 5;
inline constexpr int64_t kSweepOtherN = 9;
inline constexpr int64_t kSweepOtherK = 11;

// A shape with every dimension off any power of two, for the type and epilogue sweeps.
struct Shape {
  int64_t m, n, k;
};
inline const Shape kSmallOddShape = {13, 11, 19};
// Crosses the CPU oracle's internal tile sizes (72 rows, 256 columns, 256-deep K blocks) and its
// 6 x 8 micro-tile in every dimension, and common GPU tile sizes (64, 128) as well.
inline const std::vector<Shape> kTileCrossingShapes = {{77, 263, 259}, {145, 17, 513}, {3, 517, 5}, {65, 9, 257}};

// Full tier only (DEEPGEMM_TEST_TIER=full): every M x N x K combination of these sizes.
inline const std::vector<int64_t> kFullTierSizes = {1, 7, 16, 17, 63, 64, 65, 129, 257};

// Extra elements added to every leading dimension in the layout sweep.
inline constexpr int64_t kLdPad = 5;

}  // namespace dgemm_test
