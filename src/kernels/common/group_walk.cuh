// Grouped (mixture-of-experts) problems on the device: the rows each group computes, read from
// the caller's device array when the kernel runs, and the work units a persistent grid walks over
// them. The rule is the CPU's (src/core/grouping.cpp, resolve_group_rows), value for value:
//   contiguous (G + 1 offsets): b[0] = clamp(off[0], 0, m), b[i] = clamp(off[i], b[i-1], m), each
//     rounded down to a multiple of the plan's m_alignment; group g owns rows [b[g], b[g+1]) of
//     the shared A, C and D;
//   masked (G counts): group g owns rows [0, clamp(cnt[g], 0, m)) of its own batch slot.
// The contract a kernel follows is src/kernels/GROUPED.md.
//
// Work units: group by group, each group's tiles with M blocks fastest (the CTAs running at the
// same time then share the group's B columns in L2): unit u of group g with T_g M tiles is M tile
// (u - first_g) % T_g, N block (u - first_g) / T_g. No host knows the counts, so the walker scans
// the array itself; every walker of a CTA (the producer thread, each consumer thread) scans it
// the same way and therefore agrees on every unit. Units only increase along a persistent walk,
// so the scan is one pass over the G groups per CTA.
#pragma once

#include "common/gemm_params.cuh"

namespace dg {

enum : int { kGroupNone = 0, kGroupContiguous = 1, kGroupMasked = 2 };
// Same bits as DGEMM_GROUP_STATUS_* and dgemm::GroupStatus.
enum : unsigned { kGroupStatusNegative = 0x1, kGroupStatusOutOfRange = 0x2, kGroupStatusDecreasing = 0x4,
                  kGroupStatusUnaligned = 0x8 };

template <int kLayout, int kBlockM>
struct GroupWalk {
  const int* rows;
  int groups;
  long long m;
  int alignment;
  int n_blocks;
  int group;             // the current group (groups when the walk is over)
  long long begin, end;  // its rows
  long long first;       // its first work unit
  long long units;       // its work units (M tiles x N blocks)

  __device__ __forceinline__ void start(const GroupArgs& a, long long m_, int n_blocks_) {
    rows = a.rows;
    groups = a.groups;
    m = m_;
    alignment = a.alignment;
    n_blocks = n_blocks_;
    group = -1;
    first = 0;
    units = 0;
    // The bound before group 0 (contiguous): b[0].
    end = kLayout == kGroupContiguous ? clip(rows[0], 0) : 0;
  }

  // Moves to the group that holds `unit`; false when the unit is past the last group's.
  __device__ __forceinline__ bool seek(long long unit) {
    while (unit >= first + units) {
      first += units;
      if (++group >= groups) {
        units = 0;
        return false;
      }
      if (kLayout == kGroupContiguous) {
        begin = end;
        end = clip(rows[group + 1], begin);
      } else {
        begin = 0;
        const long long c = rows[group];
        end = c < 0 ? 0 : c > m ? m : c;
      }
      units = (end - begin + kBlockM - 1) / kBlockM * n_blocks;
    }
    return true;
  }

  // The current group's M tile and N block of `unit` (after seek(unit) returned true).
  __device__ __forceinline__ void tile(long long unit, long long& row0, int& n_block) const {
    const long long tiles_m = (end - begin + kBlockM - 1) / kBlockM;
    const long long local = unit - first;
    n_block = int(local / tiles_m);
    row0 = begin + (local - (long long)n_block * tiles_m) * kBlockM;
  }

  // clamp(v, lo, m) rounded down to the alignment (lo and m are multiples of it).
  __device__ __forceinline__ long long clip(long long v, long long lo) const {
    long long x = v < lo ? lo : v > m ? m : v;
    return x - x % alignment;
  }
};

// The status word of one launch: the OR of the rules the raw values break, written once by the
// one thread that calls it (GROUPED.md: no atomics, no reset between executes).
template <int kLayout>
__device__ inline void write_group_status(const GroupArgs& a, long long m) {
  if (a.status == nullptr) return;
  unsigned bits = 0;
  const int n = kLayout == kGroupContiguous ? a.groups + 1 : a.groups;
  int prev = 0;
  for (int i = 0; i < n; ++i) {
    const int v = a.rows[i];
    if (v < 0) bits |= kGroupStatusNegative;
    if ((long long)v > m) bits |= kGroupStatusOutOfRange;
    if (kLayout == kGroupContiguous) {
      if (i > 0 && v < prev) bits |= kGroupStatusDecreasing;
      if (v % a.alignment != 0) bits |= kGroupStatusUnaligned;  // C remainder: -3 % 8 counts
    }
    prev = v;
  }
  *a.status = bits;
}

}  // namespace dg
