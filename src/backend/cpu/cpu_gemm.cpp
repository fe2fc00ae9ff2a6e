// The CPU reference GEMM (the numerical oracle). Structure, from simple to fast:
//   - the output of every batch is cut into tiles of MC x NC; each tile is one independent task
//     (OpenMP over batches x tiles), so no two threads ever touch the same element of D;
//   - a task walks K in blocks of KC: it converts op(A) and op(B) of that block ONCE into
//     contiguous double panels (MR rows / NR columns interleaved), and a register-blocked
//     MR x NR micro-kernel accumulates into a double tile;
//   - after the last K block the epilogue runs element by element in double and rounds once to
//     the output type, reading C(i, j) just before writing D(i, j), so C may alias D;
//   - the panels and the tile of each thread live in the workspace the plan asks for (sized at
//     plan time for the problem and the thread count), so an execution allocates nothing.
// Accumulation in double is exact for every product of our input types (at most 24 x 24
// significant bits) and, for i8 x i8 problems, the whole sum is exact as long as
// k * 2^14 < 2^53 (k < 2^39, far beyond any addressable problem), so integer problems need no
// separate integer kernel: the epilogue sees the exact int64 value.
#include "backend/cpu/cpu_gemm.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/error.hpp"
#include "core/float_convert.hpp"
#include "core/scaling.hpp"

namespace dgemm {
namespace {

constexpr int kMR = 6;        // micro-tile rows: 6 x 2 vector accumulators hide the FMA latency
constexpr int kNR = 8;        // micro-tile columns (two 4-wide double vectors)
constexpr int64_t kMC = 72;   // rows of a task's tile (a multiple of kMR)
constexpr int64_t kNC = 256;  // columns of a task's tile
constexpr int64_t kKC = 256;  // K block: an A micro-panel (12 KiB) and a B micro-panel (16 KiB) stay in L1
static_assert(kMC % kMR == 0 && kNC % kNR == 0, "scratch_shape clamps before rounding up to the micro-tile");

using v4d = double __attribute__((vector_size(32)));

// t[MR][NR] = sum over p < kc of a[p][0..MR) (x) b[p][0..NR), with 4-wide vectors: 12
// accumulators, which fit AVX2's 16 registers. Compiled for AVX2+FMA only.
__attribute__((always_inline)) inline void micro_kernel_4wide(int64_t kc, const double* a, const double* b,
                                                              double* t) {
  v4d c[kMR][2];
  for (int i = 0; i < kMR; ++i) c[i][0] = c[i][1] = v4d{0, 0, 0, 0};
  for (int64_t p = 0; p < kc; ++p) {
    v4d b0, b1;
    std::memcpy(&b0, b + p * kNR, sizeof b0);
    std::memcpy(&b1, b + p * kNR + 4, sizeof b1);
    const double* ap = a + p * kMR;
    for (int i = 0; i < kMR; ++i) {
      c[i][0] += ap[i] * b0;
      c[i][1] += ap[i] * b1;
    }
  }
  for (int i = 0; i < kMR; ++i) {
    std::memcpy(t + i * kNR, &c[i][0], 32);
    std::memcpy(t + i * kNR + 4, &c[i][1], 32);
  }
}

// The same product with 2-wide (SSE2, baseline x86-64) vectors, one half of NR at a time so the
// 12 accumulators fit the 16 SSE registers.
using v2d = double __attribute__((vector_size(16)));
__attribute__((always_inline)) inline void micro_kernel_2wide(int64_t kc, const double* a, const double* b,
                                                              double* t) {
  for (int half = 0; half < 2; ++half) {
    v2d c[kMR][2];
    for (int i = 0; i < kMR; ++i) c[i][0] = c[i][1] = v2d{0, 0};
    for (int64_t p = 0; p < kc; ++p) {
      v2d b0, b1;
      std::memcpy(&b0, b + p * kNR + half * 4, sizeof b0);
      std::memcpy(&b1, b + p * kNR + half * 4 + 2, sizeof b1);
      const double* ap = a + p * kMR;
      for (int i = 0; i < kMR; ++i) {
        c[i][0] += ap[i] * b0;
        c[i][1] += ap[i] * b1;
      }
    }
    for (int i = 0; i < kMR; ++i) {
      std::memcpy(t + i * kNR + half * 4, &c[i][0], 16);
      std::memcpy(t + i * kNR + half * 4 + 2, &c[i][1], 16);
    }
  }
}

// acc[mc][nc] (leading dimension ld) += packed A (mc rows) x packed B (nc columns) over kc.
template <void (*Micro)(int64_t, const double*, const double*, double*)>
__attribute__((always_inline)) inline void macro_kernel_body(int64_t mc, int64_t nc, int64_t kc, const double* ap,
                                                             const double* bp, double* acc, int64_t ld) {
  alignas(64) double t[kMR * kNR];
  for (int64_t jr = 0; jr < nc; jr += kNR) {
    const int64_t nr = std::min<int64_t>(kNR, nc - jr);
    for (int64_t ir = 0; ir < mc; ir += kMR) {
      const int64_t mr = std::min<int64_t>(kMR, mc - ir);
      Micro(kc, ap + ir * kc, bp + jr * kc, t);
      for (int64_t i = 0; i < mr; ++i)
        for (int64_t j = 0; j < nr; ++j) acc[(ir + i) * ld + jr + j] += t[i * kNR + j];
    }
  }
}

__attribute__((target("avx2,fma"))) void macro_kernel_avx2(int64_t mc, int64_t nc, int64_t kc, const double* ap,
                                                           const double* bp, double* acc, int64_t ld) {
  macro_kernel_body<micro_kernel_4wide>(mc, nc, kc, ap, bp, acc, ld);
}

void macro_kernel_generic(int64_t mc, int64_t nc, int64_t kc, const double* ap, const double* bp, double* acc,
                          int64_t ld) {
  macro_kernel_body<micro_kernel_2wide>(mc, nc, kc, ap, bp, acc, ld);
}

using MacroKernel = void (*)(int64_t, int64_t, int64_t, const double*, const double*, double*, int64_t);

MacroKernel pick_macro_kernel() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return macro_kernel_avx2;
  return macro_kernel_generic;
}

// Element (r, c) of op(X) is at base + r * rs + c * cs.
struct View {
  const void* base;
  int64_t rs, cs;
};

View op_view(const void* base, Op op, Order order, int64_t ld) {
  // Stored (row, col) is at row * ld + col (row-major) or row + col * ld (column-major);
  // op = T swaps the roles of row and column.
  int64_t row_stride = order == Order::RowMajor ? ld : 1;
  int64_t col_stride = order == Order::RowMajor ? 1 : ld;
  if (op == Op::T) std::swap(row_stride, col_stride);
  return {base, row_stride, col_stride};
}

// Outer indices [o0, o0 + count) and K range [p0, p0 + kc) of an operand whose element
// (outer, k) is at outer * os + k * ks, as ceil(count / W) micro-panels of kc x W doubles; outer
// indices past count are zero padding (never stored anywhere). op(A) is packed by rows
// (W = MR, os = rs, ks = cs), op(B) by columns (W = NR, os = cs, ks = rs).
template <DType T, int W>
void pack_panel(const void* base, int64_t os, int64_t ks, int64_t o0, int64_t count, int64_t p0, int64_t kc,
                double* out) {
  for (int64_t ir = 0; ir < count; ir += W) {
    double* panel = out + ir * kc;
    for (int64_t ii = 0; ii < W; ++ii) {
      if (ir + ii >= count) {
        for (int64_t p = 0; p < kc; ++p) panel[p * W + ii] = 0.0;
        continue;
      }
      const int64_t outer = (o0 + ir + ii) * os;
      for (int64_t p = 0; p < kc; ++p) panel[p * W + ii] = load_elem<T>(base, outer + (p0 + p) * ks);
    }
  }
}

// This batch's scale tensor (its base pointer moved by the batch stride).
const void* scale_base(const ScaleDesc& s, const void* base, int64_t batch) {
  return static_cast<const char*>(base) + batch * s.stride * int64_t(scale_type_size(s.type));
}

double activate(Activation act, double x) {
  switch (act) {
    case Activation::None: return x;
    case Activation::Relu: return x < 0.0 ? 0.0 : x;  // NaN stays NaN
    case Activation::GeluTanh: {
      const double k = 0.7978845608028654;  // sqrt(2 / pi)
      return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
    }
    case Activation::GeluErf: return 0.5 * x * (1.0 + std::erf(x * 0.7071067811865476));
    case Activation::Silu: return x / (1.0 + std::exp(-x));
  }
  return x;
}

// One row of a tile of a block-scaled FP8 output (the header's "Block-scaled output"): each
// 128-column block of D's row i gets the scale of its amax, and its values are divided by it.
// Tiles start at multiples of kNC (a multiple of 128), so no block straddles two tiles.
void store_block_scaled_row(const GemmProblem& p, const Epilogue& e, int64_t i, int64_t j0, int64_t nc,
                            const double* z, char* d_base, void* d_scales) {
  static_assert(kNC % kScaleBlock == 0, "a D scale block must not straddle two tiles");
  for (int64_t b0 = 0; b0 < nc; b0 += kScaleBlock) {
    const int64_t b1 = std::min(nc, b0 + kScaleBlock);
    double amax = 0;
    for (int64_t jj = b0; jj < b1; ++jj) amax = amax_update(amax, z[jj]);
    const double scale = output_block_scale(amax, p.d_type, e.d_scale.type);
    store_scale(e.d_scale.type, d_scales, e.d_scale.index(i, j0 + b0), scale);
    for (int64_t jj = b0; jj < b1; ++jj)
      store_from_double(p.d_type, d_base, p.offset(i, j0 + jj, p.ldd), z[jj] / scale, e.saturate);
  }
}

// Everything a task needs, resolved once per call.
struct Job {
  const GemmProblem* p;
  const Epilogue* e;
  const ExecArgs* args;
  double alpha, beta;
  bool read_c;
  MacroKernel macro;

  // Index into an epilogue vector for element (i, j) of batch `batch`. Plain batches share one
  // vector; a grouped problem has one per group, packed (deepgemm.h, "grouped problems").
  int64_t vector_index(VectorMode mode, int64_t batch, int64_t i, int64_t j) const {
    const int64_t g = p->grouping.grouped() ? batch : 0;
    switch (mode) {
      case VectorMode::PerTensor: return g;
      case VectorMode::PerColumn: return g * p->n + j;
      case VectorMode::PerRow: return p->grouping.masked() ? g * p->m + i : i;
      case VectorMode::None: break;
    }
    return 0;
  }
};

// One thread's scratch, carved out of the workspace: packed panels of op(A) and op(B) for one K
// block, and the double accumulator tile (leading dimension acc_ld).
struct Scratch {
  double* a_panel;
  double* b_panel;
  double* acc;
  double* col_scale;  // the tile's per-column factor of B's non-block scale
  double* row_out;    // one row of the tile before a block-scaled store
  double* amax;       // max |y| over this thread's tiles (AMAX_D)
  int64_t acc_ld;
  // Block input scales (VEC128, BLK128x128) only: one K block's unscaled product (leading
  // dimension acc_ld) and the scales of its rows and columns.
  double* block_tile;
  double* block_row;
  double* block_col;
};

constexpr std::size_t kWorkspaceAlign = 64;  // cache lines; the caller's pointer may be anywhere

int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

// Doubles of one thread's scratch for `p`, laid out as in Scratch (A panel, B panel, tile, one
// row for the column scales, one for block-scaled output, amax, and with block input scales a
// second tile, its row and column scales): no larger than the problem needs (a 1x1x1 GEMM needs a
// few hundred bytes, not a full 72 x 256 x 256 block).
struct ScratchShape {
  int64_t a_doubles, b_doubles, acc_rows, acc_ld, block_doubles;
  std::size_t bytes() const {
    const std::size_t doubles =
        std::size_t(a_doubles + b_doubles + acc_rows * acc_ld + 2 * acc_ld + 1 + block_doubles);
    return std::size_t(round_up(int64_t(doubles * sizeof(double)), kWorkspaceAlign));
  }
};

ScratchShape scratch_shape(const GemmProblem& p) {
  const int64_t kc_max = std::min(kKC, std::max<int64_t>(p.k, 1));
  ScratchShape s;
  // (kMC and kNC are multiples of kMR and kNR, so clamping first is the same and cannot overflow
  // for an m or n near 2^63.)
  s.a_doubles = round_up(std::min(kMC, p.m), kMR) * kc_max;  // pack_panel pads rows to a multiple of MR
  s.b_doubles = round_up(std::min(kNC, p.n), kNR) * kc_max;  // and columns to a multiple of NR
  s.acc_rows = std::min(kMC, p.m);
  s.acc_ld = std::min(kNC, p.n);
  const bool blocked = p.k > 0 && (p.a_scale.blocked() || p.b_scale.blocked());
  s.block_doubles = blocked ? s.acc_rows * s.acc_ld + s.acc_rows + s.acc_ld : 0;
  return s;
}

// The most batches (or groups) the backend keeps row ranges for in its workspace. The C boundary
// keeps batch_count below 2^31 (core/problem.cpp); callers of cpu_gemm that build a GemmProblem
// themselves (the tests' oracle) are held to this, past which the arrays below would overflow
// their byte count (fuzz_c_api_v11) and no memory could hold them anyway.
constexpr int64_t kMaxBatches = int64_t(1) << 48;

// The per-batch row ranges and first task of each batch: 3 * batch_count + 1 integers.
std::size_t batch_arrays_bytes(const GemmProblem& p) {
  return std::size_t(round_up(int64_t((3 * p.batch_count + 1) * sizeof(int64_t)), kWorkspaceAlign));
}

// Threads only pay off past a few hundred thousand multiply-adds; tiny problems (most of a test
// sweep) stay on the calling thread.
int wanted_threads(const GemmProblem& p) {
  const double work = double(p.m) * double(p.n) * double(std::max<int64_t>(p.k, 1)) * double(p.batch_count);
  // In double: batch_count x tiles may exceed int64 (contiguous groups bound neither).
  const double tasks = double(p.batch_count) * std::ceil(double(p.m) / kMC) * std::ceil(double(p.n) / kNC);
  if (tasks > 1 && work > 2e5) return int(std::min<double>(omp_get_max_threads(), tasks));
  return 1;
}

// One MC x NC tile of D for one batch.
void run_tile(const Job& job, int64_t batch, int64_t i0, int64_t mc, int64_t j0, int64_t nc, const Scratch& s) {
  const GemmProblem& p = *job.p;
  const Epilogue& e = *job.e;
  const ExecArgs& x = *job.args;
  double* acc = s.acc;
  std::fill(acc, acc + mc * s.acc_ld, 0.0);

  if (p.k > 0) {
    const View a = op_view(static_cast<const char*>(x.a) + batch * p.stride_a * int64_t(dtype_size(p.a_type)),
                           p.op_a, p.order, p.lda);
    const View b = op_view(static_cast<const char*>(x.b) + batch * p.stride_b * int64_t(dtype_size(p.b_type)),
                           p.op_b, p.order, p.ldb);
    // Block scales (VEC128, BLK128x128) multiply each K block's partial sum P, as deepgemm.h
    // defines acc = sum over kb of sa * sb * P: the K loop then steps one block at a time, and the
    // product of the unscaled panels is scaled as a whole. (Scaling the panels' elements instead
    // is the same sum, regrouped, only while every scale is finite: an infinite scale times a zero
    // element made a NaN that sa * sb * P, with P != 0, does not have. fuzz_c_api_v11.)
    const bool blocked = p.a_scale.blocked() || p.b_scale.blocked();
    static_assert(kKC % kScaleBlock == 0, "a K block must not straddle two K steps");
    const int64_t step = blocked ? kScaleBlock : kKC;
    const void* a_scales = p.a_scale.blocked() ? scale_base(p.a_scale, x.a_scale, batch) : nullptr;
    const void* b_scales = p.b_scale.blocked() ? scale_base(p.b_scale, x.b_scale, batch) : nullptr;
    for (int64_t p0 = 0; p0 < p.k; p0 += step) {
      const int64_t kc = std::min(step, p.k - p0);
      dispatch_dtype(p.a_type, [&](auto t) {
        pack_panel<decltype(t)::value, kMR>(a.base, a.rs, a.cs, i0, mc, p0, kc, s.a_panel);  // rows of op(A)
      });
      dispatch_dtype(p.b_type, [&](auto t) {
        pack_panel<decltype(t)::value, kNR>(b.base, b.cs, b.rs, j0, nc, p0, kc, s.b_panel);  // columns of op(B)
      });
      if (!blocked) {
        job.macro(mc, nc, kc, s.a_panel, s.b_panel, acc, s.acc_ld);
        continue;
      }
      std::fill(s.block_tile, s.block_tile + mc * s.acc_ld, 0.0);
      job.macro(mc, nc, kc, s.a_panel, s.b_panel, s.block_tile, s.acc_ld);
      for (int64_t ii = 0; ii < mc; ++ii)
        s.block_row[ii] = a_scales ? load_scale(p.a_scale.type, a_scales, p.a_scale.index(i0 + ii, p0)) : 1.0;
      for (int64_t jj = 0; jj < nc; ++jj)
        s.block_col[jj] = b_scales ? load_scale(p.b_scale.type, b_scales, p.b_scale.index(j0 + jj, p0)) : 1.0;
      for (int64_t ii = 0; ii < mc; ++ii) {
        double* row = acc + ii * s.acc_ld;
        const double* part = s.block_tile + ii * s.acc_ld;
        for (int64_t jj = 0; jj < nc; ++jj) row[jj] += s.block_row[ii] * s.block_col[jj] * part[jj];
      }
    }
  }

  // Scales that do not vary along K multiply the finished sum: sa(i) * sb(j) * acc.
  const bool outer_a = p.k > 0 && p.a_scale.active() && !p.a_scale.blocked();
  const bool outer_b = p.k > 0 && p.b_scale.active() && !p.b_scale.blocked();
  const void* a_outer = outer_a ? scale_base(p.a_scale, x.a_scale, batch) : nullptr;
  if (outer_b) {
    const void* b_scales = scale_base(p.b_scale, x.b_scale, batch);
    for (int64_t jj = 0; jj < nc; ++jj) s.col_scale[jj] = load_scale(p.b_scale.type, b_scales, p.b_scale.index(j0 + jj, 0));
  }
  const bool block_out = e.d_scale.active();
  void* d_scales = block_out ? const_cast<void*>(scale_base(e.d_scale, x.d_scale, batch)) : nullptr;

  const char* c_base = job.read_c ? static_cast<const char*>(x.c) + batch * p.stride_c * int64_t(dtype_size(p.c_type))
                                  : nullptr;
  char* d_base = static_cast<char*>(x.d) + batch * p.stride_d * int64_t(dtype_size(p.d_type));
  for (int64_t ii = 0; ii < mc; ++ii) {
    const int64_t i = i0 + ii;
    const double row_scale = outer_a ? load_scale(p.a_scale.type, a_outer, p.a_scale.index(i, 0)) : 1.0;
    for (int64_t jj = 0; jj < nc; ++jj) {
      const int64_t j = j0 + jj;
      // k = 0: the product is empty, so it contributes nothing (not alpha * 0, which is NaN for
      // an infinite alpha).
      double v = 0.0;
      if (p.k > 0) {
        double sum = acc[ii * s.acc_ld + jj];
        if (outer_a || outer_b) sum *= row_scale * (outer_b ? s.col_scale[jj] : 1.0);
        v = job.alpha * sum;
      }
      if (job.read_c) v += job.beta * load_as_double(p.c_type, c_base, p.offset(i, j, p.ldc));
      if (e.bias_mode != VectorMode::None)
        v += load_as_double(e.bias_type, x.bias, job.vector_index(e.bias_mode, batch, i, j));
      v = activate(e.activation, v);
      if (e.amax_d) *s.amax = amax_update(*s.amax, v);
      if (e.scale_mode != VectorMode::None) {
        const int64_t s_idx = job.vector_index(e.scale_mode, batch, i, j);
        v *= double(x.scale[s_idx]);
        // The zero point is added to the rounded value, before saturation to [-128, 127].
        if (e.zero_point) v = std::nearbyint(v) + double(x.zero_point[s_idx]);
      }
      if (block_out) {
        s.row_out[jj] = v;
      } else {
        store_from_double(p.d_type, d_base, p.offset(i, j, p.ldd), v, e.saturate);
      }
    }
    if (block_out) store_block_scaled_row(p, e, i, j0, nc, s.row_out, d_base, d_scales);
  }
}

}  // namespace

std::size_t cpu_gemm_workspace_size(const GemmProblem& p) {
  if (p.empty_output()) return 0;
  if (p.batch_count > kMaxBatches)
    fail(Status::NotSupported, "batch_count = ", p.batch_count, ": the CPU backend keeps three integers per ",
         p.grouping.grouped() ? "group" : "batch", " in its workspace, for at most 2^48");
  return kWorkspaceAlign + batch_arrays_bytes(p) + std::size_t(wanted_threads(p)) * scratch_shape(p).bytes();
}

void cpu_gemm(const GemmProblem& p, const Epilogue& e, const ExecArgs& args) {
  if (p.empty_output()) return;
  static const MacroKernel macro = pick_macro_kernel();

  // FROM_PLAN takes the epilogue's scalars (the C boundary also copies them into args, but direct
  // callers such as the GPU tests need not); HOST the args' values; DEVICE reads the pointers,
  // which are host memory on this backend. beta is only ever used when the plan reads C.
  Job job{&p, &e, &args, double(e.alpha), double(e.beta), e.reads_c(), macro};
  if (args.scalar_mode == ScalarMode::Host) {
    job.alpha = double(args.alpha);
    job.beta = double(args.beta);
  } else if (args.scalar_mode == ScalarMode::Device) {
    job.alpha = double(*args.alpha_ptr);
    job.beta = job.read_c ? double(*args.beta_ptr) : 0.0;
  }
  // BLAS: beta = 0 at run time does not read C (NaNs in C must not reach D), as the GPU epilogues.
  if (job.beta == 0.0) job.read_c = false;

  // Each thread's scratch, and the per-batch row ranges, come from the workspace; its slices
  // bound the threads (the thread count may have changed since the plan sized it). Callers inside
  // the library that pass none (the tests' oracle) get a buffer of their own.
  const ScratchShape shape = scratch_shape(p);
  std::vector<unsigned char> own;
  void* ws = args.workspace;
  std::size_t ws_size = args.workspace_size;
  if (ws == nullptr || ws_size < kWorkspaceAlign + batch_arrays_bytes(p) + shape.bytes()) {  // not one slice
    own.resize(cpu_gemm_workspace_size(p));
    ws = own.data();
    ws_size = own.size();
  }
  const auto base = (reinterpret_cast<std::uintptr_t>(ws) + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign;
  const std::size_t usable = ws_size - (base - reinterpret_cast<std::uintptr_t>(ws)) - batch_arrays_bytes(p);
  auto* row_begin = reinterpret_cast<int64_t*>(base);
  int64_t* row_end = row_begin + p.batch_count;
  int64_t* first_task = row_end + p.batch_count;  // batch_count + 1 entries
  const std::uintptr_t slices = base + batch_arrays_bytes(p);

  // The rows each batch computes: all m, or a group's rows after the clipping rule (which the C
  // boundary has already enforced as errors; direct callers, such as the GPU tests' oracle, get
  // the documented device-side behaviour).
  if (p.grouping.grouped()) {
    const GroupCheck check =
        resolve_group_rows(p.grouping, p.batch_count, p.m, args.group_offsets, args.group_counts, row_begin, row_end);
    if (args.group_status) *args.group_status = check.status;
  } else {
    std::fill(row_begin, row_begin + p.batch_count, int64_t(0));
    std::fill(row_end, row_end + p.batch_count, p.m);
  }
  // Tasks are numbered batch after batch; first_task[b] is batch b's first.
  const int64_t col_tiles = (p.n + kNC - 1) / kNC;
  first_task[0] = 0;
  int64_t total_rows = 0;
  for (int64_t b = 0; b < p.batch_count; ++b) {
    const int64_t batch_rows = row_end[b] - row_begin[b];
    total_rows += batch_rows;
    first_task[b + 1] = first_task[b] + (batch_rows + kMC - 1) / kMC * col_tiles;
  }
  const int64_t tasks = first_task[p.batch_count];

  // Threads only pay off past a few hundred thousand multiply-adds; tiny problems (most of a test
  // sweep) stay on the calling thread.
  const double work = double(total_rows) * double(p.n) * double(std::max<int64_t>(p.k, 1));
  int threads = 1;
  if (tasks > 1 && work > 2e5) threads = int(std::min<int64_t>(omp_get_max_threads(), tasks));
  threads = int(std::min<std::size_t>(std::size_t(threads), usable / shape.bytes()));
  auto scratch_of = [&](int thread) {
    auto* d = reinterpret_cast<double*>(slices + std::size_t(thread) * shape.bytes());
    double* acc = d + shape.a_doubles + shape.b_doubles;
    double* col_scale = acc + shape.acc_rows * shape.acc_ld;
    double* row_out = col_scale + shape.acc_ld;
    double* amax = row_out + shape.acc_ld;
    double* block_tile = amax + 1;
    double* block_row = block_tile + shape.acc_rows * shape.acc_ld;
    return Scratch{d, d + shape.a_doubles, acc, col_scale, row_out, amax, shape.acc_ld,
                   block_tile, block_row, block_row + shape.acc_rows};
  };

  auto task = [&](int64_t t, int thread) {
    const int64_t batch = std::upper_bound(first_task, first_task + p.batch_count + 1, t) - first_task - 1;
    const int64_t tile = t - first_task[batch];
    const int64_t i0 = row_begin[batch] + (tile / col_tiles) * kMC;
    const int64_t j0 = (tile % col_tiles) * kNC;
    run_tile(job, batch, i0, std::min(kMC, row_end[batch] - i0), j0, std::min(kNC, p.n - j0), scratch_of(thread));
  };
  for (int t = 0; t < threads; ++t) *scratch_of(t).amax = 0.0;
  // One thread runs outside OpenMP altogether: even a serialized parallel region allocates a
  // team in libgomp, and execute allocates nothing.
  if (threads == 1) {
    for (int64_t t = 0; t < tasks; ++t) task(t, 0);
  } else {
#pragma omp parallel for schedule(dynamic) num_threads(threads)
    for (int64_t t = 0; t < tasks; ++t) task(t, omp_get_thread_num());
  }
  if (e.amax_d) {
    double amax = 0;
    for (int t = 0; t < threads; ++t) amax = amax_update(amax, *scratch_of(t).amax);
    *args.amax_d = float(amax);
  }
}

}  // namespace dgemm
