// GPU tests of the sm90 family (TMA + wgmma) through the public API with the family forced
// (label gpu; exit 77 = skipped without a GPU; the cases are skipped on non-Hopper devices).
// Every case: fresh random inputs, D poisoned with guard bands around it, compared with the CPU
// oracle (dgemm::cpu_gemm, f64) by relative Frobenius error with per-type thresholds, and every
// byte outside D's m x n elements checked untouched. Big shapes are compared with cuBLAS instead
// (the CPU oracle would take minutes). Covers the edge sizes of DESIGN.md in M, N and K, all four
// transposes in both orders, f16/bf16 in and f32/f16/bf16 out, fused epilogues, batches, padded
// leading dimensions, unaligned pointers (which run the sm80 fallback the plan prepared), and
// leading dimensions / batch strides that break TMA's 16-byte rule (operands packed into the workspace),
// K split inside a cluster, and the skinny swap-AB tiles of decode-sized M (every M of issue 10's
// list, odd N and K, per-row and per-column bias under swap, batches, both orders); every skinny
// and K-split configuration of the menu is also run by name. DGEMM_TEST_PREFILL=h200 without a GPU
// compiles the sweep's and the benchmark rows' kernels into $DEEPGEMM_CACHE_DIR instead.
// Every failure prints a one-line repro and the `deepgemm run` line that reruns its problem.
#include <boost/test/unit_test.hpp>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "backend/cuda/launcher.hpp"
#include "common/gpu_harness.hpp"
#include "common/shapes.hpp"
#include "plan/arch_file.hpp"
#include "plan/families.hpp"
#include "plan/planner.hpp"

namespace {

using namespace dgemm;
// Named imports, not the whole harness: this file has its own make_case (TMA-friendly leading
// dimensions).
using dgemm_test::Case;
using dgemm_test::DevBuf;
using dgemm_test::kGuard;
using dgemm_test::kPoison;
using dgemm_test::PrefillSet;
using dgemm_test::repro_command;
using dgemm_test::repro_without_scalars;
using dgemm_test::SweepPlans;
using dgemm_test::context;
using dgemm_test::create_plans;
using dgemm_test::fill_random;
using dgemm_test::span;
using dgemm_test::threshold;

void prefill_cache(const char* arch_name);

struct SkipWithoutGpu {
  SkipWithoutGpu() {
    // DGEMM_TEST_PREFILL=<built-in arch, e.g. h200> without a GPU compiles the kernels this test's
    // sweep and the benchmark's rows will most likely use into $DEEPGEMM_CACHE_DIR.
    dgemm_test::skip_without_gpu(prefill_cache);
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess || prop.major != 9) {
      std::printf("not a Hopper GPU (cc %d.%d): the sm90 family has nothing to run, skipped\n", prop.major, prop.minor);
      std::exit(77);
    }
  }
};
BOOST_TEST_GLOBAL_FIXTURE(SkipWithoutGpu);


// The case's forced configuration (tag "config:<name>") or the family.
std::string forced(const Case& c) {
  const std::string prefix = "config:";
  return c.tag.rfind(prefix, 0) == 0 ? c.tag.substr(prefix.size()) : std::string("sm90");
}
dgemm_status_t make_plan(const Case& c, dgemm_plan_t* plan) {
  return dgemm_test::make_plan_forced(c.p, c.e, forced(c).c_str(), plan);
}

std::string run_case(const Case& cs, dgemm_plan_t plan, std::mt19937& rng) {
  const GemmProblem& p = cs.p;
  const Epilogue& e = cs.e;
  const std::size_t a_el = span(p, p.a_rows(), p.a_cols(), p.lda, p.stride_a);
  const std::size_t b_el = span(p, p.b_rows(), p.b_cols(), p.ldb, p.stride_b);
  const std::size_t c_el = e.reads_c() ? span(p, p.m, p.n, p.ldc, p.stride_c) : 0;
  const std::size_t d_el = span(p, p.m, p.n, p.ldd, p.stride_d);
  std::vector<unsigned char> a, b, c, bias, d_init(d_el * dtype_size(p.d_type) + 2 * kGuard, kPoison);
  fill_random(rng, p.a_type, a, a_el, -1, 1);
  fill_random(rng, p.b_type, b, b_el, -1, 1);
  fill_random(rng, p.c_type, c, c_el, -2, 2);
  fill_random(rng, e.bias_type, bias, std::size_t(std::max(p.m, p.n)), -1, 1);
  if (cs.c_is_d) {
    // C aliases D: D starts as C (the oracle reads its own copy); bytes outside the elements
    // stay poisoned.
    if (!e.reads_c() || p.c_type != p.d_type || p.ldc != p.ldd || p.stride_c != p.stride_d) return "bad c_is_d case";
    const std::size_t es = dtype_size(p.d_type);
    for (int64_t bt = 0; bt < p.batch_count; ++bt)
      for (int64_t i = 0; i < p.m; ++i)
        for (int64_t j = 0; j < p.n; ++j) {
          const std::size_t at = std::size_t(bt * p.stride_d + p.offset(i, j, p.ldd)) * es;
          std::memcpy(&d_init[kGuard + at], &c[at], es);
        }
  }
  const std::size_t off_a = cs.misalign * dtype_size(p.a_type), off_b = cs.misalign * dtype_size(p.b_type);
  DevBuf da(a.size() + off_a + 16), db(b.size() + off_b + 16), dc(c.size() + 16), dd(d_init.size()), dbias(bias.size());
  cudaMemcpy(da.at(off_a), a.data(), a.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(db.at(off_b), b.data(), b.size(), cudaMemcpyHostToDevice);
  if (!c.empty()) cudaMemcpy(dc.base, c.data(), c.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(dbias.base, bias.data(), bias.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(dd.base, d_init.data(), d_init.size(), cudaMemcpyHostToDevice);
  dgemm_args_t x;
  dgemm_args_init(&x);
  if (e.bias_mode != VectorMode::None) x.bias = dbias.base;
  // Packed plans need a workspace; give it an odd (8-byte) offset so the launcher aligns it itself.
  std::size_t ws_size = 0;
  if (dgemm_plan_workspace_size(plan, &ws_size) != DGEMM_STATUS_SUCCESS) return "workspace_size failed";
  DevBuf dws(ws_size ? ws_size + 8 : 0);
  void* ws = ws_size ? static_cast<void*>(dws.at(8)) : nullptr;
  const void* c_arg = cs.c_is_d ? dd.at(kGuard) : e.reads_c() ? dc.base : nullptr;
  dgemm_status_t st = dgemm_execute(plan, da.at(off_a), db.at(off_b), c_arg, dd.at(kGuard),
                                    &x, ws, ws_size, nullptr);
  if (st != DGEMM_STATUS_SUCCESS) return std::string("execute: ") + dgemm_last_error();
  if (cudaDeviceSynchronize() != cudaSuccess) return "kernel failed: " + std::string(cudaGetErrorString(cudaGetLastError()));
  std::vector<unsigned char> got(d_init.size());
  cudaMemcpy(got.data(), dd.base, got.size(), cudaMemcpyDeviceToHost);

  // The reference: the CPU oracle, or cuBLAS for shapes the oracle is too slow for.
  std::vector<unsigned char> want = d_init;
  if (!cs.vs_cublas) {
    ExecArgs ox;
    ox.a = a.data();
    ox.b = b.data();
    ox.c = c.empty() ? nullptr : c.data();
    ox.d = want.data() + kGuard;
    ox.alpha = e.alpha;
    ox.beta = e.beta;
    ox.bias = bias.data();
    cpu_gemm(p, e, ox);
  } else {
    static cublasHandle_t h = [] { cublasHandle_t t = nullptr; cublasCreate(&t); return t; }();
    auto ct = [](DType t) { return t == DType::F16 ? CUDA_R_16F : t == DType::BF16 ? CUDA_R_16BF : CUDA_R_32F; };
    auto op = [](Op o) { return o == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T; };
    DevBuf dr(want.size());
    cudaMemcpy(dr.base, want.data(), want.size(), cudaMemcpyHostToDevice);
    const float one = 1.0f, zero = 0.0f;
    cublasStatus_t cs2 = p.order == Order::ColMajor
        ? cublasGemmEx(h, op(p.op_a), op(p.op_b), int(p.m), int(p.n), int(p.k), &one, da.at(off_a), ct(p.a_type), int(p.lda),
                       db.at(off_b), ct(p.b_type), int(p.ldb), &zero, dr.at(kGuard), ct(p.d_type), int(p.ldd),
                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)
        : cublasGemmEx(h, op(p.op_b), op(p.op_a), int(p.n), int(p.m), int(p.k), &one, db.at(off_b), ct(p.b_type), int(p.ldb),
                       da.at(off_a), ct(p.a_type), int(p.lda), &zero, dr.at(kGuard), ct(p.d_type), int(p.ldd),
                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (cs2 != CUBLAS_STATUS_SUCCESS) return "cuBLAS failed";
    cudaMemcpy(want.data(), dr.base, want.size(), cudaMemcpyDeviceToHost);
  }

  const std::size_t es = dtype_size(p.d_type);
  std::vector<char> is_elem(got.size(), 0);
  double num = 0, den = 0;
  int64_t nonfinite = 0;
  for (int64_t bt = 0; bt < p.batch_count; ++bt)
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) {
        const int64_t idx = bt * p.stride_d + p.offset(i, j, p.ldd);
        std::memset(&is_elem[kGuard + std::size_t(idx) * es], 1, es);
        const double g = load_as_double(p.d_type, got.data() + kGuard, idx);
        const double w = load_as_double(p.d_type, want.data() + kGuard, idx);
        if (!std::isfinite(g) || !std::isfinite(w)) {
          nonfinite += !(std::isnan(w) ? std::isnan(g) : g == w);
          continue;
        }
        num += (g - w) * (g - w);
        den += w * w;
      }
  std::ostringstream os;
  const double rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  // cuBLAS rounds its own way: allow both results their own rounding error.
  const double limit = cs.vs_cublas ? 2 * threshold(p.d_type) : threshold(p.d_type);
  if (rel > limit || nonfinite)
    os << "rel_frobenius=" << rel << " (max " << limit << ") vs " << (cs.vs_cublas ? "cuBLAS" : "oracle")
       << ", non-finite mismatches " << nonfinite << "; ";
  std::size_t touched = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!is_elem[i] && got[i] != kPoison) ++touched;
  if (touched) os << touched << " bytes outside D's elements were written; ";
  return os.str();
}

Case make_case(int64_t m, int64_t n, int64_t k, DType ab, DType d, Op op_a, Op op_b, Order order, const std::string& tag) {
  Case c = dgemm_test::make_case(m, n, k, ab, d, op_a, op_b, order, tag);
  c.p.resolve_and_validate();
  // TMA needs 16-byte rows: round A's and B's leading dimensions up to 8 elements.
  c.p.lda = (c.p.lda + 7) / 8 * 8;
  c.p.ldb = (c.p.ldb + 7) / 8 * 8;
  return c;
}

std::vector<Case> sweep() {
  std::vector<Case> cases;
  const Op ops[] = {Op::N, Op::T};
  const Order orders[] = {Order::RowMajor, Order::ColMajor};
  // Edge sizes in each of M, N, K (others odd, spanning more than one tile), every transpose/order.
  for (int dim = 0; dim < 3; ++dim)
    for (int64_t s : dgemm_test::kEdgeSizes)
      for (Op oa : ops)
        for (Op ob : ops)
          for (Order o : orders) {
            if (s == 4093 && dim != 2 && (oa != ob || o == Order::ColMajor)) continue;  // keep the oracle quick
            const int64_t m = dim == 0 ? s : 133, n = dim == 1 ? s : 259, k = dim == 2 ? s : 200;
            cases.push_back(make_case(m, n, k, DType::BF16, DType::BF16, oa, ob, o, "edge"));
          }
  // K around the pipeline depth (64-wide K blocks, 4-8 stages): odd and even block counts.
  for (int64_t k : {64, 128, 192, 256, 320, 448, 512, 576, 1024, 1088})
    cases.push_back(make_case(130, 300, k, DType::F16, DType::F32, Op::N, Op::T, Order::RowMajor, "kblocks"));
  // Types.
  for (DType ab : {DType::F16, DType::BF16})
    for (DType d : {DType::F32, DType::F16, DType::BF16})
      for (Op oa : ops)
        for (Op ob : ops) cases.push_back(make_case(263, 520, 264, ab, d, oa, ob, Order::RowMajor, "types"));
  // Padded leading dimensions (C and D too), and unaligned A/B pointers (sm80 fallback).
  for (Order o : orders)
    for (int mis : {0, 1}) {
      Case c = make_case(300, 200, 136, DType::BF16, DType::BF16, Op::T, Op::N, o, mis ? "unaligned" : "ldpad");
      c.p.lda += 8;
      c.p.ldb += 16;
      c.p.ldd += 5;
      c.misalign = mis;
      cases.push_back(c);
    }
  // Strided batches with gaps, and a broadcast B.
  for (Order o : orders)
    for (int bcast : {0, 1}) {
      Case c = make_case(200, 150, 72, DType::F16, DType::F16, Op::N, Op::T, o, "batch");
      GemmProblem& p = c.p;
      p.batch_count = 3;
      p.stride_a = int64_t(span(p, p.a_rows(), p.a_cols(), p.lda, 0) + 8) / 8 * 8 + 8;
      p.stride_b = bcast ? 0 : int64_t(span(p, p.b_rows(), p.b_cols(), p.ldb, 0) + 8) / 8 * 8 + 16;
      p.stride_d = int64_t(span(p, p.m, p.n, p.ldd, 0)) + 5;
      cases.push_back(c);
    }
  // Fused epilogues in both orders (per-row / per-column bias swap when transposed).
  struct Epi { DType d; float alpha, beta; VectorMode bias; Activation act; };
  const Epi epis[] = {
      {DType::F32, 1.5f, 0.5f, VectorMode::None, Activation::None},
      {DType::BF16, 1.0f, -1.0f, VectorMode::PerColumn, Activation::Relu},
      {DType::F32, 0.5f, 0.0f, VectorMode::PerRow, Activation::GeluTanh},
      {DType::F16, 1.0f, 2.0f, VectorMode::PerColumn, Activation::GeluErf},
      {DType::F32, 1.0f, 0.0f, VectorMode::PerRow, Activation::Silu},
  };
  for (const Epi& x : epis)
    for (Order o : orders) {
      Case c = make_case(260, 136, 264, DType::BF16, x.d, Op::N, Op::T, o, "epilogue");
      c.e.alpha = x.alpha;
      c.e.beta = x.beta;
      c.e.bias_mode = x.bias;
      c.e.bias_type = DType::F32;
      c.e.activation = x.act;
      cases.push_back(c);
    }
  // Leading dimensions / batch strides that break TMA's 16-byte rule: the plan packs those
  // operands into the workspace (K = 4093, odd ld's, odd batch strides, broadcast, unaligned
  // pointers on packed operands, column-major).
  for (Op oa : ops)
    for (Op ob : ops)
      for (Order o : orders) {
        Case c = make_case(300, 200, 4093, DType::BF16, DType::BF16, oa, ob, o, "packed");
        c.p.resolve_and_validate();  // tight (odd) leading dimensions
        cases.push_back(c);
      }
  for (Order o : orders)
    for (int mis : {0, 1}) {
      Case c = make_case(129, 65, 127, DType::F16, DType::F32, Op::T, Op::N, o, "packed-odd-ld");
      c.p.lda += 3;  // only A breaks the rule: B keeps its aligned ld (pointer misaligned: sm80)
      c.misalign = mis;
      cases.push_back(c);
    }
  {
    Case c = make_case(130, 70, 99, DType::BF16, DType::BF16, Op::N, Op::T, Order::RowMajor, "packed-misaligned");
    c.p.resolve_and_validate();  // lda = ldb = 99: both packed, so misaligned pointers stay on sm90
    c.misalign = 1;
    cases.push_back(c);
  }
  // Batched packed operands, B broadcast or not: rows shorter than a copy segment (61), and longer
  // (1030 elements: 1024 + 8; a pack that ran its segments across row ends passed here and was
  // slower: RESULTS.md 2026-12-06 session 13 call 6).
  struct PackedBatch {
    int64_t m, n, k, lda, pad_a;
    DType t;
    Op ob;
    const char* tag;
  };
  for (const PackedBatch& pb : {PackedBatch{150, 100, 61, 61, 3, DType::F16, Op::N, "packed-batch"},
                                PackedBatch{70, 90, 1030, 1031, 5, DType::BF16, Op::T, "packed-batch-long"}})
    for (int bcast : {0, 1}) {
      Case c = make_case(pb.m, pb.n, pb.k, pb.t, pb.t, Op::N, pb.ob, Order::RowMajor, pb.tag);
      GemmProblem& p = c.p;
      p.batch_count = 3;
      p.lda = pb.lda;
      p.stride_a = pb.m * pb.lda + pb.pad_a;
      p.stride_b = bcast ? 0 : int64_t(span(p, p.b_rows(), p.b_cols(), p.ldb, 0)) + 1;
      p.stride_d = int64_t(span(p, p.m, p.n, p.ldd, 0));
      cases.push_back(c);
    }
  {
    Case c = make_case(260, 136, 4093, DType::BF16, DType::BF16, Op::N, Op::T, Order::RowMajor, "packed-gelu");
    c.p.resolve_and_validate();
    c.e.bias_mode = VectorMode::PerColumn;
    c.e.bias_type = DType::BF16;
    c.e.activation = Activation::GeluTanh;
    cases.push_back(c);
  }
  for (Op ob : ops) {
    Case c = make_case(4095, 4097, 4093, DType::BF16, DType::BF16, Op::N, ob, Order::RowMajor, "big-packed");
    c.p.resolve_and_validate();
    c.vs_cublas = true;
    cases.push_back(c);
  }
  // K split inside a cluster: few tiles and a long K, with epilogues, both orders, batches, packing
  // (whatever the planner picks here; every K-split configuration also runs by name below).
  for (Order o : orders)
    for (Op ob : ops) {
      Case c = make_case(200, 150, 4096, DType::BF16, DType::BF16, Op::N, ob, o, "ksplit");
      cases.push_back(c);
    }
  {
    Case c = make_case(130, 260, 4096, DType::F16, DType::F32, Op::T, Op::N, Order::ColMajor, "ksplit-epilogue");
    c.e.alpha = 0.5f;
    c.e.beta = 1.5f;
    c.e.bias_mode = VectorMode::PerRow;
    c.e.bias_type = DType::F32;
    c.e.activation = Activation::GeluTanh;
    cases.push_back(c);
  }
  {
    Case c = make_case(150, 70, 4096, DType::F16, DType::F16, Op::N, Op::T, Order::RowMajor, "ksplit-batch");
    GemmProblem& p = c.p;
    p.batch_count = 3;
    p.stride_a = int64_t(span(p, p.a_rows(), p.a_cols(), p.lda, 0)) + 64;
    p.stride_b = int64_t(span(p, p.b_rows(), p.b_cols(), p.ldb, 0)) + 8;
    p.stride_d = int64_t(span(p, p.m, p.n, p.ldd, 0)) + 3;
    cases.push_back(c);
  }
  {
    Case c = make_case(200, 150, 4093, DType::BF16, DType::BF16, Op::N, Op::T, Order::RowMajor, "ksplit-packed");
    c.p.resolve_and_validate();
    cases.push_back(c);
  }
  // Decode-sized M (swap-AB skinny tiles): every M of the list, odd N and K, all transposes and
  // both orders, against the oracle.
  for (int64_t m : dgemm_test::kSkinnyMs)
    for (Op oa : ops)
      for (Op ob : ops)
        for (Order o : orders) {
          if ((oa != ob || o == Order::ColMajor) && m % 2 == 0 && m != 64) continue;  // keep the sweep quick
          cases.push_back(make_case(m, 1031, 1000, DType::BF16, DType::BF16, oa, ob, o, "skinny"));
        }
  // Epilogues under swap: per-row and per-column bias (they trade places), C, activations, output
  // types; a batch with a broadcast weight.
  for (const Epi& x : epis)
    for (Order o : orders)
      for (int64_t m : {1, 17, 100}) {
        Case c = make_case(m, 777, 520, DType::BF16, x.d, Op::N, Op::T, o, "skinny-epilogue");
        c.e.alpha = x.alpha;
        c.e.beta = x.beta;
        c.e.bias_mode = x.bias;
        c.e.bias_type = DType::F32;
        c.e.activation = x.act;
        cases.push_back(c);
      }
  for (int bcast : {0, 1}) {
    Case c = make_case(9, 600, 330, DType::F16, DType::F16, Op::N, Op::T, Order::RowMajor, "skinny-batch");
    GemmProblem& p = c.p;
    p.batch_count = 3;
    p.stride_a = int64_t(span(p, p.a_rows(), p.a_cols(), p.lda, 0)) + 8;
    p.stride_b = bcast ? 0 : int64_t(span(p, p.b_rows(), p.b_cols(), p.ldb, 0)) + 8;
    p.stride_d = int64_t(span(p, p.m, p.n, p.ldd, 0)) + 3;
    cases.push_back(c);
  }
  // A case per feasible configuration of the sm90 family (as planned for the H200) that `wanted`
  // accepts, forced by name.
  const HardwareDesc h200 = apply_arch_file(HardwareDesc{}, "h200");
  auto push_named = [&](const Case& base, auto&& wanted) {
    for (const Candidate& cand : sm90_family_model().enumerate(base.p, base.e, h200)) {
      if (!cand.feasible || !wanted(cand.config)) continue;
      Case c = base;
      c.tag = "config:" + cand.config.name();
      cases.push_back(c);
    }
  };
  // Every skinny, BLOCK_M 64 and K-split configuration the planner offers, by name.
  {
    for (auto [m, n, k] : {std::tuple{5, 1000, 777}, std::tuple{120, 700, 1500}, std::tuple{300, 200, 3000}})
      for (Order o : orders) {
        Case base = make_case(m, n, k, DType::BF16, DType::F32, Op::N, Op::T, o, "");
        base.e.bias_mode = VectorMode::PerColumn;
        base.e.bias_type = DType::BF16;
        push_named(base, [](const KernelConfig& c) { return c.swap_ab || c.cluster_k > 1 || c.block_m == 64; });
      }
    // Swap tiles exactly as wide as M rounded up to 8 (chosen for 32 < M <= 208): 64 and 128 rows,
    // M = 40, 65 (72 columns, 7 of them past M), 150 and 200, N not a multiple of the tile, tn and nn,
    // both orders, a column bias (a row bias of the kernel's transposed view) and GELU; with them
    // the pairs sharing the activations (M rounded up to 16), over an odd count of row tiles (N =
    // 700 in 64-row tiles, 1100 in 128-row ones: the last pair's second tile is empty).
    // (N = 1000, 704 and 1096 keep D's rows 16-byte aligned, so the tiles' last-tile TMA store of
    // D^T runs; 700 and 1100 do not, so the register epilogue does.)
    for (auto [m, n, k] : {std::tuple{40, 1000, 520}, std::tuple{65, 1000, 520}, std::tuple{150, 700, 1000},
                           std::tuple{150, 704, 1000}, std::tuple{200, 1100, 776}, std::tuple{200, 1096, 776}})
      for (Op ob : ops)
        for (Order o : orders) {
          Case base = make_case(m, n, k, DType::BF16, DType::BF16, Op::N, ob, o, "");
          base.e.bias_mode = VectorMode::PerColumn;
          base.e.bias_type = DType::F32;
          base.e.activation = Activation::GeluTanh;
          const int width = int((m + 7) / 8 * 8);
          // (and the pairs sharing the activations, M rounded up to 16: cluster_m = 2, measuring only)
          push_named(base, [&](const KernelConfig& c) {
            return c.swap_ab && c.cluster_k == 1 &&
                   (c.block_n == width || (c.cluster_m == 2 && c.block_n == (width + 15) / 16 * 16));
          });
        }
    // The 64-row swap tiles built for two CTAs per SM (chosen for 9-64 rows near a wave of them with
    // K <= 2048): 16, 32 and 64 columns (M = 9, 16, 32, 64); and those narrower than M (several
    // column tiles, offered where the tiles are few, chosen there at a short K), alone and in
    // clusters of two sharing the weights (cn2, K-major weights only, measuring only). N past a
    // multiple of 64, tn and nn, both orders, a row bias (the transposed view's column bias) and SiLU.
    for (int64_t m : {9, 16, 32, 64})
      for (Op ob : ops)
        for (Order o : orders) {
          Case base = make_case(m, 1031, 1000, DType::BF16, DType::BF16, Op::N, ob, o, "");
          base.e.bias_mode = VectorMode::PerRow;
          base.e.bias_type = DType::BF16;
          base.e.activation = Activation::Silu;
          push_named(base, [m](const KernelConfig& c) {
            return c.swap_ab && c.block_m == 64 && c.cluster_k == 1 && !c.stream_k &&
                   (c.blocks_per_sm == 2 || c.block_n < m);
          });
        }
    // The 64-row swap tiles as wide as M = 128, 192, 216 and 224 (a planner rule since 2026-12-06
    // session 13, at 0.3-0.5 wave of them): N = 4000 (63 tiles, the last one partial, D's rows
    // 16-byte aligned: the TMA-stored D^T), tn and nn, both orders, a column bias and GELU.
    for (int64_t m : {128, 192, 216, 224})
      for (Op ob : ops)
        for (Order o : orders) {
          Case base = make_case(m, 4000, 2056, DType::BF16, DType::BF16, Op::N, ob, o, "");
          base.e.bias_mode = VectorMode::PerColumn;
          base.e.bias_type = DType::F32;
          base.e.activation = Activation::GeluTanh;
          push_named(base, [m](const KernelConfig& c) {
            return c.swap_ab && c.block_m == 64 && c.block_n == m && c.blocks_per_sm == 1 && c.cluster_m <= 1 &&
                   c.cluster_k == 1 && !c.stream_k;
          });
        }
    // More swapped tiles than CTAs (N = 20008: 313 tiles of 64 rows, 157 of 128, the last ones
    // partial): each CTA's last tile stores D^T through the idle stage ring and TMA (kTransStage;
    // D's rows are 16-byte aligned, as TMA needs: ldd = 20008 row-major, 40 column-major), its
    // earlier ones from registers; tiles exactly as wide as M (40: boxes of 8 columns), 64
    // columns, and narrower than M (several column tiles), tn and nn, both orders, a column bias
    // and GELU.
    for (Op ob : ops)
      for (Order o : orders) {
        Case base = make_case(40, 20008, 264, DType::BF16, DType::BF16, Op::N, ob, o, "");
        base.e.bias_mode = VectorMode::PerColumn;
        base.e.bias_type = DType::BF16;
        base.e.activation = Activation::GeluTanh;
        push_named(base, [](const KernelConfig& c) {
          return c.swap_ab && c.cluster_m <= 1 && c.cluster_k == 1 && !c.stream_k &&
                 (c.block_n == 40 || c.block_n == 64 || c.block_n < 40);
        });
      }
    // A K-major A whose rows end inside the first tile: TMA loads a box of exactly its rows and
    // the rest of the stage keeps stale data (never a stored row): the 128-row one-CTA
    // tiles at M = 13, both orders, a column bias and GELU.
    for (Order o : orders) {
      Case base = make_case(13, 1000, 777, DType::BF16, DType::BF16, Op::N, Op::T, o, "");
      base.e.bias_mode = VectorMode::PerColumn;
      base.e.bias_type = DType::F32;
      base.e.activation = Activation::GeluTanh;
      push_named(base, [](const KernelConfig& c) {
        return !c.swap_ab && c.block_m == 128 && c.cluster_k == 1 && c.cluster_n == 1 && !c.stream_k &&
               c.blocks_per_sm == 1;
      });
    }
    // Columns cut to fill one wave (unswapped, one or two rows of tiles, K-major B): 112 columns at
    // M = 128 (N = 14337: 129 tiles, the last one column), 56 at M = 100, 216 at M = 200 (two rows
    // of tiles), 72 at M = 40 (64-row tiles), both orders (a column-major problem's view may offer
    // none), a column bias and GELU.
    for (auto [m, n] : {std::pair<int64_t, int64_t>{128, 14337}, {100, 7000}, {200, 14000}, {40, 9001}})
      for (Order o : orders) {
        Case base = make_case(m, n, 520, DType::BF16, DType::BF16, Op::N, Op::T, o, "");
        base.e.bias_mode = VectorMode::PerColumn;
        base.e.bias_type = DType::BF16;
        base.e.activation = Activation::GeluTanh;
        push_named(base, [](const KernelConfig& c) {
          return !c.swap_ab && c.block_n % 64 != 0 && c.cluster_k == 1 && !c.stream_k;
        });
      }
    // The register epilogue's 16-byte stores (a quad exchanging its pairs; whole tiles of a 16-bit
    // D with 16-byte aligned rows, BLOCK_N a multiple of 16): every unswapped configuration whose
    // BLOCK_N is not a multiple of 64 (no TMA-stored D), and those two CTAs share an SM with, at
    // M = 296 and N = 2880 (the last row of tiles partial: the pairs; whole or partial last columns
    // by width; ldd 16-byte aligned in both orders), both orders, C, a column bias and GELU; f16
    // with a row bias and ReLU.
    for (Order o : orders)
      for (DType dt : {DType::BF16, DType::F16}) {
        Case base = make_case(296, 2880, 520, dt, dt, Op::N, Op::T, o, "");
        base.e.bias_mode = dt == DType::BF16 ? VectorMode::PerColumn : VectorMode::PerRow;
        base.e.bias_type = DType::BF16;
        base.e.activation = dt == DType::BF16 ? Activation::GeluTanh : Activation::Relu;
        if (dt == DType::BF16) base.e.beta = 0.5f;
        push_named(base, [](const KernelConfig& c) {
          return !c.swap_ab && c.cluster_k == 1 && (c.block_n % 64 != 0 || c.blocks_per_sm == 2);
        });
      }
    // Transposed copies (pack_a_t / pack_b_t: an MN-major operand with rows TMA cannot read, packed
    // K-major): 300 x 1001 x 517 (no leading dimension a multiple of 8; partial 64 x 64 copy tiles
    // in both directions, the copy's rows padded from 517 to 520), every transpose and both
    // orders, C, a column bias and GELU; the twins of the one-CTA 128-column tiles, the stream-K
    // and the swapped ones; and a batch of 3 (nn, row-major) through them.
    for (Op oa : ops)
      for (Op ob : ops)
        for (Order o : orders)
          for (int batch : {1, 3}) {
            if (batch == 3 && !(oa == Op::N && ob == Op::N && o == Order::RowMajor)) continue;
            Case base = make_case(300, 1001, 517, DType::BF16, DType::BF16, oa, ob, o, "");
            base.p.lda = o == Order::RowMajor ? base.p.a_cols() : base.p.a_rows();
            base.p.ldb = o == Order::RowMajor ? base.p.b_cols() : base.p.b_rows();
            if (batch == 3) {
              base.p.batch_count = 3;
              base.p.stride_a = int64_t(span(base.p, base.p.a_rows(), base.p.a_cols(), base.p.lda, 0)) + 1;
              base.p.stride_b = int64_t(span(base.p, base.p.b_rows(), base.p.b_cols(), base.p.ldb, 0)) + 3;
              base.p.stride_c = base.p.stride_d = int64_t(span(base.p, base.p.m, base.p.n, base.p.ldd, 0));
            }
            base.e.beta = 0.75f;
            base.e.bias_mode = VectorMode::PerColumn;
            base.e.bias_type = DType::BF16;
            base.e.activation = Activation::GeluTanh;
            push_named(base, [](const KernelConfig& c) {
              return (c.pack_a_t || c.pack_b_t) && c.cluster_m == 1 && c.cluster_n == 1 && c.cluster_k == 1 &&
                     c.variant == 0 && c.blocks_per_sm == 1 && (c.block_n == 128 || c.stream_k || c.swap_ab);
            });
          }
    // The skinny tiles' stream-K twins above cut each of a few tiles into even pieces; here 100
    // swapped 64-row tiles (N = 6337, its last tile one row) over 132 CTAs take contiguous ranges
    // of K blocks that cross tiles (and at two CTAs per SM, even pieces of two), with a row bias
    // (the columns of the kernel's transposed view).
    for (Order o : orders) {
      Case base = make_case(3, 6337, 1000, DType::BF16, DType::BF16, Op::N, Op::T, o, "");
      base.e.bias_mode = VectorMode::PerRow;
      base.e.bias_type = DType::F32;
      base.e.activation = Activation::Relu;
      push_named(base, [](const KernelConfig& c) { return c.stream_k && c.swap_ab; });
    }
  }
  // Configurations run by name on three problems and a batch: the first problem in every transpose
  // and both orders with C, a column bias and GELU; the second (both orders) with an f32 output, C,
  // a row bias and GELU; the third (both orders) plain; the batch f16 with padded strides.
  auto by_name = [&](std::initializer_list<std::tuple<int64_t, int64_t, int64_t>> shapes,
                     std::tuple<int64_t, int64_t, int64_t> batch, auto&& wanted) {
    int index = 0;
    for (auto [m, n, k] : shapes) {
      const int role = index++;
      for (Op oa : ops)
        for (Op ob : ops)
          for (Order o : orders) {
            if ((oa != Op::N || ob != Op::T) && role != 0) continue;  // all transposes on one shape
            Case base = make_case(m, n, k, DType::BF16, role == 1 ? DType::F32 : DType::BF16, oa, ob, o, "");
            if (role != 2) {
              base.e.alpha = 0.75f;
              base.e.beta = 0.5f;
              base.e.bias_mode = role == 0 ? VectorMode::PerColumn : VectorMode::PerRow;
              base.e.bias_type = DType::F32;
              base.e.activation = Activation::GeluTanh;
            }
            push_named(base, wanted);
          }
    }
    auto [bm, bn, bk] = batch;
    Case b = make_case(bm, bn, bk, DType::F16, DType::F16, Op::N, Op::T, Order::RowMajor, "");
    GemmProblem& p = b.p;
    p.batch_count = 3;
    p.stride_a = int64_t(span(p, p.a_rows(), p.a_cols(), p.lda, 0)) + 64;
    p.stride_b = int64_t(span(p, p.b_rows(), p.b_cols(), p.ldb, 0)) + 8;
    p.stride_d = (int64_t(span(p, p.m, p.n, p.ldd, 0)) + 7) / 8 * 8 + 8;
    push_named(b, wanted);
  };
  // Clusters sharing A (cluster_n = 2): N-block counts odd and even (a pair's second tile wholly
  // past N computes and stores nothing), M, N and K tails, the register and staged epilogues
  // (sm90_sweep_vs_oracle checks that these cases exist).
  by_name({{300, 150, 1000}, {129, 100, 520}, {520, 1000, 777}}, {200, 330, 300},
          [](const KernelConfig& c) { return c.cluster_n > 1; });
  // Ping-pong consumer warpgroups (variant 1): CTAs with one tile (only warpgroup 0 works) and with
  // two or three (both, in turn; 1100 x 2000 x 1100: 18 K blocks, more than a ring of stages, where
  // a warpgroup skipping the other's tile once ran ahead of the barriers' phases and hung).
  by_name({{300, 150, 1000}, {1100, 2000, 1100}, {2100, 1500, 200}}, {700, 1030, 300},
          [](const KernelConfig& c) { return c.variant == 1; });
  // Stream-K (`_streamk`): fewer tiles than SMs (300 x 150: six tiles of 128x128, each cut into
  // four even pieces), a partial last wave (1100 x 2000: 144 tiles, the 12 past a wave in four
  // pieces of 18 K blocks; 2100 x 1500: 204 tiles, 72 shared in contiguous ranges of 3 of their 4
  // K blocks, crossing tile boundaries), and a batch (162 tiles over 3 batches, 30 shared); every
  // epilogue of by_name.
  by_name({{300, 150, 1000}, {1100, 2000, 1100}, {2100, 1500, 200}}, {700, 1030, 300},
          [](const KernelConfig& c) { return c.stream_k; });
  // The 64x128 one-warpgroup tiles at one CTA per SM (one m64n128 wgmma per K slice), alone, in
  // clusters sharing B or A, and with K split over two: every transpose, the staged epilogue.
  by_name({{300, 150, 1000}, {1100, 2000, 1100}, {2100, 1500, 200}}, {700, 1030, 300}, [](const KernelConfig& c) {
    return c.block_m == 64 && c.block_n == 128 && c.blocks_per_sm == 1 && !c.swap_ab;
  });
  // Big shapes against cuBLAS: every tile of the menu gets used somewhere here.
  for (auto [m, n, k] : {std::tuple{4096, 4096, 4096}, std::tuple{1024, 1024, 4096}, std::tuple{4095, 4097, 4088},
                         std::tuple{4096, 2112, 7168}})
    for (Op oa : ops) {
      Case c = make_case(m, n, k, DType::BF16, DType::BF16, oa, Op::T, Order::RowMajor, "big");
      c.vs_cublas = true;
      cases.push_back(c);
    }
  // The staged epilogue (shared memory + TMA stores; 16-bit D with 16-byte rows): batches whose
  // D stride keeps the rule (the store's batch coordinate), C read beside it and C aliasing D,
  // row and column bias, tails in both directions clipped by TMA, both orders and op(B); at one
  // tile a CTA and (the `big` sizes: 1.45-1.75 waves of the planner's tile on the H100 and the
  // H200) with several, the staging buffer then reused across a CTA's tiles.
  for (bool big : {false, true})
  for (Order o : orders)
    for (Op ob : ops) {
      Case c = big ? make_case(1100, 1000, 300, DType::BF16, DType::BF16, Op::N, ob, o, "staged-batch-big")
                   : make_case(200, 264, 300, DType::BF16, DType::BF16, Op::N, ob, o, "staged-batch");
      GemmProblem& p = c.p;
      p.batch_count = big ? 4 : 3;
      p.ldc = p.ldd;
      p.stride_a = int64_t(span(p, p.a_rows(), p.a_cols(), p.lda, 0)) + 64;
      p.stride_b = int64_t(span(p, p.b_rows(), p.b_cols(), p.ldb, 0)) + 8;
      p.stride_d = (int64_t(span(p, p.m, p.n, p.ldd, 0)) + 7) / 8 * 8 + 8;
      p.stride_c = p.stride_d + 16;
      c.e.alpha = 0.75f;
      c.e.beta = 0.5f;
      c.e.bias_mode = VectorMode::PerRow;
      c.e.bias_type = DType::F32;
      c.e.activation = Activation::GeluTanh;
      cases.push_back(c);
      Case a = big ? make_case(1300, 1336, 500, DType::F16, DType::F16, Op::N, ob, o, "staged-c-is-d-big")
                   : make_case(300, 136, 500, DType::F16, DType::F16, Op::N, ob, o, "staged-c-is-d");
      GemmProblem& q = a.p;
      q.batch_count = big ? 3 : 2;
      q.ldc = q.ldd;
      q.stride_a = int64_t(span(q, q.a_rows(), q.a_cols(), q.lda, 0));
      q.stride_b = int64_t(span(q, q.b_rows(), q.b_cols(), q.ldb, 0));
      q.stride_d = q.stride_c = (int64_t(span(q, q.m, q.n, q.ldd, 0)) + 7) / 8 * 8;
      a.e.alpha = 0.5f;
      a.e.beta = 1.5f;
      a.e.bias_mode = VectorMode::PerColumn;
      a.e.bias_type = DType::F16;
      a.e.activation = Activation::Relu;
      a.c_is_d = true;
      cases.push_back(a);
    }
  // One tile a CTA (128 of 128x64 in pairs) and several (2900 x 1800: 1.74 waves of 128x192).
  for (auto [m, n, k] : {std::tuple{1000, 1000, 1000}, std::tuple{2900, 1800, 408}}) {
    Case c = make_case(m, n, k, DType::F16, DType::F16, Op::N, Op::T, Order::RowMajor, "staged-tails");
    c.e.bias_mode = VectorMode::PerColumn;
    c.e.bias_type = DType::F32;
    c.e.activation = Activation::GeluTanh;
    cases.push_back(c);
  }
  return cases;
}

}  // namespace

BOOST_AUTO_TEST_CASE(sm90_sweep_vs_oracle) {
  BOOST_REQUIRE(context() != nullptr);
  std::mt19937 rng(90);
  int failed = 0;
  std::vector<Case> cases = sweep();
  // The clusters sharing A run by name (sweep(): three configurations on 3 x 8 + 1 problems).
  const auto shares_a = std::count_if(cases.begin(), cases.end(),
                                      [](const Case& c) { return c.tag.find("_cn2_") != std::string::npos; });
  BOOST_CHECK_GE(shares_a, 30);
  // The ping-pong warpgroups run by name (two configurations on 8 + 2 + 2 + 1 problems).
  const auto ping_pong = std::count_if(cases.begin(), cases.end(),
                                       [](const Case& c) { return c.tag.find("sm90_") != std::string::npos &&
                                                                  c.tag.find("_p_v1") != std::string::npos; });
  BOOST_CHECK_GE(ping_pong, 20);
  const auto stream_k = std::count_if(cases.begin(), cases.end(),
                                      [](const Case& c) { return c.tag.find("_streamk") != std::string::npos; });
  BOOST_CHECK_GE(stream_k, 40);
  // Plans first, from all cores at once (the distinct kernels compile in parallel or come from
  // the carried cache); the cases then run one by one.
  const SweepPlans made = create_plans(cases, make_plan);
  const std::vector<dgemm_plan_t>& plans = made.plans;
  const std::vector<std::string>& errors = made.errors;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& cs = cases[i];
    dgemm_plan_t plan = plans[i];
    BOOST_CHECK_MESSAGE(plan != nullptr,
                        repro_without_scalars(cs) << ": create_plan: " << errors[i] << repro_command(cs, forced(cs)));
    if (!plan) { ++failed; continue; }
    const std::string why = run_case(cs, plan, rng);
    BOOST_CHECK_MESSAGE(why.empty(), repro_without_scalars(cs) << ": " << why << repro_command(cs, forced(cs)));
    failed += !why.empty();
    dgemm_destroy_plan(plan);
  }
  BOOST_TEST_MESSAGE(cases.size() << " sm90 cases, " << failed << " failed");
}

BOOST_AUTO_TEST_CASE(sm90_packs_tma_unfriendly_leading_dimensions) {
  BOOST_REQUIRE(context() != nullptr);
  // K = 4093 bf16 with row-major A (op N): lda = 4093 elements is not a multiple of 16 bytes, so
  // the plan packs A and B (rows padded to 4096) and asks for a workspace; too small a one is refused.
  Case c = make_case(64, 64, 4093, DType::BF16, DType::BF16, Op::N, Op::T, Order::RowMajor, "odd-ld");
  c.p.lda = c.p.ldb = 4093;
  dgemm_plan_t plan = nullptr;
  BOOST_REQUIRE_MESSAGE(make_plan(c, &plan) == DGEMM_STATUS_SUCCESS, dgemm_last_error());
  std::size_t ws = 0;
  BOOST_CHECK(dgemm_plan_workspace_size(plan, &ws) == DGEMM_STATUS_SUCCESS);
  BOOST_CHECK_GE(ws, std::size_t(2 * 64 * 4096 * 2));
  DevBuf a(64 * 4093 * 2), b(64 * 4093 * 2), d(64 * 64 * 2), w(ws);
  dgemm_args_t x;
  dgemm_args_init(&x);
  BOOST_CHECK(dgemm_execute(plan, a.base, b.base, nullptr, d.base, &x, w.base, ws - 1, nullptr) ==
              DGEMM_STATUS_INSUFFICIENT_WORKSPACE);
  dgemm_destroy_plan(plan);
}

// Execute ordered on a user stream after other work, captured into a CUDA graph and replayed, and
// from two threads on one plan (the launch builds its tensor maps on each caller's stack).
BOOST_AUTO_TEST_CASE(sm90_stream_graph_and_threads) {
  BOOST_REQUIRE(context() != nullptr);
  Case cs = make_case(1000, 700, 520, DType::BF16, DType::F32, Op::N, Op::T, Order::RowMajor, "graph");
  cs.e.beta = 0.5f;
  cs.e.bias_mode = VectorMode::PerColumn;
  cs.e.bias_type = DType::F32;
  cs.e.activation = Activation::GeluErf;
  dgemm_plan_t plan = nullptr;
  BOOST_REQUIRE_MESSAGE(make_plan(cs, &plan) == DGEMM_STATUS_SUCCESS, dgemm_last_error());
  const GemmProblem& p = cs.p;
  std::mt19937 rng(7);
  std::vector<unsigned char> a, b, c, bias;
  fill_random(rng, p.a_type, a, span(p, p.a_rows(), p.a_cols(), p.lda, 0), -1, 1);
  fill_random(rng, p.b_type, b, span(p, p.b_rows(), p.b_cols(), p.ldb, 0), -1, 1);
  fill_random(rng, p.c_type, c, span(p, p.m, p.n, p.ldc, 0), -2, 2);
  fill_random(rng, DType::F32, bias, std::size_t(p.n), -1, 1);
  const std::size_t d_bytes = span(p, p.m, p.n, p.ldd, 0) * dtype_size(p.d_type);
  DevBuf da(a.size()), db(b.size()), dc(c.size()), dbias(bias.size()), dd1(d_bytes), dd2(d_bytes), dd3(d_bytes);
  cudaMemcpy(da.base, a.data(), a.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(db.base, b.data(), b.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(dbias.base, bias.data(), bias.size(), cudaMemcpyHostToDevice);
  dgemm_args_t x;
  dgemm_args_init(&x);
  x.bias = dbias.base;
  // The oracle.
  std::vector<unsigned char> want(d_bytes, kPoison);
  ExecArgs ox;
  ox.a = a.data();
  ox.b = b.data();
  ox.c = c.data();
  ox.d = want.data();
  ox.alpha = cs.e.alpha;
  ox.beta = cs.e.beta;
  ox.bias = bias.data();
  cpu_gemm(p, cs.e, ox);
  auto check = [&](const DevBuf& d, const char* what) {
    std::vector<unsigned char> got(d_bytes);
    cudaMemcpy(got.data(), d.base, d_bytes, cudaMemcpyDeviceToHost);
    double num = 0, den = 0;
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) {
        const int64_t idx = p.offset(i, j, p.ldd);
        const double g = load_as_double(p.d_type, got.data(), idx), w = load_as_double(p.d_type, want.data(), idx);
        num += (g - w) * (g - w);
        den += w * w;
      }
    const double rel = std::sqrt(num / den);
    BOOST_CHECK_MESSAGE(rel < threshold(p.d_type), what << ": rel_frobenius " << rel << " " << repro_without_scalars(cs)
                                                         << repro_command(cs, forced(cs)));
  };
  cudaStream_t s;
  BOOST_REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  // 1. Stream order: C arrives by an async copy on the same stream just before the GEMM.
  cudaMemsetAsync(dd1.base, 0xCD, d_bytes, s);
  cudaMemcpyAsync(dc.base, c.data(), c.size(), cudaMemcpyHostToDevice, s);
  BOOST_CHECK(dgemm_execute(plan, da.base, db.base, dc.base, dd1.base, &x, nullptr, 0, s) == DGEMM_STATUS_SUCCESS);
  BOOST_REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  check(dd1, "user stream");
  // 2. Graph capture and two replays.
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaMemset(dd2.base, 0xCD, d_bytes);
  BOOST_REQUIRE(cudaDeviceSynchronize() == cudaSuccess);  // s does not wait for the legacy stream
  BOOST_REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
  BOOST_CHECK(dgemm_execute(plan, da.base, db.base, dc.base, dd2.base, &x, nullptr, 0, s) == DGEMM_STATUS_SUCCESS);
  BOOST_REQUIRE(cudaStreamEndCapture(s, &graph) == cudaSuccess);
  BOOST_REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  for (int r = 0; r < 2; ++r) BOOST_CHECK(cudaGraphLaunch(exec, s) == cudaSuccess);
  BOOST_REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  check(dd2, "graph replay");
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  // 3. Two threads on one plan, each with its own stream and output.
  cudaMemset(dd2.base, 0xCD, d_bytes);
  cudaMemset(dd3.base, 0xCD, d_bytes);
  BOOST_REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (DevBuf* d : {&dd2, &dd3})
    threads.emplace_back([&, d] {
      cudaStream_t ts;
      cudaSetDevice(0);
      cudaStreamCreateWithFlags(&ts, cudaStreamNonBlocking);
      for (int r = 0; r < 20; ++r)
        if (dgemm_execute(plan, da.base, db.base, dc.base, d->base, &x, nullptr, 0, ts) != DGEMM_STATUS_SUCCESS) return;
      if (cudaStreamSynchronize(ts) == cudaSuccess) ++ok;
      cudaStreamDestroy(ts);
    });
  for (auto& t : threads) t.join();
  BOOST_CHECK_EQUAL(ok.load(), 2);
  check(dd2, "thread 1");
  check(dd3, "thread 2");
  cudaStreamDestroy(s);
  dgemm_destroy_plan(plan);
}

namespace {

void prefill_cache(const char* arch_name) {
  const HardwareDesc hw = apply_arch_file(HardwareDesc{}, arch_name);
  const std::string arch = jit::arch_for_cc(hw.cc_major, hw.cc_minor);
  PrefillSet all;  // each kernel once, in first-come order
  for (const Case& c : sweep()) all.add_plan(c.p, c.e, hw, arch, forced(c));
  // deepgemm-bench rows (row-major, A op N, B op T (tn) or N (nn), tight leading dimensions, a
  // per-column bias of D's type + GELU for bias_gelu rows).
  const int64_t shapes[][3] = {{4096, 4096, 4096}, {8192, 8192, 8192}, {1024, 1024, 4096}, {1000, 1000, 1000},
                               {4095, 4097, 4093}, {4096, 4096, 4093}, {2048, 2048, 2041}, {4096, 8192, 8192},
                               {4096, 28672, 8192}, {4096, 8192, 28672}, {4096, 7168, 2048}, {4096, 2112, 7168},
                               {4096, 4096, 7168}, {2048, 2048, 2048}, {1024, 1024, 1024}};
  for (DType t : {DType::BF16, DType::F16})
    for (Op ob : {Op::T, Op::N})
      for (int gelu : {0, 1})
        for (const auto& s : shapes) {
          Case c = make_case(s[0], s[1], s[2], t, t, Op::N, ob, Order::RowMajor, "bench");
          c.p.resolve_and_validate();
          if (gelu) {
            c.e.bias_mode = VectorMode::PerColumn;
            c.e.bias_type = t;
            c.e.activation = Activation::GeluTanh;
          }
          all.add_plan(c.p, c.e, hw, arch, "");
        }
  all.compile(arch_name, arch, 2);
}

}  // namespace
