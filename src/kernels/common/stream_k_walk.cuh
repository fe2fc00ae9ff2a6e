// Stream-K's walk of one CTA (sm90 kStreamK, the split of common/stream_k_split.cuh): which work
// units it computes whole, then which pieces of the shared units' K blocks, and what each piece
// must do with its partial sums. The kernel (sm90/sm90_gemm.cuh, for_each_work) and a host test
// (tests/cpu/test_stream_k_walk.cpp: every K block of every unit exactly once, units in order,
// waits only on later CTAs whose partials come first) run this same code.
//
// One counter is live across the walk: `it` (it < -1: -it - 2 whole units left; then this CTA's
// shared K blocks). Every other value is read from `src`, which the kernel gives as reads of its
// parameters (no registers held) or, for grouped launches, recomputed from the unit count it found:
//   src.units()     work units of the launch
//   src.sk_tiles()  units whose K blocks are shared out (the last ones)
//   src.sk_ctas(), src.sk_iters(), src.sk_split()   as DgStreamKSplit's fields
// sk_tiles x K blocks fits an int: there are fewer shared tiles than CTAs.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define DG_STREAM_K_FN __device__ __forceinline__
#else
#define DG_STREAM_K_FN inline
#endif

// One piece of work: unit `unit`, K blocks [kb0, kb1), and `sk`: 0 = a whole unit; -1 = a piece
// whose partial tile goes to this CTA's workspace slot; p > 0 = the first piece of a unit, which
// adds the partials of slots cta + 1 .. p - 1 and finishes it.
struct DgStreamKPiece {
  int unit, kb0, kb1, sk;
};

// This CTA's whole units: cta, cta + grid, ... below units - sk_tiles.
template <class Src>
DG_STREAM_K_FN int dg_stream_k_whole(const Src& src, int cta, int grid) {
  return (src.units() - src.sk_tiles() - cta + grid - 1) / grid;
}

// The walk's start (the counter's first value).
template <class Src>
DG_STREAM_K_FN int dg_stream_k_begin(const Src& src, int cta, int grid) {
  return -dg_stream_k_whole(src, cta, grid) - 1;
}

// The same walk in two parts, as the kernel runs it: the whole units cta, cta + grid, ... below
// dg_stream_k_whole_end(src) in a loop of their own, then dg_stream_k_next from it =
// kDgStreamKShared for the pieces. (The kernel's whole units then compile as in a kernel without
// stream-K; test_stream_k_walk checks that both forms give the same pieces in the same order.)
template <class Src>
DG_STREAM_K_FN int dg_stream_k_whole_end(const Src& src) {
  return src.units() - src.sk_tiles();
}
constexpr int kDgStreamKShared = -1;

// The next piece of CTA `cta` of `grid` into *p, advancing `it`; false when the CTA is done.
// Whole units first (full waves), then this CTA's range of the shared K blocks: at most two
// pieces, the end of one unit (a partial, left in the workspace) and the start of the next
// (finished here, with the partials of the CTAs after this one that hold the rest of it); or, with
// even pieces (sk_split > 0), one piece of one unit.
template <class Src>
DG_STREAM_K_FN bool dg_stream_k_next(const Src& src, int cta, int grid, int kb, int& it, DgStreamKPiece& p) {
  p.kb0 = 0;
  p.kb1 = kb;
  p.sk = 0;
  if (it < -1) {
    p.unit = cta + (it + dg_stream_k_whole(src, cta, grid) + 1) * grid;
    ++it;
  } else if (src.sk_split() > 0) {
    // Even pieces of each shared unit, one per CTA; piece 0 finishes the unit.
    if (it == 0 || cta >= src.sk_ctas()) return false;
    it = 0;
    const int split = src.sk_split();
    const int r = cta / split, j = cta - r * split;
    // K blocks [begin, end) of piece j: even shares, the first ones one longer.
    const int base = kb / split, extra = kb - base * split;
    p.kb0 = j * base + (j < extra ? j : extra);
    p.kb1 = p.kb0 + base + (j < extra ? 1 : 0);
    p.unit = src.units() - src.sk_tiles() + r;
    p.sk = j != 0 ? -1 : cta + split;
  } else {
    if (it == -1) it = cta < src.sk_ctas() ? cta * src.sk_iters() : 0x7fffffff;
    const int shared_end = src.sk_tiles() * kb, range_end = (cta + 1) * src.sk_iters();
    const int end = range_end < shared_end ? range_end : shared_end;
    if (it >= end) return false;
    const int r = it / kb;
    p.kb0 = it - r * kb;
    p.kb1 = kb < p.kb0 + (end - it) ? kb : p.kb0 + (end - it);
    p.unit = src.units() - src.sk_tiles() + r;
    // A piece that starts inside the unit leaves a partial; the first piece adds the partials of
    // the CTAs whose ranges hold the rest of the unit's K blocks.
    const int peer_end = ((r + 1) * kb - 1) / src.sk_iters() + 1;
    p.sk = p.kb0 != 0 ? -1 : peer_end > cta + 1 ? peer_end : 0;
    it += p.kb1 - p.kb0;
  }
  return true;
}
