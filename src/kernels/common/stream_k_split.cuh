// Stream-K (KernelConfig::stream_k, sm90): how a persistent grid shares out the output tiles that
// would otherwise leave a partial last wave. One rule for the host (planner cost, launcher:
// core/stream_k.hpp) and the device (a grouped kernel, whose tile count is known only when it
// runs, splits the same way from the counts it reads): plain C++, no library, so NVRTC and the
// host compiler both take it.
//
// The first tiles go whole to the CTAs (`dp_tiles`, a whole number of waves); the K blocks of the
// rest (`sk_tiles` x k_blocks iterations, tile after tile) are cut into `sk_ctas` contiguous ranges
// of `sk_iters` (the last may be shorter), one per CTA, or, where every shared tile can have two or
// more CTAs, into `split` even pieces of each tile. A tile whose K blocks span several CTAs is
// finished by the CTA holding its first K block; the others leave f32 (or s32) partial tiles in
// the workspace.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define DG_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define DG_HOST_DEVICE inline
#endif

struct DgStreamKSplit {
  long long dp_tiles;  // tiles computed whole, in full waves
  long long sk_tiles;  // tiles whose K blocks are shared out
  long long sk_ctas;   // CTAs with a range of the shared K blocks (<= ctas)
  long long sk_iters;  // K blocks per range (the longest piece)
  int max_pieces;      // most CTAs one shared tile is cut over
  // > 0: each shared tile is cut into `split` even pieces of its own K blocks (CTA c: tile
  // c / split, piece c % split), no piece crossing a tile; 0: contiguous ranges of sk_iters.
  int split;
};

// A tile is cut over at most this many CTAs: the CTA finishing it reads the others' partials
// (BLOCK_M x BLOCK_N x 4 bytes each) from L2 one after the other.
#define DG_STREAM_K_MAX_PIECES 4

DG_HOST_DEVICE DgStreamKSplit dg_stream_k_split(long long tiles, long long ctas, long long k_blocks) {
  DgStreamKSplit s = {0, 0, 0, 0, 1, 0};
  if (tiles <= 0 || ctas <= 0 || k_blocks <= 0) return s;
  s.sk_tiles = tiles < ctas ? tiles : tiles % ctas;
  s.dp_tiles = tiles - s.sk_tiles;
  if (s.sk_tiles == 0) return s;
  // Where every shared tile can have two or more CTAs, even pieces of each tile: the tile's
  // finishing CTA then reads split - 1 partials, where ranges crossing tiles would add one more
  // (a partial costs a few microseconds: H200, 2026-12-04).
  long long even = ctas / s.sk_tiles;
  if (even > DG_STREAM_K_MAX_PIECES) even = DG_STREAM_K_MAX_PIECES;
  if (even > k_blocks) even = k_blocks;
  if (even >= 2) {
    s.split = int(even);
    s.sk_ctas = s.sk_tiles * even;
    s.sk_iters = (k_blocks + even - 1) / even;
    s.max_pieces = int(even);
    return s;
  }
  const long long total = s.sk_tiles * k_blocks;
  const long long pieces = k_blocks < DG_STREAM_K_MAX_PIECES ? k_blocks : DG_STREAM_K_MAX_PIECES;
  const long long want = ctas < s.sk_tiles * pieces ? ctas : s.sk_tiles * pieces;
  s.sk_iters = (total + want - 1) / want;
  s.sk_ctas = (total + s.sk_iters - 1) / s.sk_iters;
  // A range longer than a tile's K would cut nothing: whole tiles again.
  if (s.sk_iters >= k_blocks) {
    s.dp_tiles = tiles;
    s.sk_tiles = s.sk_ctas = s.sk_iters = 0;
    return s;
  }
  s.max_pieces = int((k_blocks + s.sk_iters - 1) / s.sk_iters + 1);
  return s;
}

// A grouped launch (its units counted on the device from the group rows) shares out only in even
// pieces: where the split above would cut contiguous ranges across units, every unit goes whole.
// Ranges start each CTA at a different K block, so the row tiles of a group that read the same
// columns of the group's weights no longer read them at the same time, and those weights (one
// matrix per group, most of the bytes) come from HBM once per tile instead of once per wave:
// 4096x7168, 8 groups, 2688 rows (336 units of 128x256, 72 shared, 62-block ranges) ran 314 us
// against 246 us for the same tile whole (H100, 2026-12-06 session 12), where even pieces (2432
// rows, 40 shared units in thirds) ran 248 against 256. A plain launch keeps ranges: its weights
// are one matrix that every row tile reads, mostly from L2.
DG_HOST_DEVICE DgStreamKSplit dg_stream_k_split_grouped(long long tiles, long long ctas, long long k_blocks) {
  DgStreamKSplit s = dg_stream_k_split(tiles, ctas, k_blocks);
  if (s.sk_tiles > 0 && s.split == 0) {
    s.dp_tiles = tiles;
    s.sk_tiles = s.sk_ctas = s.sk_iters = 0;
    s.max_pieces = 1;
  }
  return s;
}
