// Stream-K (KernelConfig::stream_k, sm90): how a persistent grid shares out the output tiles that
// would otherwise leave a partial last wave. The first tiles go whole to the CTAs as before
// (`dp_tiles`, a whole number of waves); the K blocks of the rest (`sk_tiles` x k_blocks
// iterations, tile after tile) are cut into `sk_ctas` contiguous ranges of `sk_iters` (the last
// may be shorter), one per CTA. A tile whose K blocks span several CTAs is finished by the CTA
// holding its first K block; the others leave f32 (or s32) partial tiles in the workspace.
// Planner (cost) and launcher (kernel arguments, workspace) both call this, so they agree.
#pragma once

#include <algorithm>

namespace dgemm {

struct StreamKSplit {
  long dp_tiles = 0;  // tiles computed whole, in full waves
  long sk_tiles = 0;  // tiles whose K blocks are shared out
  long sk_ctas = 0;   // CTAs with a range of the shared K blocks (<= ctas)
  long sk_iters = 0;  // K blocks per range (the longest piece)
  int max_pieces = 1; // most CTAs one shared tile is cut over
  // > 0: each shared tile is cut into `split` even pieces of its own K blocks (CTA c: tile
  // c / split, piece c % split), no piece crossing a tile; 0: contiguous ranges of sk_iters.
  int split = 0;
};

// A tile is cut over at most this many CTAs: the CTA finishing it reads the others' partials
// (BLOCK_M x BLOCK_N x 4 bytes each) from L2 one after the other.
constexpr long kStreamKMaxPieces = 4;

inline StreamKSplit stream_k_split(long tiles, long ctas, long k_blocks) {
  StreamKSplit s;
  if (tiles <= 0 || ctas <= 0 || k_blocks <= 0) return s;
  const long rem = tiles % ctas;
  s.sk_tiles = tiles < ctas ? tiles : rem;
  s.dp_tiles = tiles - s.sk_tiles;
  if (s.sk_tiles == 0) return s;
  // Where every shared tile can have two or more CTAs, even pieces of each tile: the tile's
  // finishing CTA then reads split - 1 partials, where ranges crossing tiles would add one more
  // (a partial costs a few microseconds: H200, 2026-12-04).
  const long even = std::min({kStreamKMaxPieces, ctas / s.sk_tiles, k_blocks});
  if (even >= 2) {
    s.split = int(even);
    s.sk_ctas = s.sk_tiles * even;
    s.sk_iters = (k_blocks + even - 1) / even;
    s.max_pieces = int(even);
    return s;
  }
  const long total = s.sk_tiles * k_blocks;
  const long want = std::min(ctas, s.sk_tiles * std::min(kStreamKMaxPieces, k_blocks));
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

}  // namespace dgemm
