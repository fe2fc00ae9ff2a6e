// The sm90 family's launcher: generates the kernel source for a plan (tile, stages, cluster,
// operand majors, swap-AB, the fused epilogue), compiles it through the JIT cache and loads it at
// plan time, sizes the persistent grid from the co-resident cluster count, and at execute encodes
// the two TMA tensor maps for the call's pointers into the kernel's __grid_constant__ argument (on
// the host stack: no allocation) and launches on the caller's stream.
//
// Unaligned pointers: TMA needs 16-byte aligned global addresses. The planner has already made
// sure that leading dimensions and batch strides keep rows aligned, so only the base pointers can
// break the rule, and only at execute. For that case the planner chose a fallback configuration
// of a family that takes any pointer (PlanDecision::fallback, shown in the plan's description),
// which the backend prepared at plan time, so execute never compiles. (Describing the operand from
// the aligned address below it and shifting the box coordinates was tried: the TMA load then
// faults with an illegal instruction on the H200, sm90/NOTES.md.)
//
// Unaligned leading dimensions or batch strides (e.g. K = 4093 in bf16): the plan packs those
// operands (KernelConfig::pack_a / pack_b) into the caller's workspace, rows padded to 16 bytes,
// with one pack-kernel launch (from the same module) before the GEMM on the same stream; the
// tensor maps then describe the copy. A packed operand's pointer may have any 2-byte alignment.
#include "backend/cuda/sm90_gemm.hpp"

#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <sstream>

#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/kernel_args.hpp"
#include "backend/cuda/launcher.hpp"
#include "core/error.hpp"
#include "core/kernel_view.hpp"
#include "core/stream_k.hpp"
#include "core/tma_rules.hpp"
#include "kernels/common/gemm_params.cuh"

namespace dgemm {
namespace cuda {

namespace {
// Mirrors dg::sm90::GemmArgs (src/kernels/sm90/sm90_gemm.cuh) field for field.
struct alignas(64) Sm90GemmArgsHost {
  CUtensorMap tma_a;
  CUtensorMap tma_b;
  CUtensorMap tma_sa;
  CUtensorMap tma_sb;
  CUtensorMap tma_d;
  DgemmParams p;
  TileGrid tiles;
  int num_k_blocks;
  int store_d;
  const void* sa_blk;
  const void* sb_blk;
  long long sa_ld, sb_ld;
  int a_batch_step, b_batch_step;
  GroupArgs groups;
  void* d_scale;
  long long ds_row, ds_col, ds_batch;
  int sk_tiles, sk_ctas, sk_iters, sk_split;
  unsigned long long sk_token;
  unsigned long long* sk_flags;
  float* sk_partials;
  int box_short_bytes;
  TileDivs tile_divs;
};
static_assert(sizeof(CUtensorMap) == 128, "CUtensorMap is 128 bytes");
static_assert(offsetof(Sm90GemmArgsHost, p) == 640, "DgemmParams follows the five tensor maps");

// Mirrors dg::PackJob / dg::PackArgs (src/kernels/common/pack.cuh).
struct PackJobHost {
  const void* src;
  void* dst;
  long long inner, outer, src_ld, src_stride, dst_ld, dst_stride, rows, transposed;
};
struct PackArgsHost {
  PackJobHost job[2];
};
constexpr int kPackThreads = 256;
constexpr std::size_t kWorkspaceAlign = 256;
constexpr int kSm90ProducerWarpgroup = 128;

using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                   const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                   CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// cuTensorMapEncodeTiled from the driver, through the runtime (the library never links libcuda).
EncodeTiledFn encode_tiled_fn() {
  static EncodeTiledFn fn = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
      fn = reinterpret_cast<EncodeTiledFn>(p);
  });
  if (!fn) fail(Status::NotSupported, "the driver has no cuTensorMapEncodeTiled (needed by the sm90 family)");
  return fn;
}

bool aligned16(const void* ptr) { return (reinterpret_cast<std::uintptr_t>(ptr) & 15u) == 0; }
int cluster_size(const KernelConfig& c) {
  return std::max(1, c.cluster_m) * std::max(1, c.cluster_n) * std::max(1, c.cluster_k);
}

// The kernel's operand kind (dg::sm90 kOp*): 16-bit, the four fp8 pairs, or s8; -1 otherwise.
int operand_kind(DType a, DType b) {
  if (a == DType::BF16 && b == DType::BF16) return 0;
  if (a == DType::F16 && b == DType::F16) return 1;
  if (dtype_is_fp8(a) && dtype_is_fp8(b)) return 2 + (a == DType::F8E5M2 ? 2 : 0) + (b == DType::F8E5M2 ? 1 : 0);
  if (a == DType::I8 && b == DType::I8) return 6;
  return -1;
}
}  // namespace

int sm90_mainloop_scale(const ScaleDesc& s) {
  return s.mode == ScaleMode::Vec128 ? 1 : s.mode == ScaleMode::Blk128x128 ? 2 : 0;
}

namespace {
// The kernel's kAScale / kBScale: the main-loop mode, with dg::sm90::kScaleUE8M0 (4) or'ed in
// for UE8M0 scales.
int kernel_scale_param(const ScaleDesc& s) {
  const int mode = sm90_mainloop_scale(s);
  return mode != 0 && s.type == ScaleType::UE8M0 ? mode | 4 : mode;
}
}  // namespace

int sm90_threads(const KernelConfig& c) { return kSm90ProducerWarpgroup + (c.block_m >= 128 ? 256 : 128); }

namespace {
// Shared memory of the kernel with `store_chunks` staging boxes per consumer warpgroup (the
// layout of dg::sm90::Gemm: ring, per-stage scales, split-K parking, staging, barriers, tile
// scales, alignment slack).
int smem_bytes(const KernelConfig& c, const GemmProblem& p, int store_chunks, bool col_amax) {
  const KernelView v = kernel_view(canonical_operands(p), c.swap_ab);
  const int sa = sm90_mainloop_scale(v.a_scale), sb = sm90_mainloop_scale(v.b_scale);
  const int sa_size = int(scale_type_size(v.a_scale.type)), sb_size = int(scale_type_size(v.b_scale.type));
  const int stage = (c.block_m + c.block_n) * 128 + (sa == 1 ? (c.block_m * sa_size + 127) / 128 * 128 : 0) +
                    (sb == 1 ? (c.block_n * sb_size + 127) / 128 * 128 : 0);
  const int reduce = c.cluster_k > 1 ? c.block_m * c.block_n * 4 : 0;
  int bytes = c.stages * stage + reduce;
  if (store_chunks > 0) bytes = (bytes + 1023) / 1024 * 1024 + (c.block_m >= 128 ? 2 : 1) * store_chunks * 64 * 128;
  // A transposed block-scaled D: every consumer warp's column maxima (kColAmaxBytes), and for
  // 64-row tiles in pairs two slots of the peer's and their two barriers (kPairAmax).
  const bool pair = col_amax && c.cluster_m == 2;
  const bool pair_global = col_amax && c.block_m == 64 && cluster_size(c) == 1;  // one more row: the combined maxima
  if (col_amax) bytes += ((c.block_m >= 128 ? 8 : 4) + (pair ? 2 : 0) + (pair_global ? 1 : 0)) * c.block_n * 4;
  const int barriers = ((2 * c.stages + 2 + (pair ? 2 : 0)) * 8 + 15) / 16 * 16;
  const int block_k = dtype_size(v.a_type) == 1 ? 128 : 64;
  const int kb = int((p.k + block_k - 1) / block_k), blk_row = (kb + 3) / 4 * 4 * 4;
  // KA's row, then KB's (two rows when a tile's columns straddle two 128-column scale blocks).
  const int blk_rows = 1 + (sb == 2 && 128 % c.block_n != 0 ? 2 : 1);
  const int blk = (sa == 2 || sb == 2) ? blk_rows * blk_row : 0;
  return bytes + barriers + blk + 1024;
}
}  // namespace

int sm90_store_chunks(const KernelConfig& c, const GemmProblem& problem, const Epilogue* e) {
  const GemmProblem p = canonical_operands(problem);
  const KernelView v = kernel_view(p, c.swap_ab);
  const bool sixteen = p.d_type == DType::F16 || p.d_type == DType::BF16;
  const bool eight = e && e->d_scale.active() && dtype_is_fp8(p.d_type);
  // The i8 sums stored as they are (the kernel's EpilogueOp::kExactInt).
  const bool exact32 = e && p.d_type == DType::I32 && p.a_type == DType::I8 && !e->reads_c() && !e->amax_d &&
                       e->bias_mode == VectorMode::None && e->activation == Activation::None &&
                       e->scale_mode == VectorMode::None && epilogue_in_scale(v.a_scale) == 0 &&
                       epilogue_in_scale(v.b_scale) == 0;
  const int box_cols = 128 / int(dtype_size(p.d_type));  // a box row is 128 bytes
  // Rows per consumer warpgroup: 64 (the cooperative tiles' halves); ping-pong warpgroups hold
  // whole 128-row tiles and stage a 16-bit D 64 rows at a time.
  const int wg_rows = c.block_m >= 128 && c.variant != 1 ? c.block_m / 2 : c.block_m;
  const bool staged_rows = wg_rows == 64 || (c.variant == 1 && (sixteen || exact32) && wg_rows == 128);
  // Grouped: only the `_ts` kernels (KernelConfig::tma_store), over contiguous groups whose every
  // tile lies inside its group (m_alignment a multiple of BLOCK_M), a 16-bit D, no stream-K.
  const bool grouped_ok = !p.grouping.grouped() ||
                          (c.tma_store && p.grouping.contiguous() && p.grouping.m_alignment % c.block_m == 0 &&
                           sixteen && !c.stream_k && c.variant == 0);
  if (!(sixteen || eight || exact32) || v.out_transposed || !grouped_ok || !staged_rows || c.block_n % box_cols != 0)
    return 0;
  // Hopper: 227 KB per block after opt-in, 228 KB per SM (n CTAs: 1/n each, less 1 KB reserved).
  const int limit = c.blocks_per_sm > 1 ? 233472 / c.blocks_per_sm - 1024 : 232448;
  // Ping-pong, 16-bit D: one box at a time. The warpgroup's epilogue runs during the other's main
  // loop, so waiting for each box's read costs little, and two slots spilled 24 bytes at 128x128
  // (ptxas). An exact i32 D holds no converted values and takes as many as fit (128x128 i8: 2).
  const int most = c.variant == 1 && sixteen ? 1 : c.block_n / box_cols;
  for (int chunks = most; chunks > 0; --chunks)
    if ((c.block_n / box_cols) % chunks == 0 && smem_bytes(c, p, chunks, false) <= limit) return chunks;
  return 0;
}

bool sm90_trans_staged(const KernelConfig& c, const GemmProblem& problem, const Epilogue* e) {
  const GemmProblem p = canonical_operands(problem);
  const KernelView v = kernel_view(p, c.swap_ab);
  const bool sixteen = p.d_type == DType::F16 || p.d_type == DType::BF16;
  return v.out_transposed && sixteen && !(e && e->d_scale.active()) && (c.block_m == 64 || c.block_m == 128) &&
         c.variant == 0 && !p.grouping.grouped() && !c.stream_k && c.cluster_m <= 1 && c.block_n >= 16;
}

int sm90_trans_box_cols(const KernelConfig& c) {
  return c.block_n % 64 == 0 ? 64 : c.block_n % 32 == 0 ? 32 : c.block_n % 16 == 0 ? 16 : 8;
}

int sm90_smem_bytes(const KernelConfig& c, const GemmProblem& p, const Epilogue* e) {
  const bool col_amax = e && e->d_scale.active() && kernel_view(canonical_operands(p), c.swap_ab).out_transposed;
  return smem_bytes(c, p, sm90_store_chunks(c, p, e), col_amax);
}

jit::CompileRequest sm90_compile_request(const GemmProblem& problem, const Epilogue& e, const KernelConfig& c,
                                         const std::string& arch) {
  const GemmProblem p = canonical_operands(problem);
  if (c.family != Family::Sm90) fail(Status::InternalError, "sm90_compile_request given family ", family_name(c.family));
  // The operands' layouts as the kernel reads them: a transposed copy is K-major.
  const KernelView v = kernel_view(packed_problem(p, c), c.swap_ab);
  const int kind = operand_kind(v.a_type, v.b_type);
  if (kind < 0)
    fail(Status::NotSupported, "the sm90 family takes f16, bf16, fp8 or i8 A and B, not ", dtype_name(p.a_type), " and ",
         dtype_name(p.b_type));
  const int block_k = dtype_size(v.a_type) == 1 ? 128 : kSm90BlockK;
  if (c.block_k != block_k) fail(Status::InternalError, "sm90 ", dtype_name(v.a_type), " kernels use BLOCK_K = ", block_k, ", ", c.name(), " has ", c.block_k);
  if (dtype_size(v.a_type) == 1 && !(v.a_kmajor && v.b_kmajor))
    fail(Status::NotSupported, "sm90 family: 8-bit operands must both be K-major");
  // variant 1: ping-pong consumer warpgroups (sm90_gemm.cuh kPingPong).
  if (c.variant == 1 && (c.block_m != 128 || cluster_size(c) > 1 || sm90_mainloop_scale(v.a_scale) != 0 ||
                         sm90_mainloop_scale(v.b_scale) != 0 || p.grouping.grouped() || e.d_scale.active() ||
                         c.block_n > 128))
    fail(Status::InternalError, "sm90: ", c.name(), ": ping-pong warpgroups take 128-row tiles of at most 128 columns, no cluster, "
         "no block-scaled inputs (promoted in the main loop), not grouped, not a block-scaled D");
  if (c.variant > 1) fail(Status::InternalError, "sm90: ", c.name(), ": unknown variant");
  if (c.stream_k && cluster_size(c) > 1)
    fail(Status::InternalError, "sm90: ", c.name(), ": stream-K takes one CTA per work unit (no cluster)");
  // One kind of cluster, but for 64-row swap tiles of a block-scaled D in pairs along M (which
  // share nothing but their column maxima) splitting K as well (the kernel's kPairAmax).
  const bool pair_split_k = c.cluster_m == 2 && c.cluster_k > 1 && c.cluster_n == 1 && c.block_m == 64 &&
                            e.d_scale.active() && v.swap_operands && v.out_transposed && c.cluster_k <= 4;
  if ((c.cluster_m > 1) + (c.cluster_n > 1) + (c.cluster_k > 1) > 1 && !pair_split_k)
    fail(Status::InternalError, "sm90: ", c.name(), " asks for more than one kind of cluster");
  if (c.cluster_n > 2 || c.cluster_m > 2)
    fail(Status::InternalError, "sm90: ", c.name(), ": clusters share an operand between 2 CTAs at most");
  if (c.threads != sm90_threads(c)) fail(Status::InternalError, "sm90: ", c.name(), " needs ", sm90_threads(c), " threads");
  if (p.grouping.grouped() && (cluster_size(c) > 1 || v.swap_operands || v.out_transposed))
    fail(Status::InternalError, "sm90: ", c.name(), " cannot run a grouped problem (clusters, swapped or transposed views)");
  if (c.tma_store && !(p.grouping.contiguous() && p.grouping.m_alignment % c.block_m == 0 && !c.stream_k))
    fail(Status::InternalError, "sm90: ", c.name(), ": the TMA-stored grouped epilogue (_ts) takes contiguous groups ",
         "aligned to BLOCK_M and no stream-K");
  std::ostringstream src;
  src << "// Generated by DeepGEMM: sm90 family, " << c.name() << ", " << dtype_name(p.a_type) << " operands, A "
      << (v.a_kmajor ? "K" : "M") << "-major, B " << (v.b_kmajor ? "K" : "N") << "-major"
      << (v.swap_operands ? ", A and B swapped" : "") << (v.out_transposed ? ", D stored transposed" : "") << ".\n"
      << "#include \"sm90/sm90_gemm.cuh\"\n\n"
      << epilogue_struct("DgEpilogue", p, e, v) << "\n"
      << "using DgSm90Gemm = dg::sm90::Gemm<" << c.block_m << ", " << c.block_n << ", " << c.stages << ", " << kind
      << ", " << (v.a_kmajor ? "true" : "false") << ", " << (v.b_kmajor ? "true" : "false") << ", "
      << std::max(1, c.cluster_m) << ", " << std::max(1, c.cluster_k) << ", DgEpilogue, " << std::max(1, c.blocks_per_sm)
      << ", " << kernel_scale_param(v.a_scale) << ", " << kernel_scale_param(v.b_scale) << ", "
      << int(p.grouping.layout) << ", " << sm90_store_chunks(c, p, &e)
      // Written only when not 1 (0), so that the sources (and the cache keys) of every other kernel stay as they were.
      << (c.cluster_n > 1 || c.variant == 1 || c.stream_k ? ", " + std::to_string(std::max(1, c.cluster_n)) : std::string())
      << (c.variant == 1 || c.stream_k ? ", " + std::to_string(c.variant) : std::string())
      << (c.stream_k ? ", 1" : "") << ">;\n"
      << "DGEMM_SM90_DEFINE_KERNEL(" << kSm90Kernel << ", DgSm90Gemm)\n";
  if (c.pack_a || c.pack_b)
    src << "\n#include \"common/pack.cuh\"\nDGEMM_DEFINE_PACK_KERNEL(" << kSm90PackKernel << ")\n";
  jit::CompileRequest r;
  std::ostringstream name;
  name << c.name() << "_" << dtype_name(v.a_type) << "x" << dtype_name(v.b_type) << "_" << (v.a_kmajor ? "k" : "m")
       << (v.b_kmajor ? "k" : "n") << (v.out_transposed ? "_t" : "")
       << (p.grouping.contiguous() ? "_gc" : p.grouping.masked() ? "_gm" : "");
  r.name = name.str();
  r.source = src.str();
  r.arch = arch;
  return r;
}

namespace {

class Sm90Executable final : public Executable {
 public:
  Sm90Executable(const DeviceInfo& device, const GemmProblem& problem, const Epilogue& e, const KernelConfig& c,
                 std::unique_ptr<Executable> fallback)
      : device_(device.index), config_(c), fallback_(std::move(fallback)) {
    const GemmProblem p = canonical_operands(problem);  // as the planner saw it
    // The kernel reads packed operands from the workspace copy: check the layout it will see.
    const GemmProblem kp = packed_problem(p, c);
    const std::string layout = tma_layout_problem(kp);
    if (!layout.empty()) fail(Status::NotSupported, "sm90 family: ", layout);
    if ((c.pack_a || c.pack_b) && dtype_size(p.a_type) != 2)
      fail(Status::NotSupported, "sm90 family: packing copies 16-bit operands only");
    view_ = kernel_view(kp, c.swap_ab);
    // Kernel operand 0 (KA) is the problem's A unless the view swaps A and B.
    for (int op = 0; op < 2; ++op) {
      const int which = view_.swap_operands ? 1 - op : op;
      if (!(which == 0 ? c.pack_a : c.pack_b)) continue;
      pack_[op].on = true;
      pack_[op].layout = pack_layout(p, which, which == 0 ? c.pack_a_t : c.pack_b_t);
      pack_[op].offset = workspace_;
      workspace_ += (std::size_t(pack_[op].layout.bytes()) + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign;
    }
    if (workspace_ > 0) workspace_ += kWorkspaceAlign;  // the caller's pointer is aligned up inside
    encode_ = encode_tiled_fn();
    code_ = jit::compile(sm90_compile_request(p, e, c, device.arch));
    module_ = std::make_unique<Module>(*code_);
    smem_ = sm90_smem_bytes(c, p, &e);
    kernel_ = module_->kernel(kSm90Kernel, smem_);
    // The TMA-stored epilogue, where the kernel has it and D's rows and batches keep TMA's 16-byte
    // rule (its base pointer is checked per call).
    store_chunks_ = sm90_store_chunks(c, p, &e);
    trans_staged_ = sm90_trans_staged(c, p, &e);
    trans_box_cols_ = sm90_trans_box_cols(c);
    d_esize_ = int64_t(dtype_size(p.d_type));
    d_dtype_ = d_esize_ == 1                ? CU_TENSOR_MAP_DATA_TYPE_UINT8
               : p.d_type == DType::I32      ? CU_TENSOR_MAP_DATA_TYPE_INT32
               : p.d_type == DType::F16      ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                             : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    c_bytes_ = e.reads_c() ? int64_t(dtype_size(p.c_type)) : 0;
    if (pack_[0].on || pack_[1].on) {
      pack_kernel_ = module_->kernel(kSm90PackKernel, 0);
      // Work items: one warp copies 1024 elements of one row (pack.cuh, kPackSegment), 8 warps per
      // block; a transposed copy moves one 64 x 64 tile per block.
      long long most = 0;
      for (const PackOperand& o : pack_) {
        if (!o.on) continue;
        const PackLayout& l = o.layout;
        most = std::max<long long>(most, l.transposed ? l.batch * ((l.dst_ld + 63) / 64) * ((l.inner + 63) / 64)
                                                      : (l.batch * l.outer * ((l.dst_ld + 1023) / 1024) + 7) / 8);
      }
      // Grid-stride copy: 8 resident blocks per SM are enough to saturate HBM.
      pack_grid_ = unsigned(std::min<long long>(most, 8LL * device.hw.sm_count));
      if (pack_grid_ == 0) pack_grid_ = 1;
    }
    esize_ = int64_t(dtype_size(view_.a_type));
    dtype_ = esize_ == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8
             : view_.a_type == DType::F16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    d_scale_ = e.d_scale;
    amax_ = e.amax_d;
    // A block-scaled D: X = D with tiles of whole 128-column blocks (epilogue_block_scaled), or
    // X = D^T stored transposed (swap-AB of a row-major D) with 128-row cooperative tiles
    // (epilogue_block_scaled_t); the planner's out_scale_problem asks the same.
    const bool block_d_rows = !view_.out_transposed && !view_.swap_operands && c.block_n % 128 == 0;
    const bool block_d_cols = view_.out_transposed && view_.swap_operands && c.variant == 0 && !p.grouping.grouped() &&
                              ((c.block_m == 128 && c.cluster_m == 1) ||
                               (c.block_m == 64 && c.cluster_m == 2 && c.blocks_per_sm == 1 && !c.stream_k) ||
                               (c.block_m == 64 && cluster_size(c) == 1 && c.blocks_per_sm == 1 && !c.stream_k));
    if (d_scale_.active() && !block_d_rows && !block_d_cols)
      fail(Status::InternalError, "sm90: ", c.name(), " cannot write a block-scaled D (BLOCK_N not a multiple of 128 ",
           "unswapped; swapped, 128-row cooperative tiles or 64-row tiles in pairs, of a row-major D only)");
    pair_global_ = block_d_cols && c.block_m == 64 && cluster_size(c) == 1;
    // Those pairs do not share B (the kernel's kShareB): each CTA loads it whole.
    b_share_ = d_scale_.active() && block_d_cols ? 1 : std::max(1, c.cluster_m);
    sa_mode_ = sm90_mainloop_scale(view_.a_scale);
    sb_mode_ = sm90_mainloop_scale(view_.b_scale);
    // Grouped problems take block scales per group (GroupArgs' strides); strided batches do not.
    if ((sa_mode_ || sb_mode_) && p.batch_count > 1 && !p.grouping.grouped())
      fail(Status::NotSupported, "sm90 family: block-scaled inputs with batch_count = ", p.batch_count);
    base_ = plan_params(kp, view_);
    batch_ = p.batch_count;
    tiles_ = tile_grid(view_, p.batch_count, c);
    tile_divs_ = tile_divs(tiles_);
    num_k_blocks_ = int((p.k + c.block_k - 1) / c.block_k);
    long long units = (long long)tile_divs_.m_units * tiles_.num_n_blocks * tiles_.batch_count;
    // Grouped: the rows per group come at run time; contiguous groups share the m rows, each group
    // at most one partial tile more (masked ones have m rows each: the count above).
    grouping_ = p.grouping;
    if (grouping_.contiguous()) units = (long long)(tiles_.num_m_blocks + p.batch_count) * tiles_.num_n_blocks;

    // Persistent grid: as many clusters as can be resident at once, never more than work units.
    const int csize = cluster_size(c);
    cudaLaunchConfig_t cfg = launch_config(nullptr, 1);
    cudaLaunchAttribute attr[1];
    int max_units = 0;
    if (csize > 1) {
      set_cluster(attr[0]);
      cfg.attrs = attr;
      cfg.numAttrs = 1;
      cfg.gridDim = dim3(unsigned(device.hw.sm_count / csize * csize));
      check(cudaOccupancyMaxActiveClusters(&max_units, reinterpret_cast<const void*>(kernel_), &cfg),
            "cudaOccupancyMaxActiveClusters (sm90 GEMM)");
    } else {
      int per_sm = 0;
      check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reinterpret_cast<const void*>(kernel_), c.threads,
                                                          std::size_t(smem_)),
            "cudaOccupancyMaxActiveBlocksPerMultiprocessor (sm90 GEMM)");
      max_units = per_sm * device.hw.sm_count;
    }
    if (max_units <= 0) fail(Status::NotSupported, "the sm90 kernel ", c.name(), " cannot be resident on this device");
    grid_ = unsigned(std::min<long long>(units, max_units) * csize);
    if (grid_ == 0) grid_ = unsigned(csize);
    if (c.stream_k) {
      // Every resident CTA takes a share (core/stream_k.hpp); the workspace holds one flag per
      // consumer warp and one partial tile per CTA that can leave one.
      // A grouped launch splits on the device, from the units the group rows give at run time
      // (sm90_gemm.cuh): every resident CTA may then hold a slot.
      sk_device_ = grouping_.grouped();
      sk_ = stream_k_split(long(units), long(max_units), long(num_k_blocks_), sk_device_);
      if (sk_.sk_tiles > 0 || sk_device_) {
        grid_ = unsigned(max_units);
        const std::size_t slots = sk_device_ ? std::size_t(max_units) : std::size_t(sk_.sk_ctas);
        sk_flags_offset_ = workspace_;
        workspace_ += (slots * 8 * sizeof(unsigned long long) + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign;
        sk_partials_offset_ = workspace_;
        workspace_ += slots * std::size_t(c.block_m) * std::size_t(c.block_n) * 4;
        workspace_ += kWorkspaceAlign;  // the caller's pointer is aligned up inside
      }
    }
    if (pair_global_) {
      // 64-row swap tiles pairing their column maxima through global memory (the kernel's
      // kPairGlobal): per tile one flag and BLOCK_N floats, in stream-K's fields. Tokens as there.
      const std::size_t tiles = std::size_t(tiles_.num_m_blocks) * std::size_t(tiles_.num_n_blocks) * std::size_t(tiles_.batch_count);
      sk_flags_offset_ = workspace_;
      workspace_ += (tiles * sizeof(unsigned long long) + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign;
      sk_partials_offset_ = workspace_;
      workspace_ += tiles * std::size_t(c.block_n) * 4;
      workspace_ += kWorkspaceAlign;  // the caller's pointer is aligned up inside
    }
    // Stream-K's and the pairs' flags are compared with a token of this executable and call, never
    // with a fixed value: a workspace not yet used by this plan may hold anything.
    sk_seed_ = reinterpret_cast<std::uintptr_t>(this) ^
               std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()) * 0x9e3779b97f4a7c15ull;
    // A K-major operand whose rows end inside the first tile (one row block of A, or one column
    // block of B: a swapped small M; no multicast, not grouped): a box of exactly its rows, so
    // that TMA does not zero-fill the rest of the tile every stage (the fill cost like a load:
    // fp8q M = 1 .. 33 1.02-1.12x faster, bench/RESULTS.md 2026-12-05 call 3). The kernel expects
    // that many fewer bytes; the stage's rows past the box are never stored. Fixed by the plan:
    // worked out here, not at every execute.
    const auto box_rows = [&](bool kmajor, int tile, int cluster, int64_t rows) {
      const int full = tile / std::max(1, cluster);
      if (!kmajor || cluster > 1 || grouping_.grouped() || rows >= tile) return full;
      box_short_bytes_ += (full - int(rows)) * 128;
      return int(rows);
    };
    a_box_rows_ = box_rows(view_.a_kmajor, c.block_m, c.cluster_n, base_.m);
    b_box_rows_ = box_rows(view_.b_kmajor, c.block_n, b_share_, base_.n);
  }

  std::size_t workspace_size() const override { return workspace_; }

  void run(const ExecArgs& x) const override {
    require_current_device(device_);
    DgemmParams prm = bind_call(base_, view_, x);
    if ((!pack_[0].on && !aligned16(prm.a)) || (!pack_[1].on && !aligned16(prm.b))) {
      if (!fallback_)
        fail(Status::InvalidArgument, "A = ", x.a, ", B = ", x.b, ": the sm90 kernel ", config_.name(),
             " needs 16-byte aligned operands and this plan holds no fallback");
      fallback_->run(x);
      return;
    }
    // amax of D: the epilogue raises it with atomicMax from 0 (stream-ordered, so a CUDA graph
    // captures it; the header's "overwritten, not combined").
    if (amax_) check(cudaMemsetAsync(x.amax_d, 0, sizeof(float), static_cast<cudaStream_t>(x.stream)), "cudaMemsetAsync (amax_d)");
    if (pack_[0].on || pack_[1].on) pack(x, prm);
    Sm90GemmArgsHost args;
    std::memset(&args, 0, sizeof(args));
    // (Box rows: the constructor's; a short box loads box_short_bytes_ fewer bytes a stage.)
    encode(&args.tma_a, prm.a, view_.a_kmajor, base_.m, base_.lda, base_.stride_a, a_box_rows_);
    encode(&args.tma_b, prm.b, view_.b_kmajor, base_.n, base_.ldb, base_.stride_b, b_box_rows_);
    args.box_short_bytes = box_short_bytes_;
    args.a_batch_step = batches(base_.stride_a) > 1 ? 1 : 0;
    args.b_batch_step = batches(base_.stride_b) > 1 ? 1 : 0;
    // Block input scales of KA and KB (the problem's A's and B's, swapped with them).
    const void* ka_scale = view_.swap_operands ? x.b_scale : x.a_scale;
    const void* kb_scale = view_.swap_operands ? x.a_scale : x.b_scale;
    if (sa_mode_ == 1) encode_scales(&args.tma_sa, ka_scale, view_.a_scale, base_.m, config_.block_m, "a_scale");
    if (sb_mode_ == 1) encode_scales(&args.tma_sb, kb_scale, view_.b_scale, base_.n, config_.block_n, "b_scale");
    // (Grouped kernels are not swapped, so KA's and KB's scales are A's and B's: their group
    // strides go in args.groups below.)
    if (sa_mode_ == 2) {
      args.sa_blk = ka_scale;
      args.sa_ld = view_.a_scale.layout == ScaleLayout::KMajor ? view_.a_scale.ld : -view_.a_scale.ld;
    }
    if (sb_mode_ == 2) {
      args.sb_blk = kb_scale;
      args.sb_ld = view_.b_scale.layout == ScaleLayout::KMajor ? view_.b_scale.ld : -view_.b_scale.ld;
    }
    if (d_scale_.active()) {
      // D's block scales: element (row, column block) of batch b (core/scaling.hpp, ScaleDesc::index).
      args.d_scale = x.d_scale;
      args.ds_row = d_scale_.layout == ScaleLayout::MnMajor ? 1 : d_scale_.ld;
      args.ds_col = d_scale_.layout == ScaleLayout::MnMajor ? d_scale_.ld : 1;
      args.ds_batch = d_scale_.stride;
    }
    args.store_d = store_d(prm) ? 1 : 0;
    if (args.store_d) encode_d(&args.tma_d, prm.d);
    args.p = prm;
    args.p.workspace = nullptr;  // the kernel itself needs none (packing used it above)
    args.p.workspace_size = 0;
    args.tiles = tiles_;
    args.tile_divs = tile_divs_;
    args.num_k_blocks = num_k_blocks_;
    if ((config_.stream_k && (sk_.sk_tiles > 0 || sk_device_)) || pair_global_) {
      const std::uintptr_t ws = (reinterpret_cast<std::uintptr_t>(x.workspace) + kWorkspaceAlign - 1) & ~(kWorkspaceAlign - 1);
      args.sk_tiles = int(sk_.sk_tiles);
      args.sk_ctas = int(sk_.sk_ctas);
      args.sk_iters = int(sk_.sk_iters);
      args.sk_split = sk_.split;
      args.sk_flags = reinterpret_cast<unsigned long long*>(ws + sk_flags_offset_);
      args.sk_partials = reinterpret_cast<float*>(ws + sk_partials_offset_);
      // splitmix64 of the seed and a per-call count; never 0 (the cleared value).
      std::uint64_t z = sk_seed_ + 0x9e3779b97f4a7c15ull * (sk_calls_.fetch_add(1, std::memory_order_relaxed) + 1);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      args.sk_token = (z ^ (z >> 31)) | 1ull;
    }
    if (grouping_.grouped()) {
      args.groups.rows = grouping_.contiguous() ? x.group_offsets : x.group_counts;
      args.groups.status = x.group_status;
      args.groups.groups = int(batch_);
      args.groups.alignment = int(grouping_.m_alignment);
      // Grouped kernels are not swapped: the kernel's rows are A's, its columns B's. Every mode's
      // tensor of group g is g * stride further (epilogue and block-scaled main loop alike).
      if (view_.a_scale.active()) args.groups.row_scale_stride = view_.a_scale.stride;
      if (view_.b_scale.active()) args.groups.col_scale_stride = view_.b_scale.stride;
    }
    cudaLaunchConfig_t cfg = launch_config(static_cast<cudaStream_t>(x.stream), grid_);
    // Programmatic dependent launch: the kernel's set-up may overlap the previous kernel on the
    // stream (it waits in griddepcontrol.wait before touching global memory).
    cudaLaunchAttribute attr[2];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    if (cluster_size(config_) > 1) set_cluster(attr[cfg.numAttrs++]);
    void* kargs[] = {&args};
    check(cudaLaunchKernelExC(&cfg, reinterpret_cast<const void*>(kernel_), kargs), "cudaLaunchKernelExC (sm90 GEMM)");
  }

 private:
  // Copies the operands that break TMA's row rule into the workspace, on the caller's stream ahead
  // of the GEMM (stream order makes the copy visible), and points prm at the copies.
  void pack(const ExecArgs& x, DgemmParams& prm) const {
    const std::uintptr_t ws = (reinterpret_cast<std::uintptr_t>(x.workspace) + kWorkspaceAlign - 1) & ~(kWorkspaceAlign - 1);
    PackArgsHost pa;
    std::memset(&pa, 0, sizeof(pa));
    int jobs = 0;
    const void* srcs[2] = {prm.a, prm.b};
    for (int op = 0; op < 2; ++op) {
      const PackOperand& o = pack_[op];
      if (!o.on) continue;
      void* dst = reinterpret_cast<void*>(ws + o.offset);
      PackJobHost& j = pa.job[jobs++];
      j.src = srcs[op];
      j.dst = dst;
      j.inner = o.layout.inner;
      j.outer = o.layout.outer;
      j.src_ld = o.layout.src_ld;
      j.src_stride = o.layout.src_stride;
      j.dst_ld = o.layout.dst_ld;
      j.dst_stride = o.layout.dst_stride;
      j.rows = o.layout.batch * o.layout.outer;
      j.transposed = o.layout.transposed ? 1 : 0;
      (op == 0 ? prm.a : prm.b) = dst;
    }
    cudaLaunchConfig_t pcfg{};
    pcfg.gridDim = dim3(pack_grid_, unsigned(jobs));
    pcfg.blockDim = dim3(kPackThreads);
    pcfg.stream = static_cast<cudaStream_t>(x.stream);
    void* pargs[] = {&pa};
    check(cudaLaunchKernelExC(&pcfg, reinterpret_cast<const void*>(pack_kernel_), pargs),
          "cudaLaunchKernelExC (sm90 operand packing)");
  }

  void set_cluster(cudaLaunchAttribute& a) const {
    a.id = cudaLaunchAttributeClusterDimension;
    a.val.clusterDim.x = unsigned(cluster_size(config_));
    a.val.clusterDim.y = 1;
    a.val.clusterDim.z = 1;
  }

  cudaLaunchConfig_t launch_config(cudaStream_t stream, unsigned grid) const {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(unsigned(config_.threads));
    cfg.dynamicSmemBytes = std::size_t(smem_);
    cfg.stream = stream;
    return cfg;
  }

  // The batches an operand's tensor map has: one when every batch shares it (stride 0; the kernel
  // then reads batch coordinate 0), else the problem's.
  int64_t batches(int64_t batch_stride) const { return batch_stride == 0 ? 1 : batch_; }

  // A 3-D map {inner, outer, batch} of an operand with 128-byte swizzle. K-major operands take
  // one box of {128 bytes of K, rows} per stage; MN-major (16-bit) ones boxes of {64 MN, 64 K}.
  void encode(CUtensorMap* out, const void* ptr, bool kmajor, int64_t mn, int64_t ld, int64_t batch_stride,
              int rows_per_box) const {
    const int64_t k = base_.k;
    const int64_t inner = kmajor ? k : mn, outer = kmajor ? mn : k;
    const int64_t nb = batches(batch_stride);
    cuuint64_t dims[3] = {cuuint64_t(inner), cuuint64_t(outer), cuuint64_t(nb)};
    // A batch of one still needs a valid (16-byte multiple) stride for its unit dimension.
    const int64_t bstride = nb > 1 ? batch_stride * esize_ : ((outer * ld * esize_ + 15) / 16) * 16;
    cuuint64_t strides[2] = {cuuint64_t(ld * esize_), cuuint64_t(bstride)};
    cuuint32_t box[3] = {cuuint32_t(128 / esize_), kmajor ? cuuint32_t(rows_per_box) : 64u, 1u};
    cuuint32_t elem_strides[3] = {1u, 1u, 1u};
    CUresult r = encode_(out, dtype_, 3, const_cast<void*>(ptr), dims, strides, box, elem_strides,
                         CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                         CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
      fail(Status::DeviceError, "cuTensorMapEncodeTiled failed (", int(r), ") for an operand of ", inner, " x ", outer,
           " x ", nb, ", leading dimension ", ld);
  }

  // Whether this call's epilogue may store D through TMA: the kernel has the staging buffer, D's
  // base, rows and batches are 16-byte aligned, and neither C (unless it is D itself) nor the bias
  // overlaps D (the stores are asynchronous: a later tile's loads are not ordered after them).
  bool store_d(const DgemmParams& prm) const {
    if ((store_chunks_ == 0 && !trans_staged_) || !aligned16(prm.d) || (base_.ldd * d_esize_) % 16 != 0) return false;
    if (batch_ > 1 && (base_.stride_d * d_esize_) % 16 != 0) return false;
    const auto addr = [](const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr); };
    const std::uintptr_t d0 = addr(prm.d);
    // X = D, or X = D^T (trans_staged_: X's columns are D's rows).
    const int64_t d_rows = trans_staged_ ? base_.n : base_.m, d_cols = trans_staged_ ? base_.m : base_.n;
    const std::uintptr_t d1 =
        d0 + std::uintptr_t(((batch_ - 1) * base_.stride_d + (d_rows - 1) * base_.ldd + d_cols) * d_esize_);
    const auto overlaps = [&](const void* ptr, int64_t bytes) {
      return ptr != nullptr && addr(ptr) < d1 && d0 < addr(ptr) + std::uintptr_t(bytes);
    };
    if (overlaps(prm.bias, 8 * std::max(base_.m, base_.n) * batch_)) return false;
    if (c_bytes_ > 0 && !(prm.c == prm.d && base_.ldc == base_.ldd && base_.stride_c == base_.stride_d) &&
        overlaps(prm.c, ((batch_ - 1) * base_.stride_c + d_rows * base_.ldc) * c_bytes_ + 16))
      return false;
    return true;
  }

  // The 3-D map {cols, rows, batch} of the kernel's (row-major, 16-bit, FP8 or i32) X = D, boxes of 64
  // rows x 128 bytes with 128B swizzle: the layout the epilogue stages its boxes in.
  // Contiguous groups share one D (stride_d = 0): a one-batch map, stored at batch 0.
  // A transposed X (trans_staged_) is D^T: the map is D's own {X rows, X columns, batch}, boxes of
  // 64 X rows x trans_box_cols_ X columns.
  void encode_d(CUtensorMap* out, void* d) const {
    const int64_t nb = grouping_.contiguous() ? 1 : batch_;
    const int64_t d_rows = trans_staged_ ? base_.n : base_.m, d_cols = trans_staged_ ? base_.m : base_.n;
    cuuint64_t dims[3] = {cuuint64_t(d_cols), cuuint64_t(d_rows), cuuint64_t(nb)};
    const int64_t bstride =
        nb > 1 ? base_.stride_d * d_esize_ : ((d_rows * base_.ldd * d_esize_ + 15) / 16) * 16;
    cuuint64_t strides[2] = {cuuint64_t(base_.ldd * d_esize_), cuuint64_t(bstride)};
    cuuint32_t box[3] = {cuuint32_t(128 / d_esize_), cuuint32_t(trans_staged_ ? trans_box_cols_ : 64), 1u};
    cuuint32_t elem_strides[3] = {1u, 1u, 1u};
    CUresult r = encode_(out, d_dtype_, 3, d, dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                         CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
      fail(Status::DeviceError, "cuTensorMapEncodeTiled failed (", int(r), ") for D of ", base_.m, " x ", base_.n,
           " x ", batch_, ", leading dimension ", base_.ldd);
  }

  // A 2-D map {outer, K blocks} of an operand's VEC128 scales, f32 or UE8M0 bytes (MN-major: the
  // outer index is contiguous, a column per K block): one box of the tile's rows per stage.
  // A kScaleVec128 tensor: {outer, K blocks}, or for a grouped plan {outer, K blocks, groups}
  // with the groups s.stride apart (one group when they share it), read with the group as the
  // third coordinate (sm90_gemm.cuh). The planner has checked the 16-byte rules of ld and stride.
  void encode_scales(CUtensorMap* out, const void* ptr, const ScaleDesc& s, int64_t outer, int rows, const char* name) const {
    if (!aligned16(ptr))
      fail(Status::InvalidArgument, "scale_args->", name, " = ", ptr, ": this plan reads it with TMA (16-byte aligned)");
    const bool grouped = grouping_.grouped();
    const bool per_group = grouped && s.stride != 0 && batch_ > 1;
    cuuint64_t dims[3] = {cuuint64_t(outer), cuuint64_t(num_k_blocks_), cuuint64_t(per_group ? batch_ : 1)};
    const bool u8 = s.type == ScaleType::UE8M0;
    const int64_t es = u8 ? 1 : 4;
    cuuint64_t strides[2] = {cuuint64_t(s.ld * es), cuuint64_t((per_group ? s.stride : s.ld * num_k_blocks_) * es)};
    cuuint32_t box[3] = {cuuint32_t(rows), 1u, 1u};
    cuuint32_t elem_strides[3] = {1u, 1u, 1u};
    CUresult r = encode_(out, u8 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32, grouped ? 3 : 2,
                         const_cast<void*>(ptr), dims, strides, box,
                         elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                         CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
      fail(Status::DeviceError, "cuTensorMapEncodeTiled failed (", int(r), ") for ", name, " of ", outer, " x ",
           num_k_blocks_, ", leading dimension ", s.ld);
  }

  int device_;
  KernelConfig config_;
  KernelView view_;
  int64_t esize_ = 2;
  int sa_mode_ = 0, sb_mode_ = 0;
  ScaleDesc d_scale_;  // a block-scaled FP8 D (mode VEC128) or none
  int b_share_ = 1;    // CTAs of a cluster sharing (multicasting) B's stage
  int a_box_rows_ = 0, b_box_rows_ = 0;  // rows of KA's / KB's K-major TMA box (the tile's, or fewer)
  int box_short_bytes_ = 0;              // a stage's bytes the short boxes do not load
  bool pair_global_ = false;  // 64-row swap tiles of a block-scaled D pairing through the workspace
  bool amax_ = false;  // the epilogue writes max |y| to the call's amax_d
  std::unique_ptr<Executable> fallback_;
  EncodeTiledFn encode_ = nullptr;
  CUtensorMapDataType dtype_ = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  std::shared_ptr<const jit::CompiledCode> code_;
  std::unique_ptr<Module> module_;
  cudaKernel_t kernel_ = nullptr;
  int smem_ = 0;
  int store_chunks_ = 0;
  bool trans_staged_ = false;  // sm90_trans_staged: a transposed 16-bit X stored through TMA on last tiles
  int trans_box_cols_ = 8;
  int64_t d_esize_ = 2;  // D's element size (the staged epilogue's boxes are 128 bytes wide)
  CUtensorMapDataType d_dtype_ = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  int64_t c_bytes_ = 0;  // C's element size when the kernel reads C, else 0
  DgemmParams base_{};
  int64_t batch_ = 1;
  Grouping grouping_;
  TileGrid tiles_{};
  TileDivs tile_divs_{};
  int num_k_blocks_ = 0;
  unsigned grid_ = 1;
  // Packing of the kernel's A (0) and B (1) into the workspace.
  struct PackOperand {
    bool on = false;
    PackLayout layout;
    std::size_t offset = 0;
  };
  PackOperand pack_[2];
  std::size_t workspace_ = 0;
  // Stream-K: the split, where its flags and partials sit in the workspace, the token's seed and
  // the calls made so far (execute may run concurrently on one plan).
  StreamKSplit sk_{};
  bool sk_device_ = false;  // grouped: the kernel splits the units it finds (the sk_* arguments unused)
  std::size_t sk_flags_offset_ = 0, sk_partials_offset_ = 0;
  std::uint64_t sk_seed_ = 0;
  mutable std::atomic<std::uint64_t> sk_calls_{0};
  cudaKernel_t pack_kernel_ = nullptr;
  unsigned pack_grid_ = 1;
};

class Sm90Launcher final : public Launcher {
 public:
  std::vector<jit::CompileRequest> compile_requests(const GemmProblem& p, const Epilogue& e, const KernelConfig& c,
                                                    const std::string& arch) const override {
    return {sm90_compile_request(p, e, c, arch)};
  }
  std::unique_ptr<Executable> prepare(const DeviceInfo& device, const GemmProblem& p, const Epilogue& e,
                                      const KernelConfig& c, std::unique_ptr<Executable> fallback) const override {
    return std::make_unique<Sm90Executable>(device, p, e, c, std::move(fallback));
  }
  std::string describe(const GemmProblem& p, const KernelConfig& c) const override {
    const KernelView v = kernel_view(canonical_operands(p), c.swap_ab);
    std::ostringstream os;
    os << kSm90Kernel << "; " << c.threads << " threads, " << sm90_smem_bytes(c, p)
       << " B dynamic shared memory, persistent grid of at most one block per SM";
    if (cluster_size(c) > 1)
      os << ", clusters of " << cluster_size(c)
         << (c.cluster_k > 1 ? " splitting K" : c.cluster_n > 1 ? " sharing A (multicast)" : " sharing B (multicast)");
    os << "; parameter dg::sm90::GemmArgs (__grid_constant__): two TMA tensor maps (cuTensorMapEncodeTiled, 128B "
       << "swizzle, boxes of " << kSm90BlockK << " K x rows) of " << (v.swap_operands ? "B and A" : "A and B")
       << ", DgemmParams, TileGrid, K blocks";
    if (const int chunks = sm90_store_chunks(c, p); chunks > 0)
      os << "; the epilogue stages D in shared memory (" << chunks << " box" << (chunks > 1 ? "es" : "")
         << " of 64 x 64 per consumer warpgroup at a time) and stores it with TMA when D is 16-byte aligned";
    if (sm90_trans_staged(c, p))
      os << "; on each CTA's last tile the epilogue stages D^T transposed (stmatrix) in the idle stage ring and "
         << "stores it with TMA (boxes of 64 x " << sm90_trans_box_cols(c) << ") when D is 16-byte aligned";
    if (c.pack_a || c.pack_b) os << "; first " << kSm90PackKernel << " packs the operands into the workspace";
    return os.str();
  }
  std::string target_problem(const std::string& arch) const override {
    return arch == "sm_90a" ? "" : "the sm90 family needs sm_90a (wgmma, setmaxnreg), not " + arch;
  }
};

}  // namespace

const Launcher* sm90_launcher() {
  static const Sm90Launcher launcher;
  return &launcher;
}

}  // namespace cuda
}  // namespace dgemm
