// sm90 family without a GPU (label cpu; exit 77 = skipped without NVRTC): every configuration the
// planner offers by default compiles with NVRTC for sm_90a (the square menu, the K-split and
// skinny swap-AB tiles, both operand types and all four operand majors, a full epilogue in both
// output orders), ptxas keeps the setmaxnreg register split of the 384-thread kernels (no C7508
// warning) with no spills and no stack, and, where cuobjdump is installed, the SASS has HGMMA and
// TMA loads and no local memory (LDL/STL). The generated wgmma atoms match their generator.
#include <boost/test/unit_test.hpp>

#if DGEMM_WITH_CUDA

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backend/cuda/jit.hpp"
#include "backend/cuda/sm90_gemm.hpp"
#include "core/scaling.hpp"
#include "common/nvrtc_checks.hpp"
#include "plan/arch_file.hpp"
#include "plan/families.hpp"
#include "plan/planner.hpp"

namespace {

using namespace dgemm;
using dgemm_test::find_cuobjdump;

using dgemm_test::CacheDirFixture;
using dgemm_test::RequireNvrtc;
BOOST_TEST_GLOBAL_FIXTURE(RequireNvrtc);
BOOST_TEST_GLOBAL_FIXTURE(CacheDirFixture);

std::size_t count(const std::string& text, const std::regex& re) {
  return std::size_t(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

// Checks one compiled variant (a "" result); otherwise what is wrong. Registers as ptxas reports them
// go to *regs.
std::string check_code(const KernelConfig& c, const jit::CompiledCode& code, bool tma_store, std::string* regs) {
  const std::string& log = code.log;
  std::ostringstream bad;
  std::smatch m;
  if (!(std::regex_search(log, m, std::regex(R"((\d+) bytes spill stores, (\d+) bytes spill loads)")) && m[1] == "0" &&
        m[2] == "0"))
    bad << "spills or no ptxas statistics; ";
  if (!(std::regex_search(log, m, std::regex(R"((\d+) bytes stack frame)")) && m[1] == "0")) bad << "stack frame; ";
  // setmaxnreg is honoured only with a register cap at entry; ptxas says so when it is not.
  if (log.find("C7508") != std::string::npos || log.find("setmaxnreg") != std::string::npos)
    bad << "ptxas ignored setmaxnreg; ";
  if (log.find("serialized") != std::string::npos) bad << "ptxas serialized wgmma; ";
  *regs = std::regex_search(log, m, std::regex(R"(Used (\d+) registers)")) ? m[1].str() : "?";
  // 384 threads x 168 = 64512 of 65536 registers: the cap __launch_bounds__(384, 1) gives; the
  // 256-thread kernels (one consumer warpgroup) may use up to 255.
  if (c.threads == 384 && *regs != "168") bad << "expected 168 registers at entry, ptxas used " << *regs << "; ";
  static const std::string cuobjdump = find_cuobjdump();
  if (!cuobjdump.empty()) {
    const std::string sass = dgemm_test::cuobjdump_cubin(cuobjdump, "-sass", code, "/tmp/dgemm_sm90_cubin_XXXXXX");
    // HGMMA for 16-bit operands, QGMMA for fp8, IGMMA for s8.
    if (count(sass, std::regex(R"(\b[HQI]GMMA\b)")) == 0) bad << "no HGMMA / QGMMA / IGMMA in the SASS; ";
    if (count(sass, std::regex(R"(\b(LDL|STL)\b)")) != 0) bad << "local memory (LDL/STL) in the SASS; ";
    if (count(sass, std::regex(R"(\bUTMALDG\b)")) == 0) bad << "no TMA load (UTMALDG) in the SASS; ";
    // The TMA-stored epilogue (sm90_store_chunks > 0) stores boxes of D with UTMASTG.
    if ((count(sass, std::regex(R"(\bUTMASTG\b)")) != 0) != tma_store)
      bad << (tma_store ? "no TMA store (UTMASTG) in the SASS; " : "a TMA store in a kernel without the staged epilogue; ");
  }
  return bad.str();
}

GemmProblem problem(DType t, Op op_a, Op op_b, Order order = Order::RowMajor, int64_t m = 4096, int64_t n = 4096,
                    int64_t k = 4096) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a_type = p.b_type = t;
  p.c_type = p.d_type = t;
  p.op_a = op_a;
  p.op_b = op_b;
  p.order = order;
  p.resolve_and_validate();
  return p;
}

struct Job {
  GemmProblem p;
  Epilogue e;
  KernelConfig c;
};

// Compiles the jobs on two threads (CI has two cores) and checks each.
void compile_all(const std::vector<Job>& jobs) {
  const std::string arch = jit::arch_for_cc(9, 0);
  std::atomic<std::size_t> next{0};
  std::mutex mu;
  std::vector<std::string> failures, lines;
  auto worker = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < jobs.size();) {
      const Job& j = jobs[i];
      std::string line, bad;
      try {
        jit::CompileRequest r = cuda::sm90_compile_request(j.p, j.e, j.c, arch);
        auto code = jit::compile(r);
        std::string regs;
        bad = check_code(j.c, *code, cuda::sm90_store_chunks(j.c, j.p, &j.e) > 0, &regs);
        line = r.name + " regs " + regs + " (" + std::to_string(code->cubin.size()) + " B cubin)";
        if (!bad.empty()) bad = r.name + ": " + bad + "\n" + code->log;
      } catch (const std::exception& ex) {
        bad = j.c.name() + ": " + ex.what();
      }
      std::lock_guard<std::mutex> lock(mu);
      if (!line.empty()) lines.push_back(line);
      if (!bad.empty()) failures.push_back(bad);
    }
  };
  std::thread t1(worker), t2(worker);
  t1.join();
  t2.join();
  for (const std::string& l : lines) BOOST_TEST_MESSAGE(arch << " " << l);
  for (const std::string& f : failures) BOOST_ERROR(f);
  BOOST_CHECK_EQUAL(lines.size(), jobs.size());
}

}  // namespace

BOOST_AUTO_TEST_CASE(sm90_default_menu_compiles_for_sm90a_with_hgmma_and_no_spills) {
  BOOST_TEST_MESSAGE("cuobjdump: " << (find_cuobjdump().empty() ? "not found (ptxas log only)" : find_cuobjdump()));
  const HardwareDesc hw = apply_arch_file(HardwareDesc{}, "h200");
  std::vector<Job> jobs;
  // Every square tile of the menu (K splits included) on the TN bf16 problem.
  const GemmProblem tn = problem(DType::BF16, Op::N, Op::T);
  const Epilogue plain;
  std::vector<Candidate> menu = sm90_family_model().enumerate(tn, plain, hw);
  BOOST_REQUIRE(!menu.empty());
  for (const Candidate& c : menu) {
    BOOST_CHECK_MESSAGE(c.feasible, c.config.name() << " rejected: " << c.reject_reason);
    if (c.feasible) jobs.push_back({tn, plain, c.config});
  }
  // The four operand majors and f16 on 128x256 with a cluster of 2.
  const KernelConfig big = menu[0].config;
  BOOST_REQUIRE(big.block_m == 128 && big.block_n == 256 && big.cluster_m == 2);
  for (Op op_a : {Op::N, Op::T})
    for (Op op_b : {Op::N, Op::T})
      for (DType t : {DType::BF16, DType::F16})
        if (!(op_a == Op::N && op_b == Op::T && t == DType::BF16)) jobs.push_back({problem(t, op_a, op_b), plain, big});
  // Clusters sharing A (cluster_n): every operand major (an M-major A tile is split into 64-row
  // boxes, one per CTA), f16.
  int shares_a = 0;
  for (const Candidate& c : menu)
    if (c.feasible && c.config.cluster_n > 1 && c.config.block_n == 64) {
      for (Op op_a : {Op::N, Op::T})
        for (Op op_b : {Op::N, Op::T})
          if (!(op_a == Op::N && op_b == Op::T)) jobs.push_back({problem(DType::F16, op_a, op_b), plain, c.config});
      ++shares_a;
    }
  BOOST_CHECK_EQUAL(shares_a, 1);
  // A full epilogue (C, per-column bias, GELU) in a column-major problem.
  Epilogue full;
  full.alpha = 1.5f;
  full.beta = 0.5f;
  full.bias_mode = VectorMode::PerColumn;
  full.activation = Activation::GeluTanh;
  jobs.push_back({problem(DType::BF16, Op::N, Op::T, Order::ColMajor), full, menu[1].config});
  // Two CTAs per SM hold 128 registers a thread: 64x128 b2 with the full epilogue (its register
  // path once spilled 180 bytes on the column biases loaded ahead).
  int b2 = 0;
  for (const Candidate& c : menu)
    if (c.feasible && c.config.blocks_per_sm == 2 && c.config.block_n == 128 && c.config.cluster_k == 1) {
      jobs.push_back({tn, full, c.config});
      ++b2;
    }
  BOOST_CHECK_EQUAL(b2, 1);
  // Skinny tiles: each BLOCK_N bucket of a decode-sized M (swap-AB), both BLOCK_M, every K split
  // on one bucket, an MN-major activation operand, and the full epilogue stored transposed (with
  // the stream-K twins' reduction too, and on the tiles as wide as M = 200).
  int skinny = 0, pairs = 0;
  for (int64_t m : {1, 9, 17, 40, 100, 150, 200, 256}) {
    const GemmProblem decode = problem(DType::BF16, Op::N, Op::T, Order::RowMajor, m, 4096, 4096);
    for (const Candidate& c : sm90_family_model().enumerate(decode, plain, hw)) {
      if (!c.feasible || !c.config.swap_ab) continue;
      const bool all_splits = m == 9;
      if (!all_splits && !(c.config.block_m == 128 && c.config.cluster_k == 4) &&
          !(m == 1 && c.config.block_m == 64 && c.config.cluster_k == 1) && !(m == 40 && c.config.stream_k) &&
          !(m == 200 && c.config.block_n == 200) && c.config.cluster_m != 2)
        continue;
      jobs.push_back({decode, m == 40 || m == 200 || c.config.cluster_m == 2 ? full : plain, c.config});
      ++skinny;
      if (c.config.cluster_m == 2) {
        BOOST_CHECK_MESSAGE(c.measuring_only, c.config.name() << " (pairs sharing the activations) is measuring only");
        ++pairs;
      }
    }
  }
  BOOST_CHECK_GE(skinny, 10);
  // The pairs of swap tiles sharing the activations (cluster_m = 2, each CTA half of the
  // width, a multiple of 8): 64 and 128 rows, the bucket's width and M rounded up to 16, at every
  // M but 1 (M = 9: 16 columns, one width).
  BOOST_CHECK_GE(pairs, 20);
  // Swap tiles narrower than M (several column tiles, where the tiles are few: measuring only in
  // cn2 clusters sharing the weights by multicast, a K-major weight only; chosen alone by a rule
  // at a short K, not for this K = 4096), with the full epilogue stored transposed.
  int narrow = 0;
  for (Op op_b : {Op::T, Op::N}) {
    const GemmProblem few = problem(DType::BF16, Op::N, op_b, Order::RowMajor, 64, 1024, 4096);
    for (const Candidate& c : sm90_family_model().enumerate(few, full, hw))
      if (c.feasible && c.config.swap_ab && c.config.block_m == 64 && c.config.block_n < 64 && c.config.cluster_k == 1 &&
          !c.config.stream_k && c.config.blocks_per_sm == 1) {
        BOOST_CHECK(c.measuring_only);
        jobs.push_back({few, full, c.config});
        ++narrow;
      }
  }
  BOOST_CHECK_EQUAL(narrow, 9);  // tn: 8, 16 and 32 columns, alone and in cn2; nn (N-major weights): alone
  // Columns cut to fill one wave (unswapped, one or two rows of tiles; a rule chooses them at one
  // row of tiles): 112, 56 and 224 columns at 128 rows, 112 at 64, with the full epilogue.
  int wave_fit = 0;
  for (auto [m, n] : {std::pair<int64_t, int64_t>{128, 14336}, {128, 7168}, {256, 14336}, {64, 14336}}) {
    const GemmProblem rows = problem(DType::BF16, Op::N, Op::T, Order::RowMajor, m, n, 2048);
    for (const Candidate& c : sm90_family_model().enumerate(rows, full, hw))
      if (c.feasible && !c.config.swap_ab && c.config.block_n % 64 != 0) {
        jobs.push_back({rows, full, c.config});
        ++wave_fit;
      }
  }
  BOOST_CHECK_EQUAL(wave_fit, 4);
  {
    const GemmProblem decode_t = problem(DType::F16, Op::T, Op::N, Order::RowMajor, 64, 4096, 4096);
    int n = 0;
    for (const Candidate& c : sm90_family_model().enumerate(decode_t, full, hw))
      if (c.feasible && c.config.swap_ab && c.config.block_m == 128 && n++ < 2) jobs.push_back({decode_t, full, c.config});
    BOOST_CHECK_EQUAL(n >= 2, true);
  }
  compile_all(jobs);
}

// The staged (TMA-stored) epilogue goes where the tile's warpgroups own 64 rows of whole 64-column
// boxes, D is 16-bit and stored row-major, and shared memory beside the ring holds the boxes.
BOOST_AUTO_TEST_CASE(sm90_staged_epilogue_where_it_fits) {
  const GemmProblem tn = problem(DType::BF16, Op::N, Op::T);
  auto cfg = [](int bm, int bn, int stages, int cm, int ck, int blocks = 1) {
    KernelConfig c;
    c.family = Family::Sm90;
    c.block_m = bm;
    c.block_n = bn;
    c.block_k = 64;
    c.stages = stages;
    c.cluster_m = cm;
    c.cluster_k = ck;
    c.blocks_per_sm = blocks;
    c.threads = cuda::sm90_threads(c);
    return c;
  };
  // 128x256 s4: 192 KB of ring leaves 2 boxes per warpgroup (32 KB); 128x192 s5 leaves room for 1
  // (of 3); 128x128 s6 the whole tile; 64x128 at two CTAs per SM one box of its half of the SM.
  BOOST_CHECK_EQUAL(cuda::sm90_store_chunks(cfg(128, 256, 4, 2, 1), tn), 2);
  BOOST_CHECK_EQUAL(cuda::sm90_store_chunks(cfg(128, 192, 5, 1, 1), tn), 1);
  BOOST_CHECK_EQUAL(cuda::sm90_store_chunks(cfg(128, 128, 6, 1, 1), tn), 2);
  BOOST_CHECK_EQUAL(cuda::sm90_store_chunks(cfg(64, 128, 4, 1, 1, 2), tn), 1);
  BOOST_CHECK_EQUAL(cuda::sm90_store_chunks(cfg(64, 256, 4, 1, 1), tn), 4);
  // No room beside a 128x192 s3 ring and its split-K parking tile; 128-row warpgroups; 56 columns.
  BOOST_CHECK_EQUAL(cuda::sm90_store_chunks(cfg(128, 192, 3, 1, 2), tn), 0);
  BOOST_CHECK_EQUAL(cuda::sm90_store_chunks(cfg(256, 128, 4, 1, 1), tn), 0);
  BOOST_CHECK_EQUAL(cuda::sm90_store_chunks(cfg(64, 56, 4, 1, 1), tn), 0);
  // Every choice fits the opt-in shared memory.
  for (const KernelConfig& c : {cfg(128, 256, 4, 2, 1), cfg(128, 192, 5, 1, 1), cfg(128, 128, 6, 1, 1)})
    BOOST_CHECK_LE(cuda::sm90_smem_bytes(c, tn), 232448);
  BOOST_CHECK_LE(cuda::sm90_smem_bytes(cfg(64, 128, 4, 1, 1, 2), tn), 233472 / 2 - 1024);
  // f32 or 8-bit outputs, transposed stores (swap-AB) and grouped problems keep the register path.
  GemmProblem f32out = tn;
  f32out.d_type = DType::F32;
  f32out.c_type = DType::F32;
  BOOST_CHECK_EQUAL(cuda::sm90_store_chunks(cfg(128, 256, 4, 2, 1), f32out), 0);
  KernelConfig swapped = cfg(128, 64, 8, 1, 1);
  swapped.swap_ab = true;
  BOOST_CHECK_EQUAL(cuda::sm90_store_chunks(swapped, tn), 0);
  GemmProblem grouped = tn;
  grouped.grouping.layout = GroupLayout::Contiguous;
  BOOST_CHECK_EQUAL(cuda::sm90_store_chunks(cfg(128, 256, 4, 1, 1), grouped), 0);
  // ... unless the kernel is a `_ts` one (KernelConfig::tma_store) and every tile lies inside its
  // group: contiguous groups aligned to BLOCK_M; not masked, not a stream-K twin.
  KernelConfig ts = cfg(128, 256, 4, 1, 1);
  ts.tma_store = true;
  BOOST_CHECK_EQUAL(cuda::sm90_store_chunks(ts, grouped), 0);  // m_alignment 1
  grouped.grouping.m_alignment = 128;
  BOOST_CHECK_EQUAL(cuda::sm90_store_chunks(ts, grouped), 2);
  KernelConfig ts64 = cfg(64, 128, 7, 1, 1);
  ts64.tma_store = true;
  BOOST_CHECK_GT(cuda::sm90_store_chunks(ts64, grouped), 0);
  grouped.grouping.m_alignment = 64;
  BOOST_CHECK_EQUAL(cuda::sm90_store_chunks(ts, grouped), 0);   // a 128-row tile could cross a group's end
  BOOST_CHECK_GT(cuda::sm90_store_chunks(ts64, grouped), 0);
  KernelConfig ts_sk = ts64;
  ts_sk.stream_k = true;
  BOOST_CHECK_EQUAL(cuda::sm90_store_chunks(ts_sk, grouped), 0);
  GemmProblem masked = tn;
  masked.grouping.layout = GroupLayout::Masked;
  BOOST_CHECK_EQUAL(cuda::sm90_store_chunks(ts, masked), 0);
}

// 8-bit operands: fp8 (every type pair) and s8, unscaled, per-tensor / per-row-column scales in
// the epilogue, and block scales promoted per 128 of K (DeepGEMM's 1 x 128 A with 128 x 128 B, and
// VEC128 on both), in the square menu and as skinny swap-AB tiles, with an exact i32 output.
BOOST_AUTO_TEST_CASE(sm90_8bit_and_block_scaled_variants_compile) {
  const HardwareDesc hw = apply_arch_file(HardwareDesc{}, "h200");
  std::vector<Job> jobs;
  auto fp8 = [](int64_t m, int64_t n, int64_t k, DType a, DType b, DType d) {
    GemmProblem p = problem(DType::BF16, Op::N, Op::T, Order::RowMajor, m, n, k);
    p.a_type = a;
    p.b_type = b;
    p.c_type = p.d_type = d;
    p.compute_type = a == DType::I8 ? DType::I32 : DType::F32;
    return p;
  };
  auto deepseek = [](GemmProblem p) {
    p.a_scale.mode = ScaleMode::Vec128;  // 1 x 128 per token, MN-major (DeepGEMM's layout)
    p.a_scale.layout = ScaleLayout::MnMajor;
    p.a_scale.ld = (p.m + 3) / 4 * 4;
    p.b_scale.mode = ScaleMode::Blk128x128;  // 128 x 128 per weight block, K-major
    p.b_scale.layout = ScaleLayout::KMajor;
    p.b_scale.ld = (p.k + 127) / 128;
    return p;
  };
  int added = 0;
  auto add_best = [&](const GemmProblem& p, const Epilogue& e, int count) {
    int n = 0;
    std::vector<Candidate> ranked = sm90_family_model().enumerate(p, e, hw);
    std::stable_sort(ranked.begin(), ranked.end(), [](const Candidate& a, const Candidate& b) {
      return a.feasible != b.feasible ? a.feasible : a.predicted_us < b.predicted_us;
    });
    for (const Candidate& c : ranked) {
      if (!c.feasible) continue;
      jobs.push_back({p, e, c.config});
      ++added;
      if (++n == count) break;
    }
    BOOST_CHECK_MESSAGE(n == count, p.to_string() << ": " << n << " feasible sm90 candidates");
  };
  const Epilogue plain;
  add_best(fp8(4096, 4096, 4096, DType::F8E4M3, DType::F8E4M3, DType::BF16), plain, 2);
  add_best(fp8(512, 512, 1024, DType::F8E5M2, DType::F8E4M3, DType::F32), plain, 1);
  add_best(fp8(512, 512, 1024, DType::F8E4M3, DType::F8E5M2, DType::F16), plain, 1);
  add_best(fp8(512, 512, 1024, DType::F8E5M2, DType::F8E5M2, DType::BF16), plain, 1);
  {
    GemmProblem p = fp8(1000, 2000, 1024, DType::F8E4M3, DType::F8E4M3, DType::BF16);
    p.a_scale.mode = ScaleMode::OuterVec;
    p.a_scale.ld = 1;
    p.b_scale.mode = ScaleMode::PerTensor;
    p.b_scale.ld = 1;
    add_best(p, plain, 1);
  }
  add_best(deepseek(fp8(4096, 7168, 2048, DType::F8E4M3, DType::F8E4M3, DType::BF16)), plain, 3);
  add_best(deepseek(fp8(64, 7168, 2048, DType::F8E4M3, DType::F8E4M3, DType::BF16)), plain, 3);  // swap-AB
  {
    GemmProblem p = deepseek(fp8(300, 1000, 2048, DType::F8E4M3, DType::F8E4M3, DType::F32));
    p.b_scale = p.a_scale;
    p.b_scale.ld = (p.n + 3) / 4 * 4;
    add_best(p, plain, 1);
  }
  // s8: exact i32, a requantized i8 output with scale and zero point, bf16 with row x column scales.
  add_best(fp8(4096, 4096, 4096, DType::I8, DType::I8, DType::I32), plain, 1);
  add_best(fp8(16, 4096, 4096, DType::I8, DType::I8, DType::I32), plain, 1);
  {
    GemmProblem p = fp8(700, 500, 1024, DType::I8, DType::I8, DType::I8);
    Epilogue e;
    e.scale_mode = VectorMode::PerRow;
    e.zero_point = true;
    add_best(p, e, 1);
    GemmProblem q = fp8(700, 500, 1024, DType::I8, DType::I8, DType::BF16);
    q.a_scale.mode = ScaleMode::OuterVec;
    q.a_scale.ld = 1;
    q.b_scale.mode = ScaleMode::OuterVec;
    q.b_scale.ld = 1;
    Epilogue b;
    b.bias_mode = VectorMode::PerColumn;
    b.bias_type = DType::BF16;
    add_best(q, b, 1);
  }
  // UE8M0 input scales: DeepGEMM's 1 x 128 A (ld a multiple of 16) with 128 x 128 B, pipelined
  // (128x128) and two-set (128x192) promotion.
  {
    GemmProblem p = deepseek(fp8(4096, 7168, 2048, DType::F8E4M3, DType::F8E4M3, DType::BF16));
    p.a_scale.type = p.b_scale.type = ScaleType::UE8M0;
    p.a_scale.ld = 4096;
    add_best(p, plain, 1);
    p.n = 2112;
    add_best(p, plain, 1);
  }
  // A block-scaled FP8 D (1 x 128 per row, f32 and UE8M0 scales), from fp8 and from bf16
  // operands, with a per-column bias and GELU before the quantization.
  for (ScaleType t : {ScaleType::F32, ScaleType::UE8M0}) {
    Epilogue q;
    q.d_scale.mode = ScaleMode::Vec128;
    q.d_scale.type = t;
    q.d_scale.ld = 4096;
    q.bias_mode = VectorMode::PerColumn;
    q.bias_type = DType::BF16;
    q.activation = Activation::GeluTanh;
    add_best(fp8(4096, 4096, 4096, DType::F8E4M3, DType::F8E4M3, DType::F8E4M3), q, 1);
    add_best(fp8(4096, 4096, 4096, DType::BF16, DType::BF16, DType::F8E4M3), q, 1);
  }
  // The 64-row one-CTA tiles offered for a block-scaled D at small M (measuring only), with
  // DeepSeek's block-scaled inputs: promoted (three accumulator sets) and quantized in one tile.
  {
    Epilogue q;
    q.d_scale.mode = ScaleMode::Vec128;
    q.d_scale.ld = 64;
    const GemmProblem p = deepseek(fp8(64, 7168, 16384, DType::F8E4M3, DType::F8E4M3, DType::F8E4M3));
    int n64 = 0;
    for (const Candidate& c : sm90_family_model().enumerate(p, q, hw))
      if (c.feasible && c.config.block_m == 64 && c.config.block_n == 128 && c.config.blocks_per_sm == 1 &&
          !c.config.swap_ab) {
        jobs.push_back({p, q, c.config});
        ++n64;
      }
    BOOST_TEST(n64 == 5);  // s7 with K over two and four, s8 alone and in clusters of two, the s7's stream-K twin
  }
  // The block-scaled D of a swapped view (epilogue_block_scaled_t) at M = 1 and 16: every 128-row
  // swap tile the planner offers (whole K, K split, stream-K), with a column bias and GELU.
  {
    Epilogue q;
    q.d_scale.mode = ScaleMode::Vec128;
    q.bias_mode = VectorMode::PerColumn;
    q.bias_type = DType::BF16;
    q.activation = Activation::GeluTanh;
    int swapped = 0;
    for (int64_t m : {1, 16}) {
      q.d_scale.ld = m;
      const GemmProblem p = deepseek(fp8(m, 4096, 7168, DType::F8E4M3, DType::F8E4M3, DType::F8E4M3));
      for (const Candidate& c : sm90_family_model().enumerate(p, q, hw))
        if (c.feasible && c.config.swap_ab && c.config.blocks_per_sm == 1) {
          jobs.push_back({p, q, c.config});
          ++swapped;
        }
    }
    BOOST_TEST(swapped >= 8);
  }
  // The skinny swap-AB tiles' stream-K twins at small M (measuring only): block-scaled inputs
  // (promoted, one and two CTAs per SM) and i8 with exact i32 sums.
  {
    int sk = 0;
    for (const GemmProblem& p : {deepseek(fp8(64, 7168, 16384, DType::F8E4M3, DType::F8E4M3, DType::BF16)),
                                 fp8(64, 7168, 16384, DType::I8, DType::I8, DType::I32)})
      for (const Candidate& c : sm90_family_model().enumerate(p, plain, hw))
        if (c.feasible && c.config.stream_k && c.config.swap_ab) {
          jobs.push_back({p, plain, c.config});
          ++sk;
        }
    BOOST_TEST(sk == 6);
  }
  BOOST_TEST(added == 23);
  compile_all(jobs);
}

// Grouped problems (contiguous and masked, with bias + GELU and per-group scales): the planner's
// best non-clustered tiles compile with wgmma, TMA and no spills.
BOOST_AUTO_TEST_CASE(sm90_grouped_variants_compile) {
  const HardwareDesc hw = apply_arch_file(HardwareDesc{}, "h200");
  std::vector<Job> jobs;
  auto grouped = [](GroupLayout layout, int64_t groups, int64_t m, int64_t n, int64_t k) {
    GemmProblem p = problem(DType::BF16, Op::N, Op::T, Order::RowMajor, m, n, k);
    p.batch_count = groups;
    p.stride_b = n * k;
    p.grouping.layout = layout;
    if (layout == GroupLayout::Masked) {
      p.stride_a = m * k;
      p.stride_d = m * n;
    } else {
      p.grouping.m_alignment = 128;
    }
    p.resolve_and_validate();
    return p;
  };
  Epilogue fused;
  fused.bias_mode = VectorMode::PerColumn;
  fused.bias_type = DType::BF16;
  fused.activation = Activation::GeluTanh;
  fused.scale_mode = VectorMode::PerTensor;
  for (const GemmProblem& p : {grouped(GroupLayout::Contiguous, 32, 8192, 4096, 7168),
                               grouped(GroupLayout::Masked, 8, 256, 4096, 7168)}) {
    for (const Epilogue& e : {Epilogue{}, fused}) {
      std::vector<Candidate> ranked = sm90_family_model().enumerate(p, e, hw);
      std::stable_sort(ranked.begin(), ranked.end(), [](const Candidate& a, const Candidate& b) {
        return a.feasible != b.feasible ? a.feasible : a.predicted_us < b.predicted_us;
      });
      BOOST_REQUIRE_MESSAGE(!ranked.empty() && ranked[0].feasible, p.to_string());
      BOOST_TEST((ranked[0].config.cluster_m <= 1 && ranked[0].config.cluster_k <= 1 && !ranked[0].config.swap_ab));
      jobs.push_back({p, e, ranked[0].config});
      // The TMA-stored twins (`_ts`, measuring only) of the contiguous problem: staging and the
      // register fallback in one kernel, no spills.
      if (p.grouping.contiguous())
        for (const Candidate& c : ranked)
          if (c.feasible && c.config.tma_store && (c.config.block_n == 256 || c.config.block_n == 128)) jobs.push_back({p, e, c.config});
    }
  }
  compile_all(jobs);
}

// A packed plan's module holds the GEMM and the pack kernel; both compile without spills.
BOOST_AUTO_TEST_CASE(sm90_packed_variant_compiles_with_the_pack_kernel) {
  GemmProblem odd = problem(DType::BF16, Op::N, Op::T, Order::RowMajor, 4095, 4097, 4093);
  std::vector<Candidate> menu = sm90_family_model().enumerate(odd, Epilogue{}, apply_arch_file(HardwareDesc{}, "h200"));
  BOOST_REQUIRE(!menu.empty() && menu[0].feasible && menu[0].config.pack_a);
  jit::CompileRequest r = cuda::sm90_compile_request(odd, Epilogue{}, menu[0].config, jit::arch_for_cc(9, 0));
  BOOST_CHECK(r.source.find("DGEMM_DEFINE_PACK_KERNEL") != std::string::npos);
  auto code = jit::compile(r);
  BOOST_CHECK_MESSAGE(code->log.find(cuda::kSm90PackKernel) != std::string::npos, code->log);
  BOOST_CHECK_EQUAL(dgemm_test::check_spill_lines(r.name, code->log), 2);
  // nn with an unaligned N: the transposed copy's twin (pack_b_t) reads B K-major.
  GemmProblem nn = problem(DType::BF16, Op::N, Op::N, Order::RowMajor, 2048, 2049, 2048);
  menu = sm90_family_model().enumerate(nn, Epilogue{}, apply_arch_file(HardwareDesc{}, "h200"));
  const auto twin = std::find_if(menu.begin(), menu.end(), [](const Candidate& c) { return c.feasible && c.config.pack_b_t; });
  BOOST_REQUIRE(twin != menu.end());
  jit::CompileRequest rt = cuda::sm90_compile_request(nn, Epilogue{}, twin->config, jit::arch_for_cc(9, 0));
  BOOST_CHECK_MESSAGE(rt.source.find("B K-major") != std::string::npos, rt.source.substr(0, 300));
  auto code_t = jit::compile(rt);
  BOOST_CHECK_EQUAL(dgemm_test::check_spill_lines(rt.name, code_t->log), 2);
}

// The wgmma atoms are generated from one definition: the committed header is what the generator
// writes today.
BOOST_AUTO_TEST_CASE(sm90_wgmma_atoms_match_their_generator) {
  const char* root = std::getenv("DEEPGEMM_TEST_SOURCE_DIR");
  BOOST_REQUIRE_MESSAGE(root, "DEEPGEMM_TEST_SOURCE_DIR is not set (run through CTest)");
  const std::string dir = std::string(root) + "/src/kernels/sm90/";
  const std::string generated = dgemm_test::run_tool("python3 " + dir + "gen_wgmma_atoms.py");
  std::ifstream in(dir + "wgmma_atoms.cuh", std::ios::binary);
  std::stringstream committed;
  committed << in.rdbuf();
  BOOST_REQUIRE_MESSAGE(!generated.empty(), "python3 " << dir << "gen_wgmma_atoms.py printed nothing");
  BOOST_CHECK_MESSAGE(generated == committed.str(),
                      "src/kernels/sm90/wgmma_atoms.cuh differs from its generator's output: regenerate it");
}

#else
#include "common/skip.hpp"
DGEMM_SKIP_WITHOUT_CUDA()
#endif
