// Shared-memory bank-conflict simulator (see bank_sim.hpp for the model).
#include "plan/bank_sim.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <sstream>
#include <tuple>

namespace dgemm {
namespace banksim {

Swizzle Swizzle::span_bytes(int span) {
  switch (span) {
    case 128: return Swizzle{3, 4, 3};
    case 64: return Swizzle{2, 4, 3};
    case 32: return Swizzle{1, 4, 3};
    default: return none();
  }
}

std::string Swizzle::name() const {
  if (bits == 0) return "none";
  std::ostringstream os;
  if (base == 4 && shift == 3 && bits >= 1 && bits <= 3) {
    os << (16 << bits) << "B";
  } else {
    os << "xor(" << bits << "," << base << "," << shift << ")";
  }
  return os.str();
}

ConflictResult simulate(const WarpAccess& access) {
  const int bytes = std::clamp(access.bytes, 1, 16);
  // Threads per 128-byte phase: 32 for 4-byte (and narrower) accesses, 16 for 8-byte, 8 for 16-byte.
  const int per_phase = bytes <= 4 ? 32 : 128 / bytes;
  ConflictResult r;
  for (int first = 0; first < 32; first += per_phase) {
    // Distinct words per bank in this phase; at most 32 threads x 4 words, so small arrays do.
    uint32_t words[32][32];
    int count[32] = {};
    bool any = false;
    for (int t = first; t < first + per_phase; ++t) {
      if (!((access.active >> t) & 1u)) continue;
      any = true;
      const uint32_t w0 = access.addr[t] / 4, w1 = (access.addr[t] + uint32_t(bytes) - 1) / 4;
      for (uint32_t w = w0; w <= w1; ++w) {
        const int bank = int(w % 32);
        bool seen = false;
        for (int i = 0; i < count[bank]; ++i) seen |= (words[bank][i] == w);
        if (!seen && count[bank] < 32) words[bank][count[bank]++] = w;
      }
    }
    if (!any) continue;
    r.wavefronts += *std::max_element(count, count + 32);
    r.ideal += 1;
  }
  return r;
}

namespace {
WarpAccess matrix_x4(const TileLayout& t, int row0, int byte0, bool store) {
  WarpAccess a;
  a.bytes = 16;
  a.is_store = store;
  for (int lane = 0; lane < 32; ++lane) {
    const int matrix = lane / 8, r = lane % 8;
    a.addr[lane] = t.address(row0 + r + 8 * (matrix & 1), byte0 + 16 * (matrix >> 1));
  }
  return a;
}
}  // namespace

WarpAccess ldmatrix_x4(const TileLayout& t, int row0, int byte0) { return matrix_x4(t, row0, byte0, false); }
WarpAccess stmatrix_x4(const TileLayout& t, int row0, int byte0) { return matrix_x4(t, row0, byte0, true); }

WarpAccess cp_async_16(const TileLayout& t, int first_chunk) {
  WarpAccess a;
  a.bytes = 16;
  a.is_store = true;
  const int per_row = std::max(1, t.row_bytes / 16);
  const int total = std::max(1, t.rows * per_row);
  for (int lane = 0; lane < 32; ++lane) {
    const int c = (first_chunk + lane) % total;
    a.addr[lane] = t.address(c / per_row, (c % per_row) * 16);
  }
  return a;
}

WarpAccess row_load(const TileLayout& t, int row0, int byte0, int bytes) {
  WarpAccess a;
  a.bytes = bytes;
  const int row_bytes = std::max(1, t.row_bytes);
  for (int lane = 0; lane < 32; ++lane) {
    const int linear = byte0 + lane * bytes;
    const int row = (row0 + linear / row_bytes) % std::max(1, t.rows);
    a.addr[lane] = t.address(row, linear % row_bytes);
  }
  return a;
}

const char* tile_op_name(TileOp op) {
  switch (op) {
    case TileOp::Ldmatrix: return "ldmatrix.x4";
    case TileOp::Stmatrix: return "stmatrix.x4";
    case TileOp::CpAsync16: return "cp.async.16";
    case TileOp::Load4: return "ld.shared.b32";
    case TileOp::Load8: return "ld.shared.b64";
    case TileOp::Load16: return "ld.shared.b128";
  }
  return "?";
}

namespace {

double tile_conflict_degree_uncached(const TileLayout& t, TileOp op) {
  long waves = 0, ideal = 0;
  auto add = [&](const WarpAccess& a) {
    ConflictResult r = simulate(a);
    waves += r.wavefronts;
    ideal += r.ideal;
  };
  switch (op) {
    case TileOp::Ldmatrix:
    case TileOp::Stmatrix:
      if (t.rows < 16 || t.row_bytes < 32) return 1.0;
      for (int r = 0; r + 16 <= t.rows; r += 16)
        for (int b = 0; b + 32 <= t.row_bytes; b += 32) add(matrix_x4(t, r, b, op == TileOp::Stmatrix));
      break;
    case TileOp::CpAsync16: {
      const int chunks = t.rows * (t.row_bytes / 16);
      if (chunks < 32) return 1.0;
      for (int c = 0; c + 32 <= chunks; c += 32) add(cp_async_16(t, c));
      break;
    }
    case TileOp::Load4:
    case TileOp::Load8:
    case TileOp::Load16: {
      const int bytes = op == TileOp::Load4 ? 4 : op == TileOp::Load8 ? 8 : 16;
      const long total = long(t.rows) * t.row_bytes;
      if (total < 32L * bytes) return 1.0;
      for (long off = 0; off + 32L * bytes <= total; off += 32L * bytes)
        add(row_load(t, int(off / t.row_bytes), int(off % t.row_bytes), bytes));
      break;
    }
  }
  return ideal ? double(waves) / double(ideal) : 1.0;
}

}  // namespace

double tile_conflict_degree(const TileLayout& t, TileOp op) {
  // Families describe the same few layouts for every candidate and every problem: remember them,
  // so that planning stays far below a millisecond (a 256-row tile is ~100 simulated instructions).
  using Key = std::tuple<int, int, int, int, int, int, uint32_t, int>;
  static std::mutex mutex;
  static std::map<Key, double> memo;
  const Key key{t.rows, t.row_bytes, t.pitch_bytes, t.swizzle.bits, t.swizzle.base, t.swizzle.shift, t.base_addr, int(op)};
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = memo.find(key);
    if (it != memo.end()) return it->second;
  }
  const double degree = tile_conflict_degree_uncached(t, op);
  std::lock_guard<std::mutex> lock(mutex);
  if (memo.size() > 65536) memo.clear();
  memo.emplace(key, degree);
  return degree;
}

}  // namespace banksim
}  // namespace dgemm
