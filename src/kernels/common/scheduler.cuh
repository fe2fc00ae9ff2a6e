// The tile scheduler every family shares: which output tile (and which slice of K) a work unit is,
// and in which order a grid walks them. A kernel asks it for coordinates instead of decoding
// blockIdx itself, so tile order, grouped rasterization, batches and K splits mean the same thing
// in every family:
//   - the output X (rows x cols, core/kernel_view.hpp) is cut into block_m x block_n tiles;
//   - raster_group > 1: tiles are walked in groups of raster_group M blocks, N blocks outer and M
//     blocks inner within a group, so that CTAs running at the same time share B columns and A
//     rows in L2; raster_group <= 1: row order (N blocks fastest);
//   - cluster_m > 1: a work unit is cluster_m vertically adjacent tiles (one per CTA of a cluster);
//   - batches are outside tiles, K splits outside batches:
//       unit = (split * batch_count + batch) * units_per_batch + position in the batch.
// Non-persistent kernels take unit = blockIdx; persistent ones walk unit = first, first + step, ...
#pragma once

#include "common/fast_div.cuh"
#include "common/gemm_params.cuh"

namespace dg {

struct TileCoord {
  int m_block;  // first M block of the unit (cluster_m of them when clustered)
  int n_block;
  int batch;
  int split;    // which K split (0 when K is not split)
};

struct TileScheduler {
  TileGrid g;
  // The host's multiply-and-shift divisors of g (backend/cuda/kernel_args.hpp, tile_divs), for
  // coords_fast; zero where the kernel built g itself (sm80), which only calls coords.
  TileDivs d;

  __device__ __forceinline__ int m_units() const { return (g.num_m_blocks + g.cluster_m - 1) / g.cluster_m; }
  __device__ __forceinline__ int units_per_batch() const { return m_units() * g.num_n_blocks; }
  __device__ __forceinline__ int num_units() const { return units_per_batch() * g.batch_count * g.split_k; }
  // The same from the host's divisors (no division).
  __device__ __forceinline__ int num_units_fast() const { return d.m_units * g.num_n_blocks * g.batch_count * g.split_k; }

  __device__ __forceinline__ TileCoord coords(int unit) const {
    TileCoord t;
    const int per_batch = units_per_batch();
    const int outer = unit / per_batch;
    const int pos = unit - outer * per_batch;
    t.split = outer / g.batch_count;
    t.batch = outer - t.split * g.batch_count;
    const int rows = m_units();
    const int group_m = g.raster_group / g.cluster_m;
    if (group_m <= 1) {
      const int mu = pos / g.num_n_blocks;  // row order: N blocks fastest
      t.n_block = pos - mu * g.num_n_blocks;
      t.m_block = mu * g.cluster_m;
      return t;
    }
    const int group_units = group_m * g.num_n_blocks;
    const int group = pos / group_units;
    const int first_m = group * group_m;
    const int in_group = rows - first_m < group_m ? rows - first_m : group_m;
    const int r = pos - group * group_units;
    t.m_block = (first_m + r % in_group) * g.cluster_m;
    t.n_block = r / in_group;
    return t;
  }

  // coords(unit) by multiply and shift (d): no integer division but the last rasterization
  // group's when it is short. sm90's persistent kernels decode their units so (kFastDecode): the
  // first is on the way from griddepcontrol.wait to the CTA's first TMA load.
  __device__ __forceinline__ TileCoord coords_fast(int unit) const {
    TileCoord t;
    const int per_batch = d.m_units * g.num_n_blocks;
    const int outer = fast_div(unit, d.units);
    const int pos = unit - outer * per_batch;
    t.split = fast_div(outer, d.batch);
    t.batch = outer - t.split * g.batch_count;
    const int group_m = d.group_m;
    if (group_m <= 1) {
      const int mu = fast_div(pos, d.n);  // row order: N blocks fastest
      t.n_block = pos - mu * g.num_n_blocks;
      t.m_block = mu * g.cluster_m;
      return t;
    }
    const int group_units = group_m * g.num_n_blocks;
    const int group = fast_div(pos, d.group);
    const int first_m = group * group_m;
    const int r = pos - group * group_units;
    int in_m;
    if (d.m_units - first_m >= group_m) {  // a whole group (every one but perhaps the last)
      t.n_block = fast_div(r, d.group_m_div);
      in_m = r - t.n_block * group_m;
    } else {
      const int in_group = d.m_units - first_m;
      t.n_block = r / in_group;
      in_m = r - t.n_block * in_group;
    }
    t.m_block = (first_m + in_m) * g.cluster_m;
    return t;
  }

  // The K blocks [begin, end) of split `split` of `splits`: even shares, the first ones one
  // longer; a split is empty only when there are fewer K blocks than splits.
  __device__ __forceinline__ static void k_range(int num_k_blocks, int splits, int split, int& begin, int& end) {
    const int base = num_k_blocks / splits, extra = num_k_blocks - base * splits;
    begin = split * base + (split < extra ? split : extra);
    end = begin + base + (split < extra ? 1 : 0);
  }
};

}  // namespace dg
