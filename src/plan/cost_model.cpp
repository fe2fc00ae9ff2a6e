// The shared cost model (see cost_model.hpp). Every constant here is a modelling choice, named and
// explained where it is used, so that the device measurements can correct it in one place.
#include "plan/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/stream_k.hpp"

namespace dgemm {
namespace {

// A global load's latency under load (HBM through L2): what `stages - 1` tiles in flight per block
// must cover; by Little's law it also caps the bandwidth one SM can pull. Fitted on the H200
// (2026-11-29): the sm80 kernel at 64x8192x8192 (91 us) and 128x7168x16384 (178 us), where a
// block streams K with 3 tiles in flight, implies ~1 us; unloaded latency is ~0.5-0.6 us.
constexpr double kLoadLatencyUs = 1.0;
// Launch plus the first tile's load and the last tile's store: fixed per kernel.
constexpr double kLaunchUs = 2.5;
// Default fraction of the instruction peak a well-fed main loop reaches (cuBLAS reaches
// 794/989 = 0.80 on H200 bf16 4096^3; Ampere mma.sync kernels about 0.85).
constexpr double kDefaultMathEfficiency = 0.85;
// Shared memory reserved by the system per block (sm_80+ reserve 1 KB).
constexpr long kSmemReservedPerBlock = 1024;
// Registers are allocated per warp in units of 256.
constexpr int kRegAllocUnit = 256;
// L2 -> SM bandwidth when the description has none (a detected GPU: the CUDA backend fills in no
// L2 rate), per SM per clock; the SMs' request rate bounds it. Was 27.5 (7.2 TB/s over 132 SMs at
// 1980 MHz, scaled from an H100 PCIe microbenchmark). Refitted on the H200 (2026-12-01 runs A-E,
// bench/offline_regret.py): at 27.5 the model chose K-split and 64-row tiles over 128x64 tiles
// that ran 20-30 % faster (llm rows: 12.3 % regret). 32.3 (8.44 TB/s on the H200) is the middle
// of the range, 8.4-8.5 TB/s, where both the offline description (h200.yaml, bf16 peak 989 TFLOP/s)
// and the detected device (peak from its 1980 MHz clock: 1070) rank the measured tiles best with
// the K-split and 128x64 terms below; 8.3 keeps two llm K splits, 8.6 moves mid 1024x1024x4096
// off its best K split offline. GEMM panel reads measured up to 12-14 TB/s (512x2112x7168,
// 128x64: 363 MB in 29.9 us): this is the model's effective rate, not the hardware's peak.
constexpr double kL2BytesPerSmClock = 32.3;
// Fraction of peak HBM bandwidth GEMM streams reach (H200: 4.0-4.4 of 4.8 TB/s measured).
constexpr double kHbmEfficiency = 0.88;
// What one SM pulls from HBM at most when its operands stream through once (decode weights):
// fitted on the H200 (2026-12-01, bench/RESULTS.md): 64 CTAs streaming 1x4096x4096's 33.5 MB took
// 12.7 us, 128 CTAs 12.0 us (~3.5 us of it fixed), i.e. ~50-60 GB/s per SM before the whole
// chip's bandwidth binds. Few CTAs therefore cannot reach HBM bandwidth.
constexpr double kSmHbmBytesPerUs = 50e3;

// How fast a K-split cluster's partial fp32 tiles reach the leader and are added there, per clock
// (the store through distributed shared memory, the cluster barrier and the leader's add pass
// together). Fitted on the H200 (2026-12-01 runs A-E, bench/offline_regret.py): at 32 B/clock the
// model chose K splits of large tiles that ran 20-30 % slower than a plain tile (128x7168x2048:
// 128x128 ck2 14.5 us, 128x64 11.3; 512x2112x7168: 128x192 ck2 39.0 us, 128x64 29.9); over the
// K-split kernels measured side by side the reduction costs ~3x that. 10-11 give the same
// choices; 9 moves 1024x1024x4096 off its best K split, 12 brings back the llm K splits.
constexpr double kDsmemReduceBytesPerClock = 10.5;

long ceil_div(long a, long b) { return b > 0 ? (a + b - 1) / b : 0; }

}  // namespace

double peak_tflops_for(const HardwareDesc& hw, DType t) {
  switch (t) {
    case DType::BF16: return hw.peak_tflops_bf16;
    case DType::F16: return hw.peak_tflops_f16;
    case DType::F8E4M3: case DType::F8E5M2: return hw.peak_tflops_fp8;
    case DType::I8: return hw.peak_tops_i8;
    case DType::F32: return hw.peak_tflops_f32;
    case DType::I32: return 0;
  }
  return 0;
}

namespace {

int estimate_registers(const CostInput& in, const GemmProblem& p) {
  const KernelConfig& c = in.config;
  const int threads = std::max(1, in.consumer_threads ? in.consumer_threads : c.threads);
  const int warps = std::max(1, threads / 32);
  // One 32-bit register per fp32/i32 accumulator element.
  const double acc = double(c.block_m) * c.block_n / threads;
  double frag = 0, overhead = 0;
  switch (in.math) {
    case MathInstr::Wgmma:
      // Operands come from shared memory through descriptors: only accumulators and addressing.
      overhead = 24;
      break;
    case MathInstr::MmaSync: {
      // A warp's fragments for one k16 step are (warp_m + warp_n) / 4 registers for 16-bit types,
      // double-buffered; with a near-square warp tile warp_m + warp_n ~ 2 sqrt(area).
      const double area = double(c.block_m) * c.block_n / warps;
      const double scale = double(dtype_size(p.a_type)) / 2.0;
      frag = 2.0 * (2.0 * std::sqrt(area)) / 4.0 * std::max(scale, 0.5);
      overhead = 40;
      break;
    }
    case MathInstr::Simt: {
      const double per_thread = std::sqrt(acc);
      frag = 2.0 * per_thread;
      overhead = 32;
      break;
    }
  }
  int regs = int(std::ceil(acc + frag + overhead));
  return (regs + 7) / 8 * 8;
}

}  // namespace

const char* math_instr_name(MathInstr m) {
  switch (m) {
    case MathInstr::Wgmma: return "wgmma";
    case MathInstr::MmaSync: return "mma.sync";
    case MathInstr::Simt: return "fma";
  }
  return "?";
}

double instruction_peak_tflops(const HardwareDesc& hw, DType a_type, MathInstr instr) {
  if (hw.vendor != Vendor::Nvidia) return 0;
  switch (instr) {
    case MathInstr::Wgmma:
      if (!hw.has_wgmma || a_type == DType::F32) return 0;
      return peak_tflops_for(hw, a_type);
    case MathInstr::MmaSync: {
      if (a_type == DType::F32 || hw.cc() < 80) return 0;
      if (dtype_is_fp8(a_type) && hw.cc() < 89) return 0;
      double peak = peak_tflops_for(hw, a_type);
      // Hopper's tensor cores reach full rate only through wgmma; mma.sync measures ~62%.
      if (hw.has_wgmma) peak *= 0.62;
      return peak;
    }
    case MathInstr::Simt:
      return hw.peak_tflops_f32;
  }
  return 0;
}

std::vector<SmemTraffic> default_smem_traffic(const GemmProblem& p, const CostInput& in) {
  const KernelConfig& c = in.config;
  if (in.math == MathInstr::Simt || c.block_k <= 0) return {};
  const int a_row = c.block_k * int(dtype_size(p.a_type)), b_row = c.block_k * int(dtype_size(p.b_type));
  auto swizzle_for = [&](int row_bytes) {
    return banksim::Swizzle::span_bytes(c.swizzle_bytes > 0 ? std::min(c.swizzle_bytes, row_bytes) : 0);
  };
  double a_reads = 1, b_reads = 1;
  if (in.math == MathInstr::MmaSync) {
    const int warps = std::max(1, c.threads / 32);
    const int warps_m = warps >= 2 ? 2 : 1;
    a_reads = double(warps / warps_m);
    b_reads = double(warps_m);
  } else {
    const int consumers = in.consumer_threads > 0 ? in.consumer_threads : c.threads;
    b_reads = double(std::max(1, consumers / 128));
  }
  return {{"A tile", banksim::TileLayout::k_major(c.block_m, c.block_k, int(dtype_size(p.a_type)), swizzle_for(a_row)),
           banksim::TileOp::Ldmatrix, double(c.block_m) * a_row * a_reads},
          {"B tile", banksim::TileLayout::k_major(c.block_n, c.block_k, int(dtype_size(p.b_type)), swizzle_for(b_row)),
           banksim::TileOp::Ldmatrix, double(c.block_n) * b_row * b_reads}};
}

long operand_ring_bytes(const GemmProblem& p, const KernelConfig& c) {
  return long(c.stages) * (long(c.block_m) * c.block_k * long(dtype_size(p.a_type)) +
                           long(c.block_n) * c.block_k * long(dtype_size(p.b_type)));
}

int64_t grouped_cost_rows(const Grouping& g, int64_t m, int64_t groups, int block_m) {
  const int64_t bm = std::max(1, block_m), G = std::max<int64_t>(1, groups);
  if (g.contiguous()) {
    const int64_t rows = g.expected_m > 0 ? std::min(m, G * g.expected_m) : m;
    return rows + (g.m_alignment % bm == 0 ? 0 : G * bm / 2);
  }
  if (g.expected_m <= 0) return m * G;
  const double slot_tiles = double((m + bm - 1) / bm);
  const double tiles = std::clamp(double(g.expected_m) / double(bm) + 0.5, 1.0, slot_tiles);
  return int64_t(std::llround(tiles * double(G) * double(bm)));
}

CostEstimate estimate_cost(const GemmProblem& p, const Epilogue& e, const HardwareDesc& hw, const CostInput& in) {
  CostEstimate est;
  const KernelConfig& c = in.config;
  auto reject = [&](const std::string& why) {
    est.feasible = false;
    est.reason = why;
    return est;
  };
  if (c.block_m <= 0 || c.block_n <= 0 || c.block_k <= 0 || c.stages <= 0 || c.threads <= 0)
    return reject("incomplete configuration " + c.name());

  // ---- resources: shared memory, registers, occupancy
  est.smem_bytes = operand_ring_bytes(p, c) + std::max(0L, in.smem_extra_bytes);
  est.regs_per_thread = in.regs_per_thread > 0 ? in.regs_per_thread : estimate_registers(in, p);
  std::ostringstream why;
  if (c.threads > hw.max_threads_per_block) {
    why << c.threads << " threads per block > max_threads_per_block " << hw.max_threads_per_block;
    return reject(why.str());
  }
  if (est.smem_bytes > hw.smem_per_block_optin) {
    why << "needs " << est.smem_bytes << " B shared memory per block > smem_per_block_optin "
        << hw.smem_per_block_optin << " B";
    return reject(why.str());
  }
  if (est.regs_per_thread > hw.max_regs_per_thread) {
    why << "needs ~" << est.regs_per_thread << " registers/thread > max_regs_per_thread "
        << hw.max_regs_per_thread << " (would spill)";
    return reject(why.str());
  }
  const int warps = (c.threads + hw.warp_size - 1) / std::max(1, hw.warp_size);
  const long regs_per_warp = ceil_div(long(est.regs_per_thread) * hw.warp_size, kRegAllocUnit) * kRegAllocUnit;
  const long by_regs = regs_per_warp > 0 ? hw.regs_per_sm / (regs_per_warp * warps) : hw.max_blocks_per_sm;
  const long by_warps = hw.max_warps_per_sm / std::max(1, warps);
  const long by_smem = est.smem_bytes > 0 ? hw.smem_per_sm / (est.smem_bytes + kSmemReservedPerBlock)
                                          : long(hw.max_blocks_per_sm);
  const long blocks = std::min({long(hw.max_blocks_per_sm), by_regs, by_warps, by_smem});
  if (blocks < 1) {
    if (by_regs < 1) why << est.regs_per_thread << " regs x " << c.threads << " threads > regs_per_sm " << hw.regs_per_sm;
    else if (by_smem < 1) why << est.smem_bytes << " B + " << kSmemReservedPerBlock << " B reserved > smem_per_sm " << hw.smem_per_sm;
    else why << warps << " warps > max_warps_per_sm " << hw.max_warps_per_sm;
    return reject("no block fits on an SM: " + why.str());
  }
  est.blocks_per_sm = int(blocks);
  est.warps_per_sm = int(blocks) * warps;

  const double peak = instruction_peak_tflops(hw, p.a_type, in.math);
  if (peak <= 0) {
    why << hw.name << " has no " << math_instr_name(in.math) << " rate for " << dtype_name(p.a_type);
    return reject(why.str());
  }

  // ---- work decomposition and wave quantization
  const long tiles_m = ceil_div(p.m, c.block_m), tiles_n = ceil_div(p.n, c.block_n);
  // K splits: through the workspace (split_k, a second launch reduces) or inside a cluster
  // (cluster_k, reduced in distributed shared memory); either way each CTA does 1/split of K.
  const int split = std::max(1, c.split_k) * std::max(1, c.cluster_k);
  // A cluster along M (N) takes cluster_m (cluster_n) adjacent tiles: an odd or single row (column)
  // of tiles still occupies the whole cluster (its extra CTAs compute out-of-range tiles).
  const long cm = std::max(1, c.cluster_m), cn = std::max(1, c.cluster_n);
  const long out_tiles = ceil_div(tiles_m, cm) * cm * ceil_div(tiles_n, cn) * cn * std::max<int64_t>(1, p.batch_count);
  est.tiles = out_tiles * split;
  const int cluster = std::max(1, c.cluster_m) * std::max(1, c.cluster_n) * std::max(1, c.cluster_k);
  const long slots = std::max(1L, long(hw.sm_count) / cluster * cluster) * est.blocks_per_sm;
  const long full_waves = ceil_div(est.tiles, slots);
  est.waves = double(est.tiles) / double(slots);
  est.wave_efficiency = est.waves / double(full_waves);
  // The busiest SM processes every full wave's blocks_per_sm tiles, then its share of the last.
  const long last = est.tiles - (full_waves - 1) * slots;
  const long sms = std::max(1L, slots / est.blocks_per_sm);
  const long busiest_tiles = (full_waves - 1) * est.blocks_per_sm + ceil_div(last, sms);
  const long resident = std::min<long>(est.blocks_per_sm, busiest_tiles);

  // ---- per K tile on one SM: math, shared memory, exposed latency
  const long k_split = ceil_div(p.k, split);
  const long k_tiles = std::max(1L, ceil_div(k_split, c.block_k));
  const double eff = in.math_efficiency > 0 ? in.math_efficiency : kDefaultMathEfficiency;
  const double sm_flops_per_us = peak * 1e6 * eff / std::max(1, hw.sm_count);
  const double tile_k_flops = 2.0 * c.block_m * c.block_n * c.block_k;
  const double math_per_k = tile_k_flops / sm_flops_per_us;

  const double clock = hw.clock_mhz > 0 ? hw.clock_mhz : 1500.0;
  const double smem_bytes_per_us = double(hw.smem_banks) * hw.smem_bank_bytes * clock;
  double smem_per_k = 0, weighted = 0, weight = 0;
  const std::vector<SmemTraffic> traffic = in.smem.empty() ? default_smem_traffic(p, in) : in.smem;
  for (const SmemTraffic& s : traffic) {
    const double degree = banksim::tile_conflict_degree(s.layout, s.op);
    const double bytes = s.bytes_per_k_tile > 0 ? s.bytes_per_k_tile : double(s.layout.rows) * s.layout.row_bytes;
    smem_per_k += bytes * degree / smem_bytes_per_us;
    weighted += bytes * degree;
    weight += bytes;
  }
  est.conflict_degree = weight > 0 ? weighted / weight : 1.0;
  // `stages - 1` tiles are in flight while one is consumed; other resident blocks hide latency too.
  const double latency_us = kLoadLatencyUs;
  const double in_flight = double(std::max(1, c.stages - 1)) * double(resident);
  const double latency_per_k = latency_us / in_flight;

  // The three share the SM's issue slots and rarely overlap perfectly: a 4-norm is the max when
  // one dominates and up to 19% more when all three are equal (fitted: the sm80 kernel on the
  // H200 at 4096^3, where math, latency and L2 are within 15% of each other, runs 1.5x the max).
  const double per_k = std::pow(std::pow(math_per_k, 4) + std::pow(smem_per_k, 4) + std::pow(latency_per_k, 4), 0.25);
  double busy_k = double(busiest_tiles) * double(k_tiles);
  // Stream-K: full waves of whole tiles, then each CTA's range of the remaining tiles' K blocks;
  // the CTA finishing a shared tile reads up to max_pieces - 1 partial tiles from L2 (below).
  // (A grouped kernel splits the units it counts on the device, in even pieces only.)
  const StreamKSplit sk =
      c.stream_k ? stream_k_split(est.tiles, slots, k_tiles, p.grouping.grouped()) : StreamKSplit{};
  if (sk.sk_tiles > 0) {
    busy_k = double(sk.dp_tiles / slots) * double(k_tiles) + double(sk.sk_iters);
    // The busiest SM's share of the work in tiles: what "% used" then reports.
    est.wave_efficiency = est.waves / (busy_k / double(k_tiles));
  }
  est.compute_us = busy_k * math_per_k;
  est.smem_us = busy_k * smem_per_k;
  est.latency_us = busy_k * latency_per_k;
  est.sm_us = busy_k * per_k;

  // ---- memory traffic
  const double a_sz = double(dtype_size(p.a_type)), b_sz = double(dtype_size(p.b_type));
  const double batch = double(std::max<int64_t>(1, p.batch_count));
  const double a_bytes = double(p.m) * p.k * a_sz * batch,
               b_bytes = double(p.n) * p.k * b_sz * (in.b_copies > 0 ? double(in.b_copies) : batch);
  const double d_bytes = double(p.m) * p.n * dtype_size(p.d_type) * batch;
  const double c_bytes = e.reads_c() ? double(p.m) * p.n * dtype_size(p.c_type) * batch : 0.0;
  // L2 -> SM: every tile reads its A and B panels; multicast in a cluster shares them.
  const double a_panel = double(c.block_m) * k_split * a_sz, b_panel = double(c.block_n) * k_split * b_sz;
  const int b_readers = std::max(1, in.b_readers > 0 ? in.b_readers : c.cluster_m);
  est.l2_bytes = double(est.tiles) * (a_panel / std::max(1, c.cluster_n) + b_panel / b_readers);
  // HBM: per wave of concurrent output tiles, the distinct panels it touches. Row order covers
  // few M rows and many N columns; a raster group of G rows covers G rows x (wave / G) columns.
  const double wave_tiles = double(std::min(out_tiles, slots));
  double rows_w, cols_w;
  if (c.raster_group > 0) {
    rows_w = double(std::min<long>(c.raster_group, tiles_m));
    cols_w = std::min(double(tiles_n), std::ceil(wave_tiles / rows_w));
  } else {
    // W consecutive tiles of a row-major walk span W / tiles_n + 1 rows on average.
    cols_w = std::min(double(tiles_n), wave_tiles);
    rows_w = std::min(double(tiles_m), wave_tiles / double(tiles_n) + 1.0);
  }
  const double out_waves = std::ceil(double(out_tiles) / std::max(1.0, wave_tiles));
  double operand_hbm = out_waves * (rows_w * double(c.block_m) * p.k * a_sz + cols_w * double(c.block_n) * p.k * b_sz);
  // Operands that fit in half the L2 are read from HBM once whatever the order.
  if (a_bytes + b_bytes <= 0.5 * double(hw.l2_bytes)) operand_hbm = a_bytes + b_bytes;
  operand_hbm = std::clamp(operand_hbm, a_bytes + b_bytes, std::max(a_bytes + b_bytes, est.l2_bytes));
  double extra = 0;
  if (c.split_k > 1) extra += 2.0 * double(c.split_k) * double(p.m) * p.n * 4.0 * batch;  // fp32 partials out + in
  const double hbm_bw = hw.mem_bandwidth_gbs * 1e3 * kHbmEfficiency;  // bytes per us
  // Packing is a copy kernel before the GEMM (read + write the operand): serial, not overlapped.
  const double pack_bytes = (c.pack_a ? 2.0 * a_bytes : 0.0) + (c.pack_b ? 2.0 * b_bytes : 0.0);
  const double pack_us = pack_bytes > 0 && hbm_bw > 0 ? pack_bytes / hbm_bw + kLaunchUs : 0.0;
  est.hbm_bytes = operand_hbm + d_bytes + c_bytes + extra;
  const double l2_bw = (hw.l2_bandwidth_gbs > 0 ? hw.l2_bandwidth_gbs : kL2BytesPerSmClock * hw.sm_count * clock / 1e3) * 1e3;
  est.hbm_us = hbm_bw > 0 ? est.hbm_bytes / hbm_bw : 0.0;
  // The busiest SM's share of the operand bytes that come from HBM, at what one SM can pull.
  const double sm_hbm_us = operand_hbm * double(busiest_tiles) / double(std::max(1L, est.tiles)) / kSmHbmBytesPerUs;
  est.hbm_us = std::max(est.hbm_us, sm_hbm_us);
  est.l2_us = l2_bw > 0 ? est.l2_bytes / (l2_bw * (in.l2_rate_factor > 0 ? in.l2_rate_factor : 1.0)) : 0.0;

  // A cluster's K split ends with the partial tiles crossing distributed shared memory into the
  // leader (a few hundred ns per tile plus the fp32 partials at kDsmemReduceBytesPerClock) and a
  // second epilogue-sized wait.
  const double cluster_reduce_us =
      c.cluster_k > 1 ? double(busiest_tiles) * (0.3 + double(c.cluster_k - 1) * c.block_m * c.block_n * 4.0 /
                                                           (kDsmemReduceBytesPerClock * clock)) : 0.0;
  // Stream-K: the CTA finishing a shared tile reads the other pieces' partials through L2 at one
  // SM's share of its rate (their writes overlap the finishing CTA's own main loop), plus a flag's
  // round trip per piece.
  const double sk_reduce_us =
      sk.sk_tiles > 0 && l2_bw > 0
          ? double(sk.max_pieces - 1) * (c.block_m * c.block_n * 4.0 / (l2_bw / std::max(1, hw.sm_count)) + 0.3)
          : 0.0;
  est.overhead_us = kLaunchUs + latency_us + pack_us + cluster_reduce_us + sk_reduce_us + std::max(0.0, in.extra_fixed_us);
  est.hbm_bytes += pack_bytes;
  const double body = std::max({est.sm_us, est.hbm_us, est.l2_us});
  est.predicted_us = body + est.overhead_us;
  if (body == est.hbm_us) est.bound = "hbm";
  else if (body == est.l2_us) est.bound = "l2";
  else if (math_per_k >= smem_per_k && math_per_k >= latency_per_k) est.bound = "compute";
  else if (smem_per_k >= latency_per_k) est.bound = "smem";
  else est.bound = "latency";
  return est;
}

std::string CostEstimate::notes() const {
  if (!feasible) return reason;
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(2);
  os << bound << "-bound, " << waves << " waves (" << int(wave_efficiency * 100.0 + 0.5) << "% used), "
     << blocks_per_sm << " blk/SM, ~" << regs_per_thread << " regs, " << smem_bytes << " B smem, conflicts x"
     << conflict_degree << "; math " << compute_us << " us, smem " << smem_us << " us, latency " << latency_us
     << " us, HBM " << hbm_bytes / 1e6 << " MB " << hbm_us << " us, L2 " << l2_bytes / 1e6 << " MB " << l2_us << " us";
  return os.str();
}

std::string CostEstimate::to_json() const {
  std::ostringstream os;
  os << "{\"feasible\":" << (feasible ? "true" : "false") << ",\"bound\":\"" << bound << "\",\"smem_bytes\":"
     << smem_bytes << ",\"regs_per_thread\":" << regs_per_thread << ",\"blocks_per_sm\":" << blocks_per_sm
     << ",\"warps_per_sm\":" << warps_per_sm << ",\"tiles\":" << tiles << ",\"waves\":" << waves
     << ",\"wave_efficiency\":" << wave_efficiency << ",\"conflict_degree\":" << conflict_degree
     << ",\"hbm_bytes\":" << hbm_bytes << ",\"l2_bytes\":" << l2_bytes << ",\"compute_us\":" << compute_us
     << ",\"smem_us\":" << smem_us << ",\"latency_us\":" << latency_us << ",\"sm_us\":" << sm_us
     << ",\"hbm_us\":" << hbm_us << ",\"l2_us\":" << l2_us << ",\"overhead_us\":" << overhead_us
     << ",\"predicted_us\":" << predicted_us << "}";
  return os.str();
}

}  // namespace dgemm
