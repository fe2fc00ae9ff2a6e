// The cost model every GPU family model shares. A family describes one candidate (tile, stages,
// threads, which math instruction, its shared-memory layouts and how they are accessed) and gets
// back its feasibility (shared memory, registers, occupancy, with a reason) and a predicted time
// from a roofline over: tensor-core math at the instruction's peak, shared-memory wavefronts
// (bank conflicts simulated by bank_sim), exposed load latency for too few stages, L2->SM
// traffic, and HBM traffic given the tile order (grouped rasterization); plus wave quantization
// over the SM count. The planner ranks candidates by predicted_us; the other fields explain it.
//
// Typical use in a family_*.cpp:
//   CostInput in;
//   in.config = cfg;                       // block_m/n/k, stages, threads, cluster, split_k, raster
//   in.math = MathInstr::MmaSync;
//   in.smem = {{"A ldmatrix", a_layout, banksim::TileOp::Ldmatrix, bytes_per_k_tile}, ...};
//   CostEstimate est = estimate_cost(p, e, hw, in);
//   out.push_back(make_candidate(cfg, est));   // feasible + predicted_us, or reject_reason
#pragma once

#include <string>
#include <vector>

#include "core/hardware.hpp"
#include "core/problem.hpp"
#include "plan/bank_sim.hpp"
#include "core/kernel_config.hpp"

namespace dgemm {

// Which instruction does the math: sets the peak rate and the register estimate.
enum class MathInstr : int { Wgmma = 0, MmaSync = 1, Simt = 2 };
const char* math_instr_name(MathInstr m);

// Dense peak (TFLOP/s, TOP/s for int8) that `instr` reaches on `hw` for inputs of type `a_type`;
// 0 when the machine cannot do it (no wgmma before sm_90a, no fp8 mma before sm_89, ...).
// mma.sync on Hopper is rated at ~62% of the wgmma peak (public microbenchmarks).
double instruction_peak_tflops(const HardwareDesc& hw, DType a_type, MathInstr instr);
// The machine's dense peak for inputs of `a_type` (any vendor, any instruction): the roofline.
double peak_tflops_for(const HardwareDesc& hw, DType a_type);

// One shared-memory access stream of the kernel: a layout, the instruction that touches it, and
// how many bytes the whole block moves through it per K tile (e.g. A read by ldmatrix once per
// warp column: block_m * block_k * 2 * warps_n). 0 bytes = the layout's size (rows * row_bytes).
struct SmemTraffic {
  std::string what;  // "A ldmatrix", "B cp.async", ...
  banksim::TileLayout layout;
  banksim::TileOp op = banksim::TileOp::Ldmatrix;
  double bytes_per_k_tile = 0;
};

struct CostInput {
  KernelConfig config;              // tile, stages, threads, cluster, split_k, raster_group, packing
  MathInstr math = MathInstr::MmaSync;
  int consumer_threads = 0;         // threads that hold accumulators (0 = all threads)
  int regs_per_thread = 0;          // known count (setmaxnreg, cuobjdump); 0 = the model estimates
  long smem_extra_bytes = 0;        // beyond the stages x (A + B) ring: epilogue staging, barriers
  std::vector<SmemTraffic> smem;    // simulated for bank conflicts; empty = derived (default_smem_traffic)
  double math_efficiency = 0;       // fraction of the instruction peak the main loop reaches
                                    // (0 = default: 0.85, measured cuBLAS-class kernels)
  double extra_fixed_us = 0;        // e.g. a separate split-K reduction or packing launch
  int b_readers = 0;                // tiles one L2 read of a B panel serves (0 = config.cluster_m:
                                    // the cluster's multicast); see family_sm90.cpp's twin rule
  int64_t b_copies = 0;             // distinct B matrices read (grouped problems costed as one
                                    // batch whose row groups each have their own B); 0 = batch_count
  double l2_rate_factor = 1.0;      // this kernel's measured L2 -> SM rate over the description's
                                    // (fitted on the cooperative kernels); see family_sm90.cpp
};

// Every term of the estimate, kept so that a plan can say why it was chosen.
struct CostEstimate {
  bool feasible = true;
  std::string reason;               // when !feasible: which limit, the need and the limit

  long smem_bytes = 0;              // per block
  int regs_per_thread = 0;          // given or estimated
  int blocks_per_sm = 0;            // occupancy
  int warps_per_sm = 0;
  long tiles = 0;                   // output tiles x split_k x batch
  double waves = 0;                 // tiles / (blocks_per_sm x sm_count), unrounded
  double wave_efficiency = 0;       // useful share of the last-rounded waves, 0..1
  double conflict_degree = 1.0;     // traffic-weighted wavefronts / ideal over cfg.smem
  double hbm_bytes = 0, l2_bytes = 0;

  double compute_us = 0;            // busiest SM's math at the instruction peak x efficiency
  double smem_us = 0;               // busiest SM's shared-memory wavefronts
  double latency_us = 0;            // busiest SM's time when load latency is not hidden by stages
  double sm_us = 0;                 // busiest SM: per K tile the 4-norm of the three above
  double hbm_us = 0, l2_us = 0;
  double overhead_us = 0;           // launch, prologue, extra launches
  double predicted_us = 0;          // max(sm_us, hbm_us, l2_us) + overhead_us
  const char* bound = "";           // "compute", "smem", "latency", "hbm", "l2"

  // "compute-bound 1.21 waves (61%), 1 blk/SM, 168 regs, 98304 B smem, conflicts 1.00, ..."
  std::string notes() const;
  // JSON object with every term.
  std::string to_json() const;
};

CostEstimate estimate_cost(const GemmProblem& p, const Epilogue& e, const HardwareDesc& hw, const CostInput& in);

// The rows a grouped problem is costed for as one batch of a kernel with `block_m`-row tiles,
// when the groups' row counts (read by the kernel on the device) are not known at plan time:
//  - contiguous: the m shared rows, or G x expected_m when the caller hints it; plus half a tile
//    per group when m_alignment is not a multiple of block_m (a group's first tile then starts
//    inside a tile-sized span the previous group ends in, so on average each adds half a tile);
//  - masked with expected_m: per group its tiles on average, expected_m / block_m + 1/2 (the last
//    one partial), at least one (a group with rows) and at most a full slot's.
// Masked problems without a hint are costed as G full slots (the strided batch they are laid
// out as), which callers do without this function. (An earlier contiguous model, G even groups of
// m / G + BLOCK_M / 2 rows, chose 128x256 for 8 experts of 64 tokens: 190 us on the H200 where
// 128x128 ran 128 us; run 4, bench/RESULTS.md.)
int64_t grouped_cost_rows(const Grouping& g, int64_t m, int64_t groups, int block_m);

// The shared-memory traffic the model assumes when a family describes none: K-major A and B
// tiles of block_k elements per row, swizzled with config.swizzle_bytes (capped at the row
// length; 0 = unswizzled), read as 8-row x 16-byte core matrices (ldmatrix for mma.sync, the
// same phases for wgmma's descriptors). mma.sync: A is read once per warp column and B once per
// warp row (warps_m = 2 when there are 2+ warps); wgmma: A once, B once per consumer warpgroup.
std::vector<SmemTraffic> default_smem_traffic(const GemmProblem& p, const CostInput& in);

// Shared-memory ring of a candidate: stages x (block_m x block_k x |A| + block_n x block_k x |B|).
long operand_ring_bytes(const GemmProblem& p, const KernelConfig& c);

}  // namespace dgemm
