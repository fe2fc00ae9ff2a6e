// Shared launcher plumbing (see kernel_args.hpp).
#include "backend/cuda/kernel_args.hpp"

#include <algorithm>
#include <sstream>

#include "core/error.hpp"

namespace dgemm {
namespace cuda {

DgemmParams plan_params(const GemmProblem& p, const KernelView& v) {
  DgemmParams prm{};
  prm.m = v.rows;
  prm.n = v.cols;
  prm.k = v.k;
  prm.lda = v.lda;
  prm.ldb = v.ldb;
  prm.ldc = p.ldc;
  prm.ldd = p.ldd;
  prm.stride_a = v.stride_a;
  prm.stride_b = v.stride_b;
  prm.stride_c = p.stride_c;
  prm.stride_d = p.stride_d;
  prm.batch_count = int(p.batch_count);
  return prm;
}

DgemmParams bind_call(const DgemmParams& plan, const KernelView& v, const ExecArgs& x) {
  DgemmParams prm = plan;
  prm.a = v.swap_operands ? x.b : x.a;
  prm.b = v.swap_operands ? x.a : x.b;
  prm.c = x.c;
  prm.d = x.d;
  prm.bias = x.bias;
  prm.scale = x.scale;
  prm.zero_point = x.zero_point;
  prm.alpha = x.alpha;
  prm.beta = x.beta;
  prm.alpha_ptr = x.scalar_mode == ScalarMode::Device ? x.alpha_ptr : nullptr;
  prm.beta_ptr = x.scalar_mode == ScalarMode::Device ? x.beta_ptr : nullptr;
  prm.workspace = x.workspace;
  prm.workspace_size = x.workspace_size;
  // Input scales outside the K sum (per tensor, per row / column) go to the epilogue.
  const void* ka_scale = v.swap_operands ? x.b_scale : x.a_scale;
  const void* kb_scale = v.swap_operands ? x.a_scale : x.b_scale;
  prm.row_scale = epilogue_in_scale(v.a_scale) ? static_cast<const float*>(ka_scale) : nullptr;
  prm.col_scale = epilogue_in_scale(v.b_scale) ? static_cast<const float*>(kb_scale) : nullptr;
  prm.amax_d = reinterpret_cast<unsigned*>(x.amax_d);
  return prm;
}

int epilogue_in_scale(const ScaleDesc& s) {
  return s.mode == ScaleMode::PerTensor ? 1 : s.mode == ScaleMode::OuterVec ? 2 : 0;
}

const char* device_type_name(DType t) {
  switch (t) {
    case DType::F32: return "float";
    case DType::F16: return "dg::f16";
    case DType::BF16: return "dg::bf16";
    case DType::F8E4M3: return "dg::e4m3";
    case DType::F8E5M2: return "dg::e5m2";
    case DType::I8: return "signed char";
    case DType::I32: return "int";
  }
  return "?";
}

std::string epilogue_struct(const std::string& struct_name, const GemmProblem& p, const Epilogue& e,
                            const KernelView& v) {
  std::ostringstream os;
  os << "struct " << struct_name << " {\n"
     << "  using CType = " << device_type_name(p.c_type) << ";\n"
     << "  using DType = " << device_type_name(p.d_type) << ";\n"
     << "  using BiasType = " << device_type_name(e.bias_mode == VectorMode::None ? DType::F32 : e.bias_type) << ";\n"
     << "  static constexpr bool kHasC = " << (e.reads_c() ? "true" : "false") << ";\n"
     << "  static constexpr int kBiasMode = " << int(kernel_vector_mode(e.bias_mode, v)) << ";\n"
     << "  static constexpr int kActivation = " << int(e.activation) << ";\n"
     << "  static constexpr int kScaleMode = " << int(kernel_vector_mode(e.scale_mode, v)) << ";\n"
     << "  static constexpr bool kZeroPoint = " << (e.zero_point ? "true" : "false") << ";\n"
     << "  static constexpr bool kSaturate = " << (e.saturate ? "true" : "false") << ";\n"
     << "  static constexpr bool kTransposedOut = " << (v.out_transposed ? "true" : "false") << ";\n"
     << "  static constexpr int kRowInScale = " << epilogue_in_scale(v.a_scale) << ";\n"
     << "  static constexpr int kColInScale = " << epilogue_in_scale(v.b_scale) << ";\n";
  // Only block-scaled outputs name it (the member is optional), so other kernels' sources, and
  // their cache keys, stay as they were.
  if (e.d_scale.active()) os << "  static constexpr int kOutBlockScale = " << (e.d_scale.type == ScaleType::F32 ? 1 : 2) << ";\n";
  if (e.amax_d) os << "  static constexpr bool kAmaxD = true;\n";
  os << "};\n";
  return os.str();
}

TileGrid tile_grid(const KernelView& v, int64_t batch_count, const KernelConfig& c) {
  const int64_t m_blocks = (v.rows + c.block_m - 1) / c.block_m, n_blocks = (v.cols + c.block_n - 1) / c.block_n;
  if (m_blocks * n_blocks * std::max<int64_t>(1, batch_count) > 0x7fffffffLL)
    fail(Status::NotSupported, "m = ", v.rows, ", n = ", v.cols, ", batch_count = ", batch_count, ": more than 2^31 ",
         c.block_m, " x ", c.block_n, " output tiles");
  TileGrid g{};
  g.num_m_blocks = int(m_blocks);
  // A cluster sharing A (sm90 cluster_n) takes cluster_n horizontally adjacent tiles per work unit:
  // the scheduler walks the pairs, the kernel adds its rank (kernels/sm90/sm90_gemm.cuh).
  g.num_n_blocks = int(c.cluster_n > 1 ? (n_blocks + c.cluster_n - 1) / c.cluster_n : n_blocks);
  g.batch_count = int(batch_count);
  g.raster_group = c.raster_group;
  g.cluster_m = c.cluster_m > 1 ? c.cluster_m : 1;
  g.split_k = 1;
  return g;
}

std::size_t split_k_workspace_bytes(const KernelView& v, int64_t batch_count, int splits) {
  return std::size_t(batch_count) * std::size_t(splits) * std::size_t(v.rows) * std::size_t((v.cols + 3) / 4 * 4) * 4u;
}

}  // namespace cuda
}  // namespace dgemm
