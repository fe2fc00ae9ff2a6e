// Stream-K (KernelConfig::stream_k, sm90) on the host: the planner's cost and the launcher's
// kernel arguments and workspace use the rule the kernels use, kernels/common/stream_k_split.cuh
// (one definition: a grouped kernel applies it on the device to the tile count it reads).
#pragma once

#include "kernels/common/stream_k_split.cuh"

namespace dgemm {

using StreamKSplit = ::DgStreamKSplit;

constexpr long kStreamKMaxPieces = DG_STREAM_K_MAX_PIECES;

// grouped: the split a grouped kernel makes on the device (even pieces only, else whole units).
inline StreamKSplit stream_k_split(long tiles, long ctas, long k_blocks, bool grouped = false) {
  return grouped ? dg_stream_k_split_grouped(tiles, ctas, k_blocks) : dg_stream_k_split(tiles, ctas, k_blocks);
}

}  // namespace dgemm
