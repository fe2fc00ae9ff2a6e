// Shared-memory bank-conflict simulator. A kernel family describes, for one warp instruction, the
// byte address every thread touches (ldmatrix row addresses, 16-byte cp.async stores, stmatrix,
// plain 4/8/16-byte loads) in a tile layout with a swizzle, and gets back how many shared-memory
// wavefronts the instruction costs. The model (NVIDIA's documented one): 32 banks x 4 bytes, at
// most 128 bytes per wavefront; an access of B bytes per thread is served in phases of 128/B
// threads; inside a phase, threads reading the same 4-byte word are broadcast, and distinct words
// in the same bank serialize. ldmatrix/stmatrix .x4 are 32 row addresses of 16 bytes each, served
// 8 rows (one 8x8 matrix) per phase, which is the 16-byte-per-thread case.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace dgemm {
namespace banksim {

// XOR swizzle on byte addresses: bits [base, base+bits) of the address are XORed with the bits
// `shift` places above them. The Hopper TMA / wgmma modes are all 16-byte-chunk swizzles with the
// row index taken from bits 7.. of the address: 128B = (3,4,3), 64B = (2,4,3), 32B = (1,4,3).
struct Swizzle {
  int bits = 0;   // 0 = identity
  int base = 4;   // log2 of the unit that moves (16-byte chunks)
  int shift = 3;  // distance between the bits read and the bits changed

  static Swizzle none() { return Swizzle{0, 4, 3}; }
  // The TMA/wgmma mode for a span of 32, 64 or 128 bytes (0 = none). Other spans: identity.
  static Swizzle span_bytes(int span);
  uint32_t operator()(uint32_t byte_addr) const {
    if (bits == 0) return byte_addr;
    const uint32_t mask = ((1u << bits) - 1u) << base;
    return byte_addr ^ ((byte_addr >> shift) & mask);
  }
  std::string name() const;
};

// A 2-D tile in shared memory: `rows` rows of `row_bytes` bytes each, contiguous dimension along
// a row (K-major operand: a row is one M or N index holding block_k elements), rows `pitch_bytes`
// apart (>= row_bytes; padding is a classic alternative to swizzling), then swizzled.
struct TileLayout {
  int rows = 0;
  int row_bytes = 0;
  int pitch_bytes = 0;  // 0 = row_bytes
  Swizzle swizzle;
  uint32_t base_addr = 0;  // byte offset of the tile in shared memory (swizzles assume 1024-aligned)

  uint32_t address(int row, int byte_in_row) const {
    const int pitch = pitch_bytes ? pitch_bytes : row_bytes;
    return swizzle(base_addr + uint32_t(row) * uint32_t(pitch) + uint32_t(byte_in_row));
  }
  // Convenience: a K-major operand tile of rows x cols elements of elem_bytes each.
  static TileLayout k_major(int rows, int cols, int elem_bytes, Swizzle sw, int pad_bytes = 0) {
    TileLayout t;
    t.rows = rows;
    t.row_bytes = cols * elem_bytes;
    t.pitch_bytes = t.row_bytes + pad_bytes;
    t.swizzle = sw;
    return t;
  }
};

// One warp instruction: the first byte each thread touches and the bytes per thread (4, 8 or 16).
struct WarpAccess {
  std::array<uint32_t, 32> addr{};
  uint32_t active = 0xffffffffu;  // threads taking part
  int bytes = 4;
  bool is_store = false;  // only for reporting
};

struct ConflictResult {
  int wavefronts = 0;  // what the instruction costs
  int ideal = 0;       // what it would cost without conflicts (one per 128-byte phase)
  // 1.0 = conflict free; 8.0 = every phase serialized 8 ways.
  double degree() const { return ideal ? double(wavefronts) / double(ideal) : 1.0; }
};

// The wavefront count of one warp instruction.
ConflictResult simulate(const WarpAccess& access);

// Access patterns of the common instructions on a TileLayout. `row0`/`byte0` locate the block the
// warp works on inside the tile.
//
// ldmatrix.x4 (and stmatrix.x4): a 16-row x 32-byte block (16x16 of 16-bit elements), threads
// 0-7 address rows 0-7 at byte 0, 8-15 rows 8-15 at byte 0, 16-23 rows 0-7 at byte 16, 24-31
// rows 8-15 at byte 16 (the A-operand order of mma.m16n8k16; the B order has the same phases).
WarpAccess ldmatrix_x4(const TileLayout& t, int row0, int byte0);
WarpAccess stmatrix_x4(const TileLayout& t, int row0, int byte0);
// 32 threads each storing 16 bytes (cp.async.cg 16): consecutive threads take consecutive 16-byte
// chunks of the tile in row order, starting at chunk `first_chunk` (the global-memory-coalesced
// order every cp.async loader uses).
WarpAccess cp_async_16(const TileLayout& t, int first_chunk);
// 32 threads each loading `bytes` (4, 8, 16) contiguous along a row of the tile, starting at
// (row0, byte0), wrapping to the next row when a row is exhausted.
WarpAccess row_load(const TileLayout& t, int row0, int byte0, int bytes);

// Conflict degree of a whole tile under one instruction kind: the mean wavefronts/ideal over every
// warp instruction needed to cover the tile once (ldmatrix: every 16x32-byte block; cp.async: every
// 512-byte group of chunks). Tiles whose rows are shorter than the instruction needs return 1.
enum class TileOp { Ldmatrix, Stmatrix, CpAsync16, Load4, Load8, Load16 };
const char* tile_op_name(TileOp op);
double tile_conflict_degree(const TileLayout& t, TileOp op);

}  // namespace banksim
}  // namespace dgemm
