// The shared cost model's terms on cases whose direction is known: wave quantization, bank
// conflicts, tile order vs HBM traffic, split-K and packing traffic, stages vs exposed latency,
// and infeasibility reasons that name the limit.
#include <boost/test/unit_test.hpp>

#include <string>

#include "core/stream_k.hpp"
#include "plan/arch_file.hpp"
#include "plan/cost_model.hpp"

using namespace dgemm;

namespace {

HardwareDesc h200() { return apply_arch_file(cpu_hardware(), "h200"); }

GemmProblem problem(int64_t m, int64_t n, int64_t k) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.resolve_and_validate();
  return p;
}

CostInput input(int bm, int bn, int bk, int stages, int threads, MathInstr math = MathInstr::Wgmma) {
  CostInput in;
  in.config.family = math == MathInstr::Wgmma ? Family::Sm90 : Family::Sm80;
  in.config.block_m = bm;
  in.config.block_n = bn;
  in.config.block_k = bk;
  in.config.stages = stages;
  in.config.threads = threads;
  in.config.swizzle_bytes = 128;  // conflict-free default traffic unless a test says otherwise
  in.math = math;
  return in;
}

}  // namespace

BOOST_AUTO_TEST_CASE(one_tile_more_than_the_sms_costs_a_whole_wave) {
  HardwareDesc hw = h200();
  CostInput in = input(128, 128, 64, 4, 256);
  in.regs_per_thread = 200;  // one block per SM
  // 132 tiles = one full wave; 133 tiles = a second wave for one SM.
  CostEstimate full = estimate_cost(problem(128 * 12, 128 * 11, 8192), Epilogue{}, hw, in);
  CostEstimate over = estimate_cost(problem(128 * 12, 128 * 11 + 1, 8192), Epilogue{}, hw, in);
  BOOST_TEST_REQUIRE(full.feasible);
  BOOST_TEST(full.blocks_per_sm == 1);
  BOOST_TEST(full.tiles == 132);
  BOOST_TEST(full.waves == 1.0);
  BOOST_TEST(full.wave_efficiency == 1.0);
  BOOST_TEST(over.tiles == 144);
  BOOST_TEST(over.wave_efficiency < 0.6);
  BOOST_TEST(over.compute_us == 2.0 * full.compute_us, boost::test_tools::tolerance(1e-9));
}

// Stream-K (core/stream_k.hpp): the tiles past the last whole wave are shared out by K blocks,
// in even pieces of each tile where there are CTAs for two or more per tile (at most four), in
// contiguous ranges crossing tiles otherwise; a whole number of waves shares nothing. The cost
// then charges the busiest SM its whole tiles plus one range, not a whole extra wave.
BOOST_AUTO_TEST_CASE(stream_k_shares_out_the_partial_wave) {
  const StreamKSplit even = stream_k_split(544, 132, 56);  // 4096 x 2112 x 7168 i8, 128x128
  BOOST_TEST(even.dp_tiles == 528);
  BOOST_TEST(even.sk_tiles == 16);
  BOOST_TEST(even.split == 4);
  BOOST_TEST(even.sk_ctas == 64);
  BOOST_TEST(even.sk_iters == 14);
  const StreamKSplit ranges = stream_k_split(1024, 132, 32);  // 4096^3 i8: 100 tiles past 7 waves
  BOOST_TEST(ranges.split == 0);
  BOOST_TEST(ranges.dp_tiles == 924);
  BOOST_TEST(ranges.sk_iters == 25);
  BOOST_TEST(ranges.sk_ctas == 128);
  BOOST_TEST(ranges.sk_ctas * ranges.sk_iters >= ranges.sk_tiles * 32);
  BOOST_TEST(ranges.max_pieces == 3);
  const StreamKSplit few = stream_k_split(64, 132, 128);  // fewer tiles than CTAs: two pieces each
  BOOST_TEST(few.dp_tiles == 0);
  BOOST_TEST(few.split == 2);
  BOOST_TEST(few.sk_ctas == 128);
  const StreamKSplit whole = stream_k_split(1056, 132, 32);
  BOOST_TEST(whole.sk_tiles == 0);
  BOOST_TEST(whole.dp_tiles == 1056);
  // One K block per tile: nothing to cut.
  BOOST_TEST(stream_k_split(100, 132, 1).sk_tiles == 0);
  // A grouped kernel's split (on the device): the even pieces as above, but whole units where
  // a plain launch would cut ranges (4096x7168, 8 groups, 2688 rows of 128x256: 72 units past
  // two waves; 2432 rows: 40 past, in thirds).
  const StreamKSplit g_even = stream_k_split(544, 132, 56, true);
  BOOST_TEST(g_even.split == even.split);
  BOOST_TEST(g_even.sk_tiles == even.sk_tiles);
  BOOST_TEST(g_even.sk_ctas == even.sk_ctas);
  BOOST_TEST(stream_k_split(336, 132, 112).split == 0);
  BOOST_TEST(stream_k_split(336, 132, 112).sk_tiles == 72);
  const StreamKSplit g_ranges = stream_k_split(336, 132, 112, true);
  BOOST_TEST(g_ranges.sk_tiles == 0);
  BOOST_TEST(g_ranges.dp_tiles == 336);
  BOOST_TEST(g_ranges.sk_ctas == 0);
  BOOST_TEST(g_ranges.max_pieces == 1);
  BOOST_TEST(stream_k_split(304, 132, 112, true).split == 3);
  BOOST_TEST(stream_k_split(64, 132, 128, true).split == 2);

  HardwareDesc hw = h200();
  CostInput in = input(128, 128, 128, 6, 384);
  in.regs_per_thread = 168;
  GemmProblem p = problem(4096, 2112, 7168);
  p.a_type = p.b_type = DType::I8;
  p.c_type = p.d_type = DType::I32;
  p.compute_type = DType::I32;
  p.resolve_and_validate();
  const CostEstimate dp = estimate_cost(p, Epilogue{}, hw, in);
  in.config.stream_k = true;
  const CostEstimate sk = estimate_cost(p, Epilogue{}, hw, in);
  BOOST_TEST_REQUIRE(dp.feasible);
  BOOST_TEST_REQUIRE(sk.feasible);
  // Busiest SM: 5 tiles x 56 K blocks whole, against 4 x 56 + 14 shared.
  BOOST_TEST(sk.compute_us / dp.compute_us == (4.0 * 56 + 14) / (5.0 * 56), boost::test_tools::tolerance(1e-9));
  BOOST_TEST(sk.overhead_us > dp.overhead_us);  // three partials read by the tile's first piece
  BOOST_TEST(sk.wave_efficiency > 0.95);
  BOOST_TEST(dp.wave_efficiency < 0.85);
}

BOOST_AUTO_TEST_CASE(bank_conflicts_raise_the_shared_memory_term) {
  HardwareDesc hw = h200();
  GemmProblem p = problem(4096, 4096, 4096);
  CostInput plain = input(128, 128, 64, 4, 256, MathInstr::MmaSync);
  CostInput swz = plain;
  const double bytes = 128.0 * 64 * 2 * 2;  // A read by 2 warp columns
  plain.smem = {{"A ldmatrix", banksim::TileLayout::k_major(128, 64, 2, banksim::Swizzle::none()), banksim::TileOp::Ldmatrix, bytes}};
  swz.smem = {{"A ldmatrix", banksim::TileLayout::k_major(128, 64, 2, banksim::Swizzle::span_bytes(128)), banksim::TileOp::Ldmatrix, bytes}};
  CostEstimate a = estimate_cost(p, Epilogue{}, hw, plain), b = estimate_cost(p, Epilogue{}, hw, swz);
  BOOST_TEST(a.conflict_degree == 8.0);
  BOOST_TEST(b.conflict_degree == 1.0);
  BOOST_TEST(a.smem_us == 8.0 * b.smem_us, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(a.predicted_us >= b.predicted_us);
  BOOST_TEST(std::string(a.bound) == "smem");  // 8-way conflicts dominate the main loop
}

BOOST_AUTO_TEST_CASE(grouped_rasterization_reads_less_from_hbm_for_wide_problems) {
  HardwareDesc hw = h200();
  GemmProblem p = problem(8192, 57344, 8192);  // operands far larger than the L2
  CostInput row = input(128, 256, 64, 4, 384);
  CostInput grouped = row;
  grouped.config.raster_group = 8;
  CostEstimate r = estimate_cost(p, Epilogue{}, hw, row), g = estimate_cost(p, Epilogue{}, hw, grouped);
  BOOST_TEST(g.hbm_bytes < 0.5 * r.hbm_bytes);
  BOOST_TEST(r.l2_bytes == g.l2_bytes);  // every tile still reads its panels from L2
  // Nothing reads less than the operands and the output once.
  const double floor = (8192.0 * 8192 + 57344.0 * 8192 + 8192.0 * 57344) * 2;
  BOOST_TEST(g.hbm_bytes >= floor);
}

BOOST_AUTO_TEST_CASE(small_operands_are_read_from_hbm_once) {
  HardwareDesc hw = h200();
  GemmProblem p = problem(2048, 2048, 2048);  // 16 MB of operands in a 60 MB L2
  CostEstimate e = estimate_cost(p, Epilogue{}, hw, input(128, 128, 64, 4, 256));
  BOOST_TEST(e.hbm_bytes == 3.0 * 2048 * 2048 * 2, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(split_k_and_packing_cost_traffic_and_time) {
  HardwareDesc hw = h200();
  GemmProblem p = problem(64, 256, 16384);
  CostInput one = input(64, 128, 64, 4, 256);
  CostInput split = one;
  split.config.split_k = 4;
  CostEstimate a = estimate_cost(p, Epilogue{}, hw, one), b = estimate_cost(p, Epilogue{}, hw, split);
  BOOST_TEST(b.tiles == 4 * a.tiles);
  BOOST_TEST(b.hbm_bytes > a.hbm_bytes);
  BOOST_TEST(b.compute_us < a.compute_us);  // 2 tiles cannot fill 132 SMs: splitting K helps the math

  CostInput packed = one;
  packed.config.pack_a = true;
  CostEstimate c = estimate_cost(p, Epilogue{}, hw, packed);
  BOOST_TEST(c.hbm_bytes == a.hbm_bytes + 2.0 * 64 * 16384 * 2, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(c.predicted_us > a.predicted_us);
}

BOOST_AUTO_TEST_CASE(too_few_stages_expose_load_latency) {
  HardwareDesc hw = h200();
  GemmProblem p = problem(4096, 4096, 4096);
  CostInput two = input(64, 64, 64, 2, 256);
  two.regs_per_thread = 255;  // keep one block per SM so that nothing else hides the latency
  two.smem_extra_bytes = 100 * 1024;
  CostInput six = two;
  six.config.stages = 6;
  CostEstimate a = estimate_cost(p, Epilogue{}, hw, two), b = estimate_cost(p, Epilogue{}, hw, six);
  BOOST_TEST_REQUIRE(a.feasible);
  BOOST_TEST_REQUIRE(b.feasible);
  BOOST_TEST(a.blocks_per_sm == 1);
  BOOST_TEST(std::string(a.bound) == "latency");
  BOOST_TEST(b.latency_us < a.latency_us);
  BOOST_TEST(b.predicted_us < a.predicted_us);
}

BOOST_AUTO_TEST_CASE(infeasible_candidates_name_the_limit) {
  HardwareDesc hw = h200();
  GemmProblem p = problem(1024, 1024, 1024);
  CostEstimate smem = estimate_cost(p, Epilogue{}, hw, input(256, 256, 64, 4, 384));  // 256 KB ring
  BOOST_TEST(!smem.feasible);
  BOOST_TEST(smem.reason.find("smem_per_block_optin 232448") != std::string::npos, smem.reason);

  CostInput regs = input(256, 256, 32, 2, 128, MathInstr::MmaSync);  // 512 accumulators per thread
  CostEstimate r = estimate_cost(p, Epilogue{}, hw, regs);
  BOOST_TEST(!r.feasible);
  BOOST_TEST(r.reason.find("max_regs_per_thread 255") != std::string::npos, r.reason);

  CostEstimate threads = estimate_cost(p, Epilogue{}, hw, input(128, 128, 64, 3, 2048));
  BOOST_TEST(!threads.feasible);
  BOOST_TEST(threads.reason.find("max_threads_per_block") != std::string::npos, threads.reason);

  HardwareDesc a100 = apply_arch_file(cpu_hardware(), "a100");
  CostEstimate wg = estimate_cost(p, Epilogue{}, a100, input(128, 128, 64, 3, 256, MathInstr::Wgmma));
  BOOST_TEST(!wg.feasible);
  BOOST_TEST(wg.reason.find("wgmma") != std::string::npos, wg.reason);

  GemmProblem fp8 = p;
  fp8.a_type = fp8.b_type = DType::F8E4M3;
  CostEstimate mma8 = estimate_cost(fp8, Epilogue{}, a100, input(128, 128, 64, 3, 256, MathInstr::MmaSync));
  BOOST_TEST(!mma8.feasible);  // no fp8 tensor cores before sm_89
}

BOOST_AUTO_TEST_CASE(occupancy_from_registers_and_shared_memory) {
  HardwareDesc hw = h200();
  GemmProblem p = problem(4096, 4096, 4096);
  CostInput in = input(64, 64, 32, 3, 128, MathInstr::MmaSync);
  in.regs_per_thread = 128;  // 128 x 128 = 16K registers per block: 4 blocks by registers
  CostEstimate e = estimate_cost(p, Epilogue{}, hw, in);
  BOOST_TEST(e.blocks_per_sm == 4);
  in.smem_extra_bytes = 100 * 1024;  // ~124 KB per block: one fits in 228 KB
  e = estimate_cost(p, Epilogue{}, hw, in);
  BOOST_TEST(e.blocks_per_sm == 1);
  BOOST_TEST(e.warps_per_sm == 4);
}

BOOST_AUTO_TEST_CASE(notes_and_json_carry_the_terms) {
  CostEstimate e = estimate_cost(problem(4096, 4096, 4096), Epilogue{}, h200(), input(128, 256, 64, 4, 384));
  BOOST_TEST(e.feasible);
  const std::string n = e.notes(), j = e.to_json();
  for (const char* part : {"waves", "blk/SM", "regs", "smem", "HBM", "L2", "conflicts"}) BOOST_TEST(n.find(part) != std::string::npos, part);
  for (const char* key : {"\"predicted_us\"", "\"compute_us\"", "\"hbm_us\"", "\"l2_us\"", "\"waves\"", "\"bound\""})
    BOOST_TEST(j.find(key) != std::string::npos, key);
}

BOOST_AUTO_TEST_CASE(derived_traffic_simulates_the_configured_swizzle) {
  HardwareDesc hw = h200();
  GemmProblem p = problem(4096, 4096, 4096);
  CostInput swz = input(128, 128, 64, 4, 256, MathInstr::MmaSync);
  CostInput plain = swz;
  plain.config.swizzle_bytes = 0;
  BOOST_TEST(default_smem_traffic(p, swz).size() == 2u);
  CostEstimate a = estimate_cost(p, Epilogue{}, hw, plain), b = estimate_cost(p, Epilogue{}, hw, swz);
  BOOST_TEST(a.conflict_degree == 8.0);  // 128-byte rows, no swizzle: 8 rows of a phase share banks
  BOOST_TEST(b.conflict_degree == 1.0);
  BOOST_TEST(a.predicted_us > b.predicted_us);
  // 64-byte rows (block_k 32 bf16): a 128B swizzle is capped to the row, conflict free.
  CostInput narrow = input(128, 128, 32, 4, 256, MathInstr::MmaSync);
  BOOST_TEST(estimate_cost(p, Epilogue{}, hw, narrow).conflict_degree == 1.0);
}
