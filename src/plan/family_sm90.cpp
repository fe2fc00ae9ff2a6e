// Planner model of the sm90 family (TMA + wgmma, warp-specialized, persistent; src/kernels/sm90):
// its tile menu, feasibility (sm_90a with wgmma and TMA, f16/bf16 operands, f32 compute, the TMA
// layout rules) and cost through the shared model. Register count: every thread starts at the
// __launch_bounds__(384, 1) cap of 168; setmaxnreg then moves registers from the producer
// warpgroup (40) to the consumers (232). Math efficiencies are what the kernels measured on the
// H200 (src/kernels/sm90/NOTES.md): ~0.68 of the bf16 peak for N = 256 tiles at 4096^3.
// Leading dimensions or batch strides that break TMA's 16-byte rule do not reject the family:
// its candidates then pack those operands into the workspace (KernelConfig::pack_a / pack_b; the
// cost model charges the copy), and the planner weighs that against the sm80 family.
#include "plan/family_sm90.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "plan/cost_model.hpp"
#include "plan/families.hpp"

namespace dgemm {

std::string sm90_tma_layout_problem(const GemmProblem& p) {
  // The kernel's operands: a column-major problem runs as its row-major transpose, A and B swapped.
  const bool col = p.order == Order::ColMajor;
  const int64_t lda = col ? p.ldb : p.lda, ldb = col ? p.lda : p.ldb;
  const int64_t sa = col ? p.stride_b : p.stride_a, sb = col ? p.stride_a : p.stride_b;
  const int64_t m = col ? p.n : p.m, n = col ? p.m : p.n;
  const int64_t esize = int64_t(dtype_size(p.a_type));
  const int64_t kLimit = int64_t(1) << 31, kStrideLimit = int64_t(1) << 40;
  std::ostringstream why;
  if ((lda * esize) % 16 != 0 || (ldb * esize) % 16 != 0) {
    why << "TMA needs leading dimensions that are multiples of 16 bytes (lda = " << p.lda << ", ldb = " << p.ldb
        << " elements of " << esize << " bytes)";
  } else if (p.batch_count > 1 && ((sa * esize) % 16 != 0 || (sb * esize) % 16 != 0)) {
    why << "TMA needs batch strides that are multiples of 16 bytes (stride_a = " << p.stride_a
        << ", stride_b = " << p.stride_b << ")";
  } else if (m >= kLimit || n >= kLimit || p.k >= kLimit || p.batch_count >= kLimit) {
    why << "sizes beyond the tensor-map coordinate range (2^31)";
  } else if (lda * esize >= kStrideLimit || ldb * esize >= kStrideLimit || sa * esize >= kStrideLimit ||
             sb * esize >= kStrideLimit) {
    why << "strides beyond the tensor-map limit (2^40 bytes)";
  }
  return why.str();
}

bool sm90_operand_needs_pack(const GemmProblem& p, int which) {
  const int64_t esize = int64_t(dtype_size(which == 0 ? p.a_type : p.b_type));
  const int64_t ld = which == 0 ? p.lda : p.ldb, stride = which == 0 ? p.stride_a : p.stride_b;
  return (ld * esize) % 16 != 0 || (p.batch_count > 1 && (stride * esize) % 16 != 0);
}

Sm90PackLayout sm90_pack_layout(const GemmProblem& p, int which) {
  Sm90PackLayout l;
  const int64_t rows = which == 0 ? p.a_rows() : p.b_rows(), cols = which == 0 ? p.a_cols() : p.b_cols();
  // Row-major storage is contiguous along a row (cols elements), column-major along a column.
  l.inner = p.order == Order::RowMajor ? cols : rows;
  l.outer = p.order == Order::RowMajor ? rows : cols;
  l.src_ld = which == 0 ? p.lda : p.ldb;
  l.src_stride = which == 0 ? p.stride_a : p.stride_b;
  l.batch = p.batch_count > 1 && l.src_stride != 0 ? p.batch_count : 1;
  l.dst_ld = (l.inner + 7) / 8 * 8;
  l.dst_stride = l.batch > 1 ? l.outer * l.dst_ld : 0;
  return l;
}

GemmProblem sm90_packed_problem(const GemmProblem& p, bool pack_a, bool pack_b) {
  GemmProblem q = p;
  if (pack_a) {
    const Sm90PackLayout l = sm90_pack_layout(p, 0);
    q.lda = l.dst_ld;
    q.stride_a = l.dst_stride;
  }
  if (pack_b) {
    const Sm90PackLayout l = sm90_pack_layout(p, 1);
    q.ldb = l.dst_ld;
    q.stride_b = l.dst_stride;
  }
  return q;
}

namespace {

struct Sm90Tile {
  int block_m, block_n, stages, cluster_m;
  double efficiency;  // measured fraction of the wgmma peak in the main loop
};
// The default menu: 128x256 for big problems, 256x128 for tall ones, 128x192 where N = 256 would
// leave a partial wave or a mostly empty last column of tiles (e.g. N = 2112), 128x128 and 128x64
// so that mid-sized problems fill 132 SMs. Clusters of 2 along M share (multicast) the B tile.
constexpr Sm90Tile kMenu[] = {
    {128, 256, 4, 2, 0.68}, {128, 256, 4, 1, 0.68}, {128, 192, 5, 2, 0.64}, {128, 192, 5, 1, 0.64},
    {256, 128, 4, 2, 0.64}, {256, 128, 4, 1, 0.64}, {128, 128, 6, 2, 0.60}, {128, 128, 6, 1, 0.60},
    {128, 64, 8, 2, 0.50},  {128, 64, 8, 1, 0.50},
};
constexpr int kThreads = 384;
constexpr int kRegsAtEntry = 168;

class Sm90Family final : public FamilyModel {
 public:
  Family family() const override { return Family::Sm90; }
  std::vector<Candidate> enumerate(const GemmProblem& p, const Epilogue& e, const HardwareDesc& hw) const override {
    std::vector<Candidate> out;
    std::string why;
    if (hw.vendor != Vendor::Nvidia) why = "needs an NVIDIA GPU (this is " + hw.name + ")";
    else if (!hw.has_wgmma || !hw.has_tma)
      why = "needs sm_90a (wgmma and TMA); device is compute capability " + std::to_string(hw.cc());
    else if (p.compute_type != DType::F32)
      why = "computes in f32 only (compute_type " + std::string(dtype_name(p.compute_type)) + ")";
    else if (p.a_type != p.b_type || (p.a_type != DType::F16 && p.a_type != DType::BF16))
      why = std::string("takes f16 or bf16 A and B (got ") + dtype_name(p.a_type) + ", " + dtype_name(p.b_type) + ")";
    else if (p.m < 1 || p.n < 1 || p.k < 1)
      why = "needs m, n, k >= 1 (k = 0 is the epilogue alone; a zero-sized TMA box cannot be described)";
    else
      why = sm90_tma_layout_problem(p);
    // Rows that break TMA's 16-byte rule: the candidates pack those operands into the workspace
    // first (the cost model charges the copy), and the planner weighs that against sm80.
    bool pack_a = false, pack_b = false;
    if (!why.empty() && why.rfind("TMA needs", 0) == 0) {
      pack_a = sm90_operand_needs_pack(p, 0);
      pack_b = sm90_operand_needs_pack(p, 1);
      const std::string packed_why = sm90_tma_layout_problem(sm90_packed_problem(p, pack_a, pack_b));
      why = packed_why.empty() ? "" : why + "; packed: " + packed_why;
    }

    // Tile counts follow the kernel's (row-major) view.
    GemmProblem view = p;
    if (p.order == Order::ColMajor) std::swap(view.m, view.n);
    // DEEPGEMM_SM90_TILES="128x256,256x128" keeps only those tiles: a measuring knob (timing one
    // tile against another on the device through the public API), not a tuning interface.
    const char* only = std::getenv("DEEPGEMM_SM90_TILES");
    const char* split_env = std::getenv("DEEPGEMM_SM90_SPLIT_K");
    const bool split_k_enabled = split_env && std::string(split_env) == "1";
    for (const Sm90Tile& t : kMenu) {
      KernelConfig c;
      c.family = Family::Sm90;
      c.block_m = t.block_m;
      c.block_n = t.block_n;
      c.block_k = 64;
      c.stages = t.stages;
      c.threads = kThreads;
      c.cluster_m = t.cluster_m;
      c.swizzle_bytes = 128;
      c.raster_group = 8;
      c.persistent = true;
      c.pack_a = pack_a;
      c.pack_b = pack_b;
      std::string tile_why = why;
      const std::string tile_name = std::to_string(t.block_m) + "x" + std::to_string(t.block_n);
      if (tile_why.empty() && only && *only && ("," + std::string(only) + ",").find("," + tile_name + ",") == std::string::npos)
        tile_why = "tile " + tile_name + " not in DEEPGEMM_SM90_TILES=" + only;
      // A cluster splits an N-major B tile into whole 64-column boxes, one set per CTA.
      const bool b_kmajor = p.order == Order::RowMajor ? p.op_b == Op::T : p.op_a == Op::T;
      if (tile_why.empty() && t.cluster_m > 1 && !b_kmajor && (t.block_n / 64) % t.cluster_m != 0)
        tile_why = "a cluster of " + std::to_string(t.cluster_m) + " cannot split an N-major B tile of " +
                   std::to_string(t.block_n) + " columns into 64-column boxes";
      if (!tile_why.empty()) {
        Candidate r;
        r.config = c;
        r.feasible = false;
        r.reject_reason = tile_why;
        out.push_back(r);
        continue;
      }
      CostInput in;
      in.config = c;
      in.math = MathInstr::Wgmma;
      in.consumer_threads = 256;
      in.regs_per_thread = kRegsAtEntry;
      in.smem_extra_bytes = 2L * t.stages * 8 + 1024;  // barriers + alignment slack
      in.math_efficiency = t.efficiency;
      out.push_back(make_candidate(c, estimate_cost(view, e, hw, in)));
      // Split-K for problems with fewer work units than SMs (e.g. 1024x1024x4096): each split
      // keeps at least 8 K blocks and none is empty; partials go through the workspace and a
      // second (reduce + epilogue) launch, which the cost model charges as fp32 traffic + launch.
      // Opt-in (DEEPGEMM_SM90_SPLIT_K=1): correct on the H200 but measured slower than no split
      // where the model chose it (1024x1024x4096: 28-34 us vs 20-23 us, NOTES.md).
      if (!split_k_enabled) continue;
      const long units = long((view.m + t.block_m * t.cluster_m - 1) / (t.block_m * t.cluster_m)) *
                         long((view.n + t.block_n - 1) / t.block_n) * long(std::max<int64_t>(1, p.batch_count));
      const long k_blocks = long((p.k + 63) / 64);
      for (int split : {2, 4}) {
        const long per_split = (k_blocks + split - 1) / split;
        // (Decode-sized m or n is the small-M family's: wgmma's 64-row atoms would mostly idle.)
        if (std::min(view.m, view.n) <= 64 || units * t.cluster_m >= hw.sm_count || per_split < 8 || (split - 1) * per_split >= k_blocks ||
            units * t.cluster_m * split > 2L * hw.sm_count)
          continue;
        KernelConfig cs = c;
        cs.split_k = split;
        CostInput ins = in;
        ins.config = cs;
        ins.extra_fixed_us = 2.0;  // the reduce kernel's launch
        out.push_back(make_candidate(cs, estimate_cost(view, e, hw, ins)));
      }
    }
    return out;
  }
};

}  // namespace

const FamilyModel& sm90_family_model() {
  static const Sm90Family model;
  return model;
}

}  // namespace dgemm
