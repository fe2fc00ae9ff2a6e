// The sm90 family's launcher: generates the kernel source for a plan (tile, stages, cluster,
// operand majors, the fused epilogue), compiles it through the JIT cache and loads it at plan
// time, sizes the persistent grid from the co-resident cluster count, and at execute encodes the
// two TMA tensor maps for the call's pointers into the kernel's __grid_constant__ argument (on the
// host stack: no allocation) and launches on the caller's stream.
//
// Unaligned pointers: TMA needs 16-byte aligned global addresses. The planner has already made
// sure that leading dimensions and batch strides keep rows aligned, so only the base pointers can
// break the rule, and only at execute. For that case the plan also prepares (at plan time, so
// execute never compiles) an sm80 kernel for the same problem and runs it instead. (Describing
// the operand from the aligned address below it and shifting the box coordinates by the gap was
// tried: the TMA load then faults with an illegal instruction on the H200, NOTES.md.)
//
// Unaligned leading dimensions or batch strides (e.g. K = 4093 in bf16): the plan packs those
// operands (KernelConfig::pack_a / pack_b) into the caller's workspace, rows padded to 8 elements,
// with one pack-kernel launch (from the same module) before the GEMM on the same stream; the
// tensor maps then describe the copy. A packed operand's pointer may have any 2-byte alignment.
#include "backend/cuda/sm90_gemm.hpp"

#include <cuda.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>

#include "backend/cuda/cuda_backend.hpp"
#include "core/error.hpp"
#include "kernels/common/gemm_params.cuh"
#include "plan/family_sm90.hpp"

namespace dgemm {
namespace cuda {

namespace {
// Mirrors dgemm_sm90::Sm90GemmArgs (src/kernels/sm90/sm90_bf16_gemm.cuh) field for field.
struct alignas(64) Sm90GemmArgsHost {
  CUtensorMap tma_a;
  CUtensorMap tma_b;
  DgemmParams p;
  int num_m_blocks, num_n_blocks, num_k_blocks;
  int raster_group;
  int num_tiles;
  int split_k;
};
static_assert(sizeof(CUtensorMap) == 128, "CUtensorMap is 128 bytes");
static_assert(offsetof(Sm90GemmArgsHost, p) == 256, "DgemmParams follows the two tensor maps");

// Mirrors dg::PackJob / dg::PackArgs (src/kernels/common/pack.cuh).
struct PackJobHost {
  const void* src;
  void* dst;
  long long inner, outer, src_ld, src_stride, dst_ld, dst_stride, rows;
};
struct PackArgsHost {
  PackJobHost job[2];
};
constexpr const char* kSm90PackKernel = "dgemm_sm90_pack";
constexpr const char* kSm90ReduceKernel = "dgemm_sm90_split_reduce";
constexpr int kPackThreads = 256;
constexpr std::size_t kWorkspaceAlign = 256;

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
}  // namespace

Sm90Mapping sm90_mapping(const GemmProblem& p) {
  Sm90Mapping m;
  m.transposed = p.order == Order::ColMajor;
  if (!m.transposed) {
    m.a_kmajor = p.op_a == Op::N;  // A[i*lda + k]
    m.b_kmajor = p.op_b == Op::T;  // B[j*ldb + k]
    m.m = p.m;
    m.n = p.n;
    m.lda = p.lda;
    m.ldb = p.ldb;
    m.stride_a = p.stride_a;
    m.stride_b = p.stride_b;
  } else {
    // Column-major X is row-major X^T: the kernel's A is B (K-contiguous iff op_b = N) and its
    // B is A (K-contiguous iff op_a = T).
    m.a_kmajor = p.op_b == Op::N;
    m.b_kmajor = p.op_a == Op::T;
    m.m = p.n;
    m.n = p.m;
    m.lda = p.ldb;
    m.ldb = p.lda;
    m.stride_a = p.stride_b;
    m.stride_b = p.stride_a;
  }
  return m;
}

int sm90_smem_bytes(const KernelConfig& c) {
  return c.stages * (c.block_m + c.block_n) * kSm90BlockK * 2 + 2 * c.stages * 8 + 1024;
}

namespace {
// DEEPGEMM_SM90_VARIANT (read at plan time) builds an earlier main loop, only for timing it
// against the default in one device call (NOTES.md): "late" releases each stage one K block late,
// "wait1" does that and keeps one K block of wgmma in flight (wait_group 1). The default source
// is unchanged by it, so cached kernels stay valid.
std::string sm90_variant_defines() {
  const char* v = std::getenv("DEEPGEMM_SM90_VARIANT");
  const std::string s = v ? v : "";
  if (s == "late") return "#define DGEMM_SM90_LATE_RELEASE 1\n";
  if (s == "wait1") return "#define DGEMM_SM90_LATE_RELEASE 1\n#define DGEMM_SM90_WAIT1 1\n";
  return "";
}
}  // namespace

jit::CompileRequest sm90_compile_request(const GemmProblem& p, const Epilogue& e, const KernelConfig& c,
                                         const std::string& arch) {
  if (c.family != Family::Sm90) fail(Status::InternalError, "sm90_compile_request given family ", family_name(c.family));
  if (p.a_type != p.b_type || (p.a_type != DType::F16 && p.a_type != DType::BF16))
    fail(Status::NotSupported, "the sm90 family takes f16 or bf16 A and B, not ", dtype_name(p.a_type), " and ",
         dtype_name(p.b_type));
  const Sm90Mapping map = sm90_mapping(p);
  std::ostringstream src;
  src << "// Generated by DeepGEMM: sm90 family, " << c.name() << ", " << dtype_name(p.a_type) << " operands, A "
      << (map.a_kmajor ? "K" : "M") << "-major, B " << (map.b_kmajor ? "K" : "N") << "-major"
      << (map.transposed ? " (column-major problem run transposed)" : "") << ".\n"
      << sm90_variant_defines() << (c.split_k > 1 ? "#define DGEMM_SM90_SPLIT_K 1\n" : "")
      << "#include \"sm90/sm90_bf16_gemm.cuh\"\n"
      << "#include \"sm90/sm90_epilogue.cuh\"\n\n"
      << epilogue_struct("DgEpilogue", p, e, map.transposed) << "\n"
      << "using DgSm90Gemm = dgemm_sm90::Sm90Gemm<" << c.block_m << ", " << c.block_n << ", " << c.stages << ", "
      << (p.a_type == DType::F16 ? 1 : 0) << ", " << (map.a_kmajor ? 0 : 1) << ", " << (map.b_kmajor ? 0 : 1) << ", "
      << c.cluster_m << ", dgemm_sm90::Sm90Epilogue<DgEpilogue>>;\n"
      << "DGEMM_SM90_DEFINE_KERNEL(" << kSm90Kernel << ", DgSm90Gemm)\n";
  if (c.pack_a || c.pack_b)
    src << "\n#include \"common/pack.cuh\"\nDGEMM_DEFINE_PACK_KERNEL(" << kSm90PackKernel << ")\n";
  if (c.split_k > 1)
    src << "DGEMM_SM90_DEFINE_SPLIT_REDUCE(" << kSm90ReduceKernel << ", dgemm_sm90::Sm90Epilogue<DgEpilogue>)\n";
  jit::CompileRequest r;
  std::ostringstream name;
  name << c.name() << "_" << dtype_name(p.a_type) << "_" << (map.a_kmajor ? "k" : "m") << (map.b_kmajor ? "k" : "n");
  r.name = name.str();
  r.source = src.str();
  r.arch = arch;
  return r;
}

KernelConfig sm90_fallback_config() {
  KernelConfig fb;
  fb.family = Family::Sm80;
  fb.block_m = 128;
  fb.block_n = 128;
  fb.block_k = 32;
  fb.stages = 4;
  fb.threads = 256;
  fb.swizzle_bytes = 128;
  fb.raster_group = 8;
  return fb;
}

namespace {

class Sm90Executable final : public Executable {
 public:
  Sm90Executable(const DeviceInfo& device, const GemmProblem& p, const Epilogue& e, const KernelConfig& c)
      : device_(device.index), config_(c), map_(sm90_mapping(p)) {
    if (c.block_k != 0 && c.block_k != kSm90BlockK)
      fail(Status::InternalError, "sm90 kernels use BLOCK_K = 64, config has ", c.block_k);
    if (c.cluster_m != 1 && c.cluster_m != 2)
      fail(Status::InternalError, "sm90 kernels run in clusters of 1 or 2 along M, config has ", c.cluster_m);
    // The kernel reads packed operands from the workspace copy: check the layout it will see.
    const GemmProblem kp = sm90_packed_problem(p, c.pack_a, c.pack_b);
    if (c.split_k > 1 && p.batch_count * c.split_k > 0x7fffffffLL)
      fail(Status::NotSupported, "sm90 split-K: batch_count x split_k too large");
    const std::string layout = sm90_tma_layout_problem(kp);
    if (!layout.empty()) fail(Status::NotSupported, "sm90 family: ", layout);
    map_ = sm90_mapping(kp);
    // Kernel operand 0 is the problem's A unless a column-major problem runs transposed.
    for (int op = 0; op < 2; ++op) {
      const int which = map_.transposed ? 1 - op : op;
      if (!(which == 0 ? c.pack_a : c.pack_b)) continue;
      pack_[op].on = true;
      pack_[op].layout = sm90_pack_layout(p, which);
      pack_[op].offset = workspace_;
      workspace_ += (std::size_t(pack_[op].layout.bytes()) + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign;
    }
    // Split-K partials, [split][batch][m][n] f32, after the packed operands.
    split_ = c.split_k > 1 ? c.split_k : 1;
    if (split_ > 1) {
      partial_offset_ = workspace_;
      workspace_ += std::size_t(split_) * std::size_t(p.batch_count) * std::size_t(map_.m) * std::size_t(map_.n) * 4;
    }
    if (workspace_ > 0) workspace_ += kWorkspaceAlign;  // the caller's pointer is aligned up inside
    encode_ = encode_tiled_fn();
    code_ = jit::compile(sm90_compile_request(p, e, c, device.arch));
    module_ = std::make_unique<Module>(*code_);
    smem_ = sm90_smem_bytes(c);
    kernel_ = module_->kernel(kSm90Kernel, smem_);
    if (pack_[0].on || pack_[1].on) {
      pack_kernel_ = module_->kernel(kSm90PackKernel, 0);
      // Work items: one warp copies 256 elements of one row (pack.cuh); 8 warps per block.
      long long most = 0;
      for (const PackOperand& o : pack_)
        if (o.on) most = std::max<long long>(most, o.layout.batch * o.layout.outer * ((o.layout.dst_ld + 255) / 256));
      // Grid-stride copy: 8 resident blocks per SM are enough to saturate HBM.
      pack_grid_ = unsigned(std::min<long long>((most + 7) / 8, 8LL * device.hw.sm_count));
      if (pack_grid_ == 0) pack_grid_ = 1;
    }
    dtype_ = p.a_type == DType::F16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;

    base_.m = map_.m;
    base_.n = map_.n;
    base_.k = p.k;
    base_.lda = map_.lda;
    base_.ldb = map_.ldb;
    base_.ldc = p.ldc;
    base_.ldd = p.ldd;
    base_.stride_a = map_.stride_a;
    base_.stride_b = map_.stride_b;
    base_.stride_c = p.stride_c;
    base_.stride_d = p.stride_d;
    base_.batch_count = int(p.batch_count);
    batch_ = p.batch_count;
    num_m_blocks_ = int((map_.m + c.block_m - 1) / c.block_m);
    num_n_blocks_ = int((map_.n + c.block_n - 1) / c.block_n);
    num_k_blocks_ = int((p.k + kSm90BlockK - 1) / kSm90BlockK);
    if (split_ > 1) {
      // Every split must own at least one K block (the kernel's partial is then fully written).
      const int per_split = (num_k_blocks_ + split_ - 1) / split_;
      if ((split_ - 1) * per_split >= num_k_blocks_)
        fail(Status::NotSupported, "sm90 split-K: ", split_, " splits of ", num_k_blocks_, " K blocks leave one empty");
      reduce_kernel_ = module_->kernel(kSm90ReduceKernel, 0);
    }
    const long long units =
        (long long)((num_m_blocks_ + c.cluster_m - 1) / c.cluster_m) * num_n_blocks_ * p.batch_count * split_;
    if (units > 0x7fffffffLL) fail(Status::NotSupported, "m = ", p.m, ", n = ", p.n, ": too many output tiles");
    num_tiles_ = int(units);
    raster_group_ = c.raster_group > 0 ? c.raster_group : 8;

    // Persistent grid: as many CTAs (clusters) as can be resident at once, never more than tiles.
    cudaLaunchConfig_t cfg = launch_config(nullptr, 1);
    int max_units = 0;
    if (c.cluster_m > 1) {
      cudaLaunchAttribute attr[1];
      attr[0].id = cudaLaunchAttributeClusterDimension;
      attr[0].val.clusterDim.x = unsigned(c.cluster_m);
      attr[0].val.clusterDim.y = 1;
      attr[0].val.clusterDim.z = 1;
      cfg.attrs = attr;
      cfg.numAttrs = 1;
      cfg.gridDim = dim3(unsigned(device.hw.sm_count / c.cluster_m * c.cluster_m));
      check(cudaOccupancyMaxActiveClusters(&max_units, reinterpret_cast<const void*>(kernel_), &cfg),
            "cudaOccupancyMaxActiveClusters (sm90 GEMM)");
    } else {
      int per_sm = 0;
      check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reinterpret_cast<const void*>(kernel_),
                                                          kSm90Threads, std::size_t(smem_)),
            "cudaOccupancyMaxActiveBlocksPerMultiprocessor (sm90 GEMM)");
      max_units = per_sm * device.hw.sm_count;
    }
    if (max_units <= 0) fail(Status::NotSupported, "the sm90 kernel ", c.name(), " cannot be resident on this device");
    grid_ = unsigned((num_tiles_ < max_units ? num_tiles_ : max_units) * c.cluster_m);
    if (split_ > 1) {
      const long long elems = map_.m * map_.n * p.batch_count;
      reduce_grid_ = unsigned(std::max<long long>(1, std::min<long long>((elems + 255) / 256, 8LL * device.hw.sm_count)));
    }

    // The fallback for pointers TMA cannot take (see the file comment); packed operands take any.
    if (pack_[0].on && pack_[1].on) return;
    fallback_ = prepare_sm80(device, p, e, sm90_fallback_config());
  }

  std::size_t workspace_size() const override { return workspace_; }

  void run(const ExecArgs& x) const override {
    require_current_device(device_);
    const void* a = map_.transposed ? x.b : x.a;
    const void* b = map_.transposed ? x.a : x.b;
    if ((!pack_[0].on && !aligned16(a)) || (!pack_[1].on && !aligned16(b))) {
      fallback_->run(x);
      return;
    }
    const std::uintptr_t ws_base =
        (reinterpret_cast<std::uintptr_t>(x.workspace) + kWorkspaceAlign - 1) & ~(kWorkspaceAlign - 1);
    if (pack_[0].on || pack_[1].on) {
      // Pack on the caller's stream, ahead of the GEMM: stream order makes the copy visible.
      const std::uintptr_t ws = (reinterpret_cast<std::uintptr_t>(x.workspace) + kWorkspaceAlign - 1) & ~(kWorkspaceAlign - 1);
      PackArgsHost pa;
      std::memset(&pa, 0, sizeof(pa));
      int jobs = 0;
      const void* srcs[2] = {a, b};
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
        (op == 0 ? a : b) = dst;
      }
      cudaLaunchConfig_t pcfg{};
      pcfg.gridDim = dim3(pack_grid_, unsigned(jobs));
      pcfg.blockDim = dim3(kPackThreads);
      pcfg.stream = static_cast<cudaStream_t>(x.stream);
      void* pargs[] = {&pa};
      check(cudaLaunchKernelExC(&pcfg, reinterpret_cast<const void*>(pack_kernel_), pargs),
            "cudaLaunchKernelExC (sm90 operand packing)");
    }
    Sm90GemmArgsHost args;
    std::memset(&args, 0, sizeof(args));
    encode(&args.tma_a, a, map_.a_kmajor, base_.m, base_.lda, base_.stride_a, config_.block_m);
    encode(&args.tma_b, b, map_.b_kmajor, base_.n, base_.ldb, base_.stride_b, config_.block_n / config_.cluster_m);
    DgemmParams& prm = args.p;
    prm = base_;
    prm.a = a;
    prm.b = b;
    prm.c = x.c;
    prm.d = x.d;
    prm.bias = x.bias;
    prm.scale = x.scale;
    prm.zero_point = x.zero_point;
    prm.alpha = x.alpha;
    prm.beta = x.beta;
    prm.alpha_ptr = x.scalar_mode == ScalarMode::Device ? x.alpha_ptr : nullptr;
    prm.beta_ptr = x.scalar_mode == ScalarMode::Device ? x.beta_ptr : nullptr;
    // The kernel's workspace is the split-K partial buffer (null without split-K).
    prm.workspace = split_ > 1 ? reinterpret_cast<void*>(ws_base + partial_offset_) : nullptr;
    prm.workspace_size = split_ > 1 ? x.workspace_size - (ws_base + partial_offset_ - reinterpret_cast<std::uintptr_t>(x.workspace)) : 0;
    args.split_k = split_;
    args.num_m_blocks = num_m_blocks_;
    args.num_n_blocks = num_n_blocks_;
    args.num_k_blocks = num_k_blocks_;
    args.raster_group = raster_group_;
    args.num_tiles = num_tiles_;
    cudaLaunchConfig_t cfg = launch_config(static_cast<cudaStream_t>(x.stream), grid_);
    cudaLaunchAttribute attr[1];
    if (config_.cluster_m > 1) {
      attr[0].id = cudaLaunchAttributeClusterDimension;
      attr[0].val.clusterDim.x = unsigned(config_.cluster_m);
      attr[0].val.clusterDim.y = 1;
      attr[0].val.clusterDim.z = 1;
      cfg.attrs = attr;
      cfg.numAttrs = 1;
    }
    void* kargs[] = {&args};
    check(cudaLaunchKernelExC(&cfg, reinterpret_cast<const void*>(kernel_), kargs), "cudaLaunchKernelExC (sm90 GEMM)");
    if (split_ > 1) {
      cudaLaunchConfig_t rcfg{};
      rcfg.gridDim = dim3(reduce_grid_);
      rcfg.blockDim = dim3(256);
      rcfg.stream = static_cast<cudaStream_t>(x.stream);
      int split = split_;
      void* rargs[] = {&prm, &split};
      check(cudaLaunchKernelExC(&rcfg, reinterpret_cast<const void*>(reduce_kernel_), rargs),
            "cudaLaunchKernelExC (sm90 split-K reduce)");
    }
  }

 private:
  cudaLaunchConfig_t launch_config(cudaStream_t stream, unsigned grid) const {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(kSm90Threads);
    cfg.dynamicSmemBytes = std::size_t(smem_);
    cfg.stream = stream;
    return cfg;
  }

  // A 3-D map {inner, outer, batch} of a 16-bit operand with 128-byte swizzle. K-major operands
  // take one box of {64 K, rows} per stage; MN-major ones boxes of {64 MN, 64 K}.
  void encode(CUtensorMap* out, const void* ptr, bool kmajor, int64_t mn, int64_t ld, int64_t batch_stride,
              int rows_per_box) const {
    const int64_t k = base_.k;
    const int64_t inner = kmajor ? k : mn, outer = kmajor ? mn : k;
    cuuint64_t dims[3] = {cuuint64_t(inner), cuuint64_t(outer), cuuint64_t(batch_)};
    // A batch of one still needs a valid (16-byte multiple) stride for its unit dimension.
    const int64_t bstride = batch_ > 1 ? batch_stride * 2 : ((outer * ld * 2 + 15) / 16) * 16;
    cuuint64_t strides[2] = {cuuint64_t(ld * 2), cuuint64_t(bstride)};
    cuuint32_t box[3] = {64u, kmajor ? cuuint32_t(rows_per_box) : 64u, 1u};
    cuuint32_t elem_strides[3] = {1u, 1u, 1u};
    CUresult r = encode_(out, dtype_, 3, const_cast<void*>(ptr), dims, strides, box, elem_strides,
                         CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                         CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
      fail(Status::DeviceError, "cuTensorMapEncodeTiled failed (", int(r), ") for an operand of ", inner, " x ", outer,
           " x ", batch_, ", leading dimension ", ld);
  }

  int device_;
  KernelConfig config_;
  Sm90Mapping map_;
  EncodeTiledFn encode_ = nullptr;
  CUtensorMapDataType dtype_ = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  std::shared_ptr<const jit::CompiledCode> code_;
  std::unique_ptr<Module> module_;
  cudaKernel_t kernel_ = nullptr;
  int smem_ = 0;
  DgemmParams base_{};
  int64_t batch_ = 1;
  int num_m_blocks_ = 0, num_n_blocks_ = 0, num_k_blocks_ = 0, num_tiles_ = 0, raster_group_ = 8;
  unsigned grid_ = 1;
  std::unique_ptr<Executable> fallback_;
  // Packing of the kernel's A (0) and B (1) into the workspace.
  struct PackOperand {
    bool on = false;
    Sm90PackLayout layout;
    std::size_t offset = 0;
  };
  PackOperand pack_[2];
  std::size_t workspace_ = 0;
  cudaKernel_t pack_kernel_ = nullptr;
  unsigned pack_grid_ = 1;
  int split_ = 1;
  std::size_t partial_offset_ = 0;
  cudaKernel_t reduce_kernel_ = nullptr;
  unsigned reduce_grid_ = 1;
};

}  // namespace

std::unique_ptr<Executable> prepare_sm90(const DeviceInfo& device, const GemmProblem& p, const Epilogue& e,
                                         const KernelConfig& config) {
  return std::make_unique<Sm90Executable>(device, p, e, config);
}

}  // namespace cuda
}  // namespace dgemm
