// deepgemm-bench --grouped: mixture-of-experts GEMMs (G experts sharing N x K, uneven tokens per
// expert) in the contiguous and masked layouts of deepgemm.h, timed against what a user has
// otherwise, on the same device buffers, interleaved (the method of bench/README.md):
//   ours         one grouped plan (DGEMM_EXT_GROUPED), the row array in device memory;
//   ours_many    dgemm_create_plan_many: one of our single-GEMM plans per expert, in one call;
//   cublas_loop  a loop of cublasGemmEx, one per expert (what most MoE code did before grouped GEMMs);
//   cublas_grp   cublasGemmGroupedBatchedEx, cuBLAS's own grouped GEMM.
// FP8 rows (--dtype fp8t, fp8b: e4m3 A and B with input scales, bf16 D) have ours and
//   cublaslt_loop a loop of cuBLASLt FP8 GEMMs with per-tensor scales, one per expert (cuBLAS has
//                no FP8 GemmEx, grouped GEMM or, on Hopper, block scales).
// Every contender computes exactly the valid rows' results and is checked once against cuBLAS's
// f32 product per expert (of the dequantized operands for FP8) before timing. A contender that
// cannot run the problem (our grouped plan before a GPU family runs it, cuBLAS's calls without
// FP8) is reported "not supported" with the reason, and the rest of the row is still measured.
// TFLOP/s counts the valid rows only (2 x rows x N x K). --dry-run checks the setup without a GPU.
#include <cuda_runtime.h>
#include <deepgemm/deepgemm.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench_cublas.hpp"
#include "bench_cuda.hpp"
#include "bench_device.hpp"
#include "bench_grouped.hpp"
#include "bench_util.hpp"

namespace bench {
namespace {

const double kNaN = std::nan("");

struct GroupedOptions {
  std::vector<std::string> layouts{"contiguous", "masked"};
  std::vector<int64_t> groups{8, 32};
  std::vector<int64_t> tokens{64, 256, 1024};  // mean tokens per expert
  std::vector<std::pair<int64_t, int64_t>> nk{{4096, 7168}, {7168, 2048}};
  int64_t align = 128;   // contiguous: each expert's rows padded to a multiple of this
  double skew = 0.6;     // sigma of the log-normal expert load
  int reps = 20;
  double target_us = 2000;
  bool use_graph = true;
  bool verify_only = false;
  double time_limit_s = 0;
  uint64_t seed = 0;
  int device = 0;
  std::string json_file, summary_file;
  std::string force_kernel;  // ours: a family or configuration name (measuring the planner's choice)
  std::vector<std::string> dtypes{"bf16"};
  bool ue8m0 = false;        // fp8b's block scales in UE8M0 (else f32)
  bool dry_run = false;
  bool hint = true;          // masked plans get expected_m = the mean tokens per expert
};

const char* kGroupedUsage =
    "usage: deepgemm-bench --grouped [options]\n"
    "  --layout LIST     contiguous, masked (default both)\n"
    "  --groups LIST     experts per GEMM (default 8,32)\n"
    "  --tokens LIST     mean tokens per expert (default 64,256,1024); the load is uneven (--skew)\n"
    "  --nk LIST         NxK of each expert's weight (default 4096x7168,7168x2048: DeepSeek-V3)\n"
    "  --align A         contiguous layout: each expert's rows padded to a multiple of A (default 128)\n"
    "  --skew S          sigma of the log-normal load per expert (default 0.6; 0 = even)\n"
    "  --dtype LIST      bf16 (default); fp8t: e4m3 A and B, an f32 scale per group of A and per expert\n"
    "                    of B, bf16 D; fp8b: e4m3, 1x128 A scales over the rows, 128x128 B scales per\n"
    "                    expert, bf16 D (cuBLAS's side runs fp8t's per-tensor GEMMs there)\n"
    "  --scale-type T    fp8b's block scales: f32 (default) or ue8m0\n"
    "  --force-kernel C  our grouped plan uses configuration C (e.g. sm90_64x128x64_s4_t256_b2_p)\n"
    "  --no-hint         masked plans without grouped->expected_m (default: the mean tokens per\n"
    "                    expert, as a serving stack would give it; contiguous plans never take one:\n"
    "                    their m is the padded total)\n"
    "  --reps R, --quick, --no-graph, --verify-only, --json FILE, --summary FILE, --seed S,\n"
    "  --time-limit S, --device I   as in the single-GEMM mode\n"
    "  --dry-run         no GPU needed: plan every row on the CPU backend and check its scale tensor\n"
    "                    sizes, then run a small version of each layout and dtype there against this\n"
    "                    benchmark's reference (the one GPU rows are checked with)\n"
    "exit status: 0 all right (a 'not supported' contender is reported, not a failure), 1 a failure\n"
    "or a result mismatch, 2 bad usage, 77 no GPU (not with --dry-run)\n";

[[noreturn]] void grouped_usage_error(const std::string& msg) {
  std::fprintf(stderr, "deepgemm-bench --grouped: %s\n%s", msg.c_str(), kGroupedUsage);
  std::exit(2);
}

int64_t positive(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || v <= 0) grouped_usage_error(flag + " needs positive integers, got '" + text + "'");
  return v;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

GroupedOptions parse_grouped(int argc, char** argv) {
  GroupedOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) grouped_usage_error(a + " needs a value");
      return argv[++i];
    };
    auto sizes = [&]() {
      std::vector<int64_t> v;
      for (const std::string& s : split(value())) v.push_back(positive(a, s));
      if (v.empty()) grouped_usage_error(a + " needs a list");
      return v;
    };
    if (a == "--grouped") {
    } else if (a == "--help" || a == "-h") {
      std::fputs(kGroupedUsage, stdout);
      std::exit(0);
    } else if (a == "--layout") {
      o.layouts = split(value());
      for (const std::string& l : o.layouts)
        if (l != "contiguous" && l != "masked") grouped_usage_error("--layout: contiguous or masked, got '" + l + "'");
    } else if (a == "--groups") {
      o.groups = sizes();
    } else if (a == "--tokens") {
      o.tokens = sizes();
    } else if (a == "--nk") {
      o.nk.clear();
      for (const std::string& s : split(value())) {
        const size_t x = s.find('x');
        if (x == std::string::npos) grouped_usage_error("--nk takes NxK pairs, got '" + s + "'");
        o.nk.emplace_back(positive("--nk", s.substr(0, x)), positive("--nk", s.substr(x + 1)));
      }
    } else if (a == "--align") {
      o.align = positive(a, value());
    } else if (a == "--skew") {
      o.skew = std::atof(value().c_str());
      if (!(o.skew >= 0)) grouped_usage_error("--skew needs a number >= 0");
    } else if (a == "--reps") {
      o.reps = int(positive(a, value()));
    } else if (a == "--quick") {
      o.reps = 5;
      o.target_us = 1000;
    } else if (a == "--no-graph") {
      o.use_graph = false;
    } else if (a == "--verify-only") {
      o.verify_only = true;
    } else if (a == "--json") {
      o.json_file = value();
    } else if (a == "--summary") {
      o.summary_file = value();
    } else if (a == "--force-kernel") {
      o.force_kernel = value();
    } else if (a == "--dtype") {
      o.dtypes = split(value());
      if (o.dtypes.empty()) grouped_usage_error("--dtype needs a list");
      for (const std::string& d : o.dtypes)
        if (d != "bf16" && d != "fp8t" && d != "fp8b")
          grouped_usage_error("--dtype: bf16, fp8t or fp8b in the grouped mode, got '" + d + "'");
    } else if (a == "--scale-type") {
      const std::string t = value();
      if (t != "f32" && t != "ue8m0") grouped_usage_error("--scale-type: f32 or ue8m0, got '" + t + "'");
      o.ue8m0 = t == "ue8m0";
    } else if (a == "--dry-run") {
      o.dry_run = true;
    } else if (a == "--no-hint") {
      o.hint = false;
    } else if (a == "--seed") {
      o.seed = uint64_t(positive(a, value()));
    } else if (a == "--time-limit") {
      o.time_limit_s = double(positive(a, value()));
    } else if (a == "--device") {
      const std::string v = value();
      o.device = v == "0" ? 0 : int(positive(a, v));
    } else {
      grouped_usage_error("unknown option '" + a + "'");
    }
  }
  return o;
}

// The FP8 rows by their --dtype names (None: bf16).
Quant quant_of(const std::string& dtype) {
  if (dtype == "fp8t") return Quant::Fp8Tensor;
  if (dtype == "fp8b") return Quant::Fp8Block;
  return Quant::None;
}

int64_t round_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }
int64_t k_blocks(int64_t k) { return (k + 127) / 128; }

// One problem of the sweep and what it needs on the device.
struct Problem {
  std::string layout, dtype = "bf16";
  int64_t n = 0, k = 0, groups = 0, tokens = 0;
  int64_t align = 1;             // contiguous: the m_alignment the offsets promise
  int64_t expected_m = 0;        // masked: the plan's hint (grouped->expected_m), 0 = none
  std::vector<int32_t> counts;   // valid rows per expert
  std::vector<int32_t> rows;     // what the plan reads: G + 1 offsets or G counts
  std::vector<int64_t> first;    // row of D where expert g's valid rows start (within its slot for masked)
  int64_t m = 0;                 // rows of A / D (contiguous) or of each slot (masked)
  int64_t valid_rows = 0;
  bool masked() const { return layout == "masked"; }
  Quant quant() const { return quant_of(dtype); }
  ElemType in_type() const { return quant() == Quant::None ? ElemType::BF16 : ElemType::E4M3; }
  size_t in_size() const { return elem_size(in_type()); }  // A and B; D is bf16 in every row
  // Element offset of expert g's first valid row in A (k columns) or D (n columns).
  int64_t a_offset(int64_t g) const { return ((masked() ? g * m : 0) + first[g]) * k; }
  int64_t d_offset(int64_t g) const { return ((masked() ? g * m : 0) + first[g]) * n; }
  int64_t d_elems() const { return (masked() ? groups * m : m) * n; }
  int64_t a_elems() const { return (masked() ? groups * m : m) * k; }
};

// Uneven load: expert g gets a share proportional to exp(skew * z_g), z_g standard normal.
Problem make_problem(const GroupedOptions& o, const std::string& layout, int64_t n, int64_t k, int64_t groups,
                     int64_t tokens, uint64_t seed) {
  Problem p;
  p.layout = layout;
  p.n = n;
  p.k = k;
  p.groups = groups;
  p.tokens = tokens;
  p.align = layout == "masked" ? 1 : o.align;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  std::vector<double> w(groups);
  double sum = 0;
  for (double& x : w) sum += (x = std::exp(o.skew * z(rng)));
  for (int64_t g = 0; g < groups; ++g) {
    p.counts.push_back(int32_t(std::llround(double(groups * tokens) * w[g] / sum)));
    p.valid_rows += p.counts.back();
  }
  if (p.masked()) {
    // A fixed slot per expert, as a decode step under a CUDA graph has: room for the busiest one.
    p.m = round_up(std::max<int64_t>(1, *std::max_element(p.counts.begin(), p.counts.end())), 128);
    p.rows = p.counts;
    p.first.assign(groups, 0);
    if (o.hint) p.expected_m = std::min<int64_t>(tokens, p.m);
  } else {
    // DeepSeek's contiguous layout: each expert's rows padded to the alignment, which the offsets
    // then promise; the padding rows are computed (they are part of the group) but not counted.
    p.rows.push_back(0);
    for (int64_t g = 0; g < groups; ++g) {
      p.first.push_back(p.rows.back());
      p.rows.push_back(int32_t(p.rows.back() + round_up(p.counts[g], o.align)));
    }
    p.m = std::max<int64_t>(p.rows.back(), o.align);
  }
  return p;
}

// An FP8 row's input scales as the grouped plan takes them (deepgemm.h, "grouped problems": each
// group's tensor at g * stride; a contiguous problem's A scales indexed by the shared row):
//   fp8t: one f32 per group for A and one per expert for B (PER_TENSOR, stride 1);
//   fp8b: A 1 x 128 (VEC128, MN-major, ld = m rounded up to 16 bytes, DeepGEMM's TMA-aligned
//         layout): contiguous, one tensor over the shared rows (stride 0); masked, one per slot.
//         B 128 x 128 (BLK128x128, K-major) per expert. F32 or UE8M0.
// Every FP8 row also has fp8t's G + G per-tensor scales: the cuBLASLt loop's scale pointers (in
// fp8b rows cuBLAS runs the per-tensor GEMM of the shape, with no block scales on Hopper).
struct ScaleLayout {
  Quant quant = Quant::None;
  bool ue8m0 = false;
  int64_t kb = 0;                             // K blocks of 128
  int64_t a_ld = 0, a_stride = 0, a_elems = 0;  // fp8b: A's VEC128 tensors
  int64_t b_stride = 0, b_elems = 0;            // fp8b: B's BLK128x128 tensors (ld kb)
  size_t scale_size() const { return ue8m0 ? 1 : 4; }
};

ScaleLayout scale_layout(const Problem& pr, bool ue8m0) {
  ScaleLayout s;
  s.quant = pr.quant();
  if (s.quant != Quant::Fp8Block) return s;
  s.ue8m0 = ue8m0;
  s.kb = k_blocks(pr.k);
  s.a_ld = round_up(pr.m, ue8m0 ? 16 : 4);
  s.a_stride = pr.masked() ? s.a_ld * s.kb : 0;
  s.a_elems = (pr.masked() ? pr.groups : 1) * s.a_ld * s.kb;
  s.b_stride = k_blocks(pr.n) * s.kb;
  s.b_elems = pr.groups * s.b_stride;
  return s;
}

void describe_scaling(const ScaleLayout& s, dgemm_scaling_t* out) {
  dgemm_scaling_init(out);
  if (s.quant == Quant::Fp8Tensor) {
    out->a_scale.mode = out->b_scale.mode = DGEMM_SCALE_PER_TENSOR;
    out->a_scale.stride = out->b_scale.stride = 1;
  } else if (s.quant == Quant::Fp8Block) {
    const dgemm_scale_type_t type = s.ue8m0 ? DGEMM_SCALE_TYPE_UE8M0 : DGEMM_SCALE_TYPE_F32;
    out->a_scale.mode = DGEMM_SCALE_VEC128;
    out->a_scale.type = type;
    out->a_scale.layout = DGEMM_SCALE_MN_MAJOR;
    out->a_scale.ld = s.a_ld;
    out->a_scale.stride = s.a_stride;
    out->b_scale.mode = DGEMM_SCALE_BLK128x128;
    out->b_scale.type = type;
    out->b_scale.layout = DGEMM_SCALE_K_MAJOR;
    out->b_scale.ld = s.kb;
    out->b_scale.stride = s.b_stride;
  }
}

// How the reference reads group g's scales of A (its valid rows) or B (the expert's): dequantize()'s
// arguments, scale(r / group_rows, c / group_cols) at offset + r' + c' * ld (mn_major) or
// offset + r' * ld + c'. The device reference and --dry-run's host check both go through it, so a
// wrong offset or ld shows up on the CPU backend before it costs GPU time.
struct ScaleView {
  int64_t offset = 0, group_rows = 1, group_cols = 1, ld = 0;
  bool mn_major = false;
};

ScaleView scale_view(const Problem& pr, const ScaleLayout& s, int64_t g, bool of_a) {
  if (s.quant == Quant::Fp8Tensor) return {g, std::max<int64_t>(1, of_a ? pr.counts[g] : pr.n), pr.k, 0, false};
  if (of_a) return {(pr.masked() ? g * s.a_stride : 0) + pr.first[g], 1, 128, s.a_ld, true};
  return {g * s.b_stride, 128, 128, s.kb, false};
}

// Scale values: the bytes the plan reads (f32, or UE8M0 exponents) and their f32 values, which
// the reference reads. F32 in [0.5, 2) as the single-GEMM mode's; UE8M0 2^-2 ... 2^2.
struct ScaleValues {
  std::vector<uint8_t> bytes;
  std::vector<float> values;
};

ScaleValues random_scales(int64_t count, bool ue8m0, uint64_t seed) {
  ScaleValues v;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> f32(0.5f, 2.0f);
  std::uniform_int_distribution<int> exponent(125, 129);
  v.values.resize(size_t(count));
  v.bytes.resize(size_t(count) * (ue8m0 ? 1 : 4));
  for (int64_t i = 0; i < count; ++i) {
    if (ue8m0) {
      const int e = exponent(rng);
      v.bytes[size_t(i)] = uint8_t(e);
      v.values[size_t(i)] = std::ldexp(1.0f, e - 127);
    } else {
      v.values[size_t(i)] = f32(rng);
    }
  }
  if (!ue8m0) std::memcpy(v.bytes.data(), v.values.data(), v.bytes.size());
  return v;
}

// One FP8 row's scales: per tensor (fp8t's, and the cuBLASLt loop's in every FP8 row) and, for
// fp8b, the block tensors.
struct RowScales {
  ScaleValues a_tensor, b_tensor, a_block, b_block;
};

RowScales make_scales(const Problem& pr, const ScaleLayout& s, uint64_t seed) {
  RowScales r;
  if (s.quant == Quant::None) return r;
  r.a_tensor = random_scales(pr.groups, false, seed);
  r.b_tensor = random_scales(pr.groups, false, seed + 1);
  if (s.quant == Quant::Fp8Block) {
    r.a_block = random_scales(s.a_elems, s.ue8m0, seed + 2);
    r.b_block = random_scales(s.b_elems, s.ue8m0, seed + 3);
  }
  return r;
}

// The scales the plan reads, and the f32 values behind them (the reference's).
const ScaleValues& plan_a_scales(const ScaleLayout& s, const RowScales& r) {
  return s.quant == Quant::Fp8Block ? r.a_block : r.a_tensor;
}
const ScaleValues& plan_b_scales(const ScaleLayout& s, const RowScales& r) {
  return s.quant == Quant::Fp8Block ? r.b_block : r.b_tensor;
}

struct GroupedRow {
  Problem prob;
  double flops = 0;
  double ours_us = kNaN, many_us = kNaN, loop_us = kNaN, cublas_grp_us = kNaN;
  double lt_loop_us = kNaN;       // cublaslt_loop (FP8 rows)
  double err_max = kNaN;          // the largest relative error of ours over the experts
  unsigned long long nonfinite = 0;
  bool mismatch = false;
  std::string kernel, many_kernels;
  std::string ours_status;        // "" = measured; else why ours did not run ("not supported: ...")
  std::vector<std::pair<std::string, std::string>> not_supported;  // other contenders: name, why
  std::string error, notes;
  int launches = 0;
  std::string timing;
  int min_count = 0, max_count = 0;

  // The row's loop of vendor GEMMs: cublasGemmEx (bf16), cuBLASLt FP8 (fp8t, fp8b).
  double loop() const { return prob.quant() == Quant::None ? loop_us : lt_loop_us; }
};

struct GroupedBench {
  GroupedOptions opt;
  dgemm_context_t ctx = nullptr;
  std::unique_ptr<Cublas> cublas;
  cudaStream_t stream = nullptr;
  cudaEvent_t ev_start = nullptr, ev_stop = nullptr;
  cudaDeviceProp prop{};
  uint64_t seed = 1;
  std::vector<GroupedRow> rows;
  size_t not_run = 0;
};

std::string describe_kernel(dgemm_plan_t plan, const char* path) {
  size_t required = 0;
  dgemm_plan_describe(plan, nullptr, 0, &required);
  std::vector<char> text(required + 1, '\0');
  dgemm_plan_describe(plan, text.data(), text.size(), &required);
  Json j;
  std::string err;
  if (!parse_json(text.data(), &j, &err)) return "?";
  const Json* v = j.path(path);
  return v ? v->string : "?";
}

dgemm_problem_t bf16_problem(int64_t m, int64_t n, int64_t k) {
  dgemm_problem_t p;
  dgemm_problem_init(&p);
  p.m = m;
  p.n = n;
  p.k = k;
  p.op_b = DGEMM_OP_T;  // weights stored N x K, as nn.Linear and DeepSeek's experts
  return p;
}

// A grouped plan (null + the reason when the context cannot run the problem), with the input
// scales of `scales` for FP8 rows.
dgemm_plan_t grouped_plan(dgemm_context_t ctx, const Problem& pr, const ScaleLayout& scales, const std::string& force,
                          std::string* why) {
  dgemm_problem_t p = bf16_problem(pr.m, pr.n, pr.k);
  if (pr.quant() != Quant::None) p.a_type = p.b_type = DGEMM_DTYPE_F8_E4M3;  // C, D bf16, f32 compute
  p.batch_count = pr.groups;
  p.stride_b = pr.n * pr.k;
  if (pr.masked()) {
    p.stride_a = pr.m * pr.k;
    p.stride_d = pr.m * pr.n;
  }
  dgemm_grouped_t g;
  dgemm_grouped_init(&g);
  g.layout = pr.masked() ? DGEMM_GROUP_MASKED : DGEMM_GROUP_CONTIGUOUS;
  g.m_alignment = pr.align;
  g.expected_m = pr.expected_m;
  dgemm_scaling_t scaling;
  describe_scaling(scales, &scaling);
  if (pr.quant() != Quant::None) g.header.next = &scaling;
  dgemm_plan_options_t o;
  dgemm_plan_options_init(&o);
  if (!force.empty()) o.force_kernel = force.c_str();
  dgemm_plan_t plan = nullptr;
  const dgemm_status_t st = dgemm_create_plan_ext(ctx, &p, nullptr, &o, &g, &plan);
  if (st != DGEMM_STATUS_SUCCESS) {
    *why = std::string(st == DGEMM_STATUS_NOT_SUPPORTED ? "not supported: " : "plan failed: ") + dgemm_last_error();
    return nullptr;
  }
  return plan;
}

DeviceBuffer to_device(const void* host, size_t bytes, cudaStream_t stream) {
  DeviceBuffer d(bytes);
  check_cuda(cudaMemcpyAsync(d.ptr, host, bytes, cudaMemcpyHostToDevice, stream), "scales");
  return d;
}

// Relative Frobenius error allowed for every contender's bf16 D, FP8 rows included: their
// reference is the product of the dequantized operands, so what is left is the rounding of D
// and the order of the sums (the single-GEMM mode's tolerance for a bf16 D).
constexpr double kTolerance = 1e-2;

// Floats between two experts' per-tensor scales in the cuBLASLt loop's buffers (256 bytes).
constexpr size_t kLtScaleSlot = 64;

void run_grouped_row(GroupedBench& B, const Problem& pr) {
  GroupedRow row;
  row.prob = pr;
  row.flops = 2.0 * double(pr.valid_rows) * double(pr.n) * double(pr.k);
  row.min_count = *std::min_element(pr.counts.begin(), pr.counts.end());
  row.max_count = *std::max_element(pr.counts.begin(), pr.counts.end());
  const bool fp8 = pr.quant() != Quant::None;
  const ElemType t = pr.in_type();
  const size_t es = pr.in_size(), ds = 2;  // A and B; D (bf16)

  // FP8 values in [-2, 2) (e4m3 rounding), as the single-GEMM mode's; bf16 in [-1, 1).
  const float range = fp8 ? 2.0f : 1.0f;
  DeviceBuffer a(size_t(pr.a_elems()) * es), b(size_t(pr.groups * pr.n * pr.k) * es);
  DeviceBuffer ref(size_t(pr.d_elems()) * sizeof(float));
  check_int(fill_random(a.ptr, size_t(pr.a_elems()), t, B.seed++, range, B.stream), "fill A");
  check_int(fill_random(b.ptr, size_t(pr.groups * pr.n * pr.k), t, B.seed++, range, B.stream), "fill B");
  DeviceBuffer rows_dev(pr.rows.size() * sizeof(int32_t)), status_dev(sizeof(uint32_t));
  check_cuda(cudaMemcpyAsync(rows_dev.ptr, pr.rows.data(), pr.rows.size() * sizeof(int32_t), cudaMemcpyHostToDevice,
                             B.stream), "row array");
  // FP8 rows: the scales the plan reads, their f32 values (the reference's), and the per-tensor
  // ones of the cuBLASLt loop.
  const ScaleLayout layout = scale_layout(pr, B.opt.ue8m0);
  RowScales scales;
  DeviceBuffer a_scale, b_scale, a_scale_f32, b_scale_f32, a_tensor, b_tensor;
  if (fp8) {
    scales = make_scales(pr, layout, B.seed);
    B.seed += 4;
    const ScaleValues &sa = plan_a_scales(layout, scales), &sb = plan_b_scales(layout, scales);
    a_scale = to_device(sa.bytes.data(), sa.bytes.size(), B.stream);
    b_scale = to_device(sb.bytes.data(), sb.bytes.size(), B.stream);
    a_scale_f32 = to_device(sa.values.data(), sa.values.size() * 4, B.stream);
    b_scale_f32 = to_device(sb.values.data(), sb.values.size() * 4, B.stream);
    // The cuBLASLt loop's scale pointers each at its own 256-byte slot: cublasLtMatmul answered
    // CUBLAS_STATUS_NOT_SUPPORTED at run time (prepared fine) in every FP8 row when they were
    // packed 4 bytes apart, and ran in every row with these slots (H200, 2026-12-05).
    auto slotted = [&](const std::vector<float>& v) {
      std::vector<float> h(v.size() * kLtScaleSlot, 0.0f);
      for (size_t g = 0; g < v.size(); ++g) h[g * kLtScaleSlot] = v[g];
      return to_device(h.data(), h.size() * 4, B.stream);
    };
    a_tensor = slotted(scales.a_tensor.values);
    b_tensor = slotted(scales.b_tensor.values);
  }
  auto at = [](const DeviceBuffer& buf, int64_t elems, size_t size) {
    return static_cast<char*>(buf.ptr) + size_t(elems) * size;
  };
  auto shape_of = [&](int64_t g) {
    GemmShape s;
    s.m = pr.counts[g];
    s.n = pr.n;
    s.k = pr.k;
    s.b_transposed = true;
    s.type = t;
    return s;
  };
  std::vector<int64_t> busy;  // experts with rows
  for (int64_t g = 0; g < pr.groups; ++g)
    if (pr.counts[g] > 0) busy.push_back(g);

  // The reference, per expert: cuBLAS's f32 product; for FP8 rows of the operands dequantized
  // with their scales (the sum over K blocks of sa * sb * partial sums that deepgemm.h defines),
  // as the single-GEMM mode's FP8 reference.
  if (!fp8) {
    for (int64_t g : busy) {
      const std::string err = B.cublas->gemm_ex_f32(shape_of(g), at(a, pr.a_offset(g), es), at(b, g * pr.n * pr.k, es),
                                                    reinterpret_cast<float*>(at(ref, pr.d_offset(g), 4)), B.stream);
      if (!err.empty()) throw CudaFailure{"reference " + err};
    }
  } else {
    DeviceBuffer a32(size_t(std::max(1, row.max_count)) * pr.k * 4), b32(size_t(pr.n) * pr.k * 4);
    for (int64_t g : busy) {
      const ScaleView va = scale_view(pr, layout, g, true), vb = scale_view(pr, layout, g, false);
      check_int(dequantize(at(a, pr.a_offset(g), es), t, pr.counts[g], pr.k,
                           static_cast<const float*>(a_scale_f32.ptr) + va.offset, va.group_rows, va.group_cols,
                           va.mn_major, va.ld, static_cast<float*>(a32.ptr), B.stream),
                "dequantize A");
      check_int(dequantize(at(b, g * pr.n * pr.k, es), t, pr.n, pr.k,
                           static_cast<const float*>(b_scale_f32.ptr) + vb.offset, vb.group_rows, vb.group_cols,
                           vb.mn_major, vb.ld, static_cast<float*>(b32.ptr), B.stream),
                "dequantize B");
      GemmShape f32 = shape_of(g);
      f32.type = ElemType::F32;
      const std::string err =
          B.cublas->gemm_ex_f32(f32, a32.ptr, b32.ptr, reinterpret_cast<float*>(at(ref, pr.d_offset(g), 4)), B.stream);
      if (!err.empty()) throw CudaFailure{"reference " + err};
    }
    check_cuda(cudaStreamSynchronize(B.stream), "reference");  // before a32 / b32 go
  }

  std::vector<std::unique_ptr<Contender>> contenders;
  std::vector<std::unique_ptr<DeviceBuffer>> outputs;
  auto add = [&](const std::string& name, std::function<std::string(void* D)> fn) {
    outputs.push_back(std::make_unique<DeviceBuffer>(size_t(pr.d_elems()) * ds));
    auto c = std::make_unique<Contender>();
    c->name = name;
    c->out = outputs.back()->ptr;
    void* D = c->out;
    c->launch = [fn, D](int) { return fn(D); };
    contenders.push_back(std::move(c));
  };
  auto after = [](dgemm_status_t st, const char* what) -> std::string {
    if (st != DGEMM_STATUS_SUCCESS) return std::string(what) + ": " + dgemm_status_string(st) + ": " + dgemm_last_error();
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? "" : std::string("after ") + what + ": " + cudaGetErrorString(e);
  };

  // ours: one grouped plan.
  struct PlanGuard {
    dgemm_plan_t p = nullptr;
    ~PlanGuard() { dgemm_destroy_plan(p); }
  } grouped, many;
  grouped.p = grouped_plan(B.ctx, pr, layout, B.opt.force_kernel, &row.ours_status);
  if (grouped.p) {
    row.kernel = describe_kernel(grouped.p, "chosen.config.name");
    size_t ours_ws = 0;  // stream-K kernels keep partial tiles there
    dgemm_plan_workspace_size(grouped.p, &ours_ws);
    auto ours_workspace = std::make_shared<DeviceBuffer>(ours_ws);
    add("ours", [&, ours_workspace, ours_ws](void* D) {
      dgemm_group_args_t ga;
      dgemm_group_args_init(&ga);
      (pr.masked() ? ga.counts : ga.offsets) = static_cast<const int32_t*>(rows_dev.ptr);
      ga.status = static_cast<uint32_t*>(status_dev.ptr);
      dgemm_scale_args_t sa;
      dgemm_scale_args_init(&sa);
      sa.a_scale = a_scale.ptr;
      sa.b_scale = b_scale.ptr;
      if (fp8) ga.header.next = &sa;
      return after(dgemm_execute_ext(grouped.p, a.ptr, b.ptr, nullptr, D, nullptr, &ga, ours_workspace->ptr, ours_ws,
                                     B.stream),
                   "dgemm_execute_ext");
    });
  }

  std::vector<const void*> a_ptrs, b_ptrs;
  for (int64_t g : busy) {
    a_ptrs.push_back(at(a, pr.a_offset(g), es));
    b_ptrs.push_back(at(b, g * pr.n * pr.k, es));
  }
  auto d_of = [&](void* D, int64_t g) { return static_cast<char*>(D) + size_t(pr.d_offset(g)) * ds; };
  // FP8 rows: cuBLAS's FP8 is cuBLASLt's alone, one prepared GEMM per expert (its rows, its
  // per-tensor scales); block-scaled rows time the per-tensor GEMMs of the shape, which compute
  // another product, so they are not checked.
  std::vector<std::shared_ptr<const Cublas::LtState>> lt_gemms;
  if (fp8) {
    row.not_supported = {{"ours_many", "dgemm_create_plan_many takes no input scales"},
                         {"cublas_loop", "cublasGemmEx has no FP8"},
                         {"cublas_grp", "cublasGemmGroupedBatchedEx has no FP8"}};
    std::string why;
    for (int64_t g : busy) {
      GemmShape s = shape_of(g);
      s.quant = Quant::Fp8Tensor;
      s.out_type = ElemType::BF16;
      s.a_scale = static_cast<const float*>(a_tensor.ptr) + g * kLtScaleSlot;
      s.b_scale = static_cast<const float*>(b_tensor.ptr) + g * kLtScaleSlot;
      lt_gemms.push_back(B.cublas->prepare_lt_gemm(s, nullptr, &why));
      if (!lt_gemms.back()) {
        row.not_supported.push_back({"cublaslt_loop", "expert " + std::to_string(g) + " (" +
                                                          std::to_string(pr.counts[g]) + " rows): " + why});
        lt_gemms.clear();
        break;
      }
    }
    if (!busy.empty() && !lt_gemms.empty()) {
      add("cublaslt_loop", [&](void* D) {
        for (size_t i = 0; i < busy.size(); ++i) {
          std::string err = B.cublas->run_lt_gemm(*lt_gemms[i], a_ptrs[i], b_ptrs[i], d_of(D, busy[i]), B.stream);
          if (!err.empty()) return err;
        }
        return std::string();
      });
      contenders.back()->verify = pr.quant() == Quant::Fp8Tensor;
    }
  }

  // ours_many: one single-GEMM plan per expert with rows, planned once, run in one call.
  std::vector<dgemm_problem_t> problems;
  for (int64_t g : busy) problems.push_back(bf16_problem(pr.counts[g], pr.n, pr.k));
  if (!fp8 && !busy.empty() &&
      dgemm_create_plan_many(B.ctx, int64_t(busy.size()), problems.data(), nullptr, nullptr, &many.p) == DGEMM_STATUS_SUCCESS) {
    size_t ws = 0;
    dgemm_plan_workspace_size(many.p, &ws);
    auto workspace = std::make_shared<DeviceBuffer>(ws);
    size_t required = 0;
    dgemm_plan_describe(many.p, nullptr, 0, &required);
    std::vector<char> text(required + 1, '\0');
    dgemm_plan_describe(many.p, text.data(), text.size(), &required);
    Json j;
    std::string err;
    if (parse_json(text.data(), &j, &err) && j.get("plans")) {
      for (const Json& plan : j.get("plans")->array)
        if (const Json* name = plan.path("chosen.config.name")) row.many_kernels += (row.many_kernels.empty() ? "" : ",") + name->string;
    }
    add("ours_many", [&, workspace, ws](void* D) {
      std::vector<void*> d_ptrs;
      for (int64_t g : busy) d_ptrs.push_back(d_of(D, g));
      return after(dgemm_execute_many(many.p, a_ptrs.data(), b_ptrs.data(), nullptr, d_ptrs.data(), nullptr,
                                      workspace->ptr, ws, B.stream),
                   "dgemm_execute_many");
    });
  } else if (!fp8 && !busy.empty()) {
    row.notes += std::string("ours_many not planned: ") + dgemm_last_error() + "; ";
  }

  // cuBLAS (bf16): a loop of GemmEx, and its grouped GEMM (device arrays of pointers, made once).
  if (!fp8) {
    add("cublas_loop", [&](void* D) {
      for (int64_t g : busy) {
        std::string err = B.cublas->gemm_ex(shape_of(g), at(a, pr.a_offset(g), es), at(b, g * pr.n * pr.k, es),
                                            d_of(D, g), B.stream);
        if (!err.empty()) return err;
      }
      return std::string();
    });
  }
  std::vector<int> busy_rows;
  for (int64_t g : busy) busy_rows.push_back(pr.counts[g]);
  DeviceBuffer ptr_arrays(3 * std::max<size_t>(1, busy.size()) * sizeof(void*));
  if (!fp8 && !busy.empty()) {
    std::vector<const void*> host(a_ptrs);
    host.insert(host.end(), b_ptrs.begin(), b_ptrs.end());
    check_cuda(cudaMemcpyAsync(ptr_arrays.ptr, host.data(), host.size() * sizeof(void*), cudaMemcpyHostToDevice, B.stream),
               "pointer arrays");
    // The D pointers depend on the contender's output buffer: written once, right now.
    outputs.push_back(std::make_unique<DeviceBuffer>(size_t(pr.d_elems()) * ds));
    void* D = outputs.back()->ptr;
    std::vector<void*> d_ptrs;
    for (int64_t g : busy) d_ptrs.push_back(d_of(D, g));
    void** d_dev = static_cast<void**>(ptr_arrays.ptr) + 2 * busy.size();
    check_cuda(cudaMemcpyAsync(d_dev, d_ptrs.data(), d_ptrs.size() * sizeof(void*), cudaMemcpyHostToDevice, B.stream),
               "pointer arrays");
    check_cuda(cudaStreamSynchronize(B.stream), "pointer arrays");
    auto c = std::make_unique<Contender>();
    c->name = "cublas_grp";
    c->out = D;
    const void* const* a_dev = static_cast<const void* const*>(ptr_arrays.ptr);
    const void* const* b_dev = a_dev + busy.size();
    GemmShape each = shape_of(busy.front());
    c->launch = [&, each, a_dev, b_dev, d_dev](int) {
      return B.cublas->grouped_gemm_ex(each, busy_rows, a_dev, b_dev, d_dev, B.stream);
    };
    contenders.push_back(std::move(c));
  }

  // Verify each contender once: poisoned output, one launch, every expert's valid rows compared
  // with the reference (an unwritten row shows as non-finite).
  for (auto& c : contenders) {
    check_cuda(cudaMemsetAsync(c->out, 0xFF, size_t(pr.d_elems()) * ds, B.stream), "poison D");
    c->error = c->launch(0);
    if (!c->error.empty()) continue;
    if (!c->verify) {
      row.notes += c->name + " runs the per-tensor FP8 GEMMs of the shape (not checked); ";
      continue;
    }
    double worst = 0;
    unsigned long long nonfinite = 0;
    for (int64_t g : busy) {
      Comparison cmp;
      check_int(compare(d_of(c->out, g), ElemType::BF16, reinterpret_cast<const float*>(at(ref, pr.d_offset(g), 4)),
                        size_t(pr.counts[g]) * pr.n, B.stream, &cmp),
                "compare");
      worst = std::max(worst, cmp.rel_error);
      nonfinite += cmp.nonfinite;
    }
    c->check.rel_error = worst;
    c->check.nonfinite = nonfinite;
    c->checked = true;
    const bool bad = nonfinite > 0 || !(worst <= kTolerance);
    if (c->name == "ours") {
      row.err_max = worst;
      row.nonfinite = nonfinite;
      row.mismatch = bad;
      uint32_t status = 0xffffffffu;
      check_cuda(cudaMemcpy(&status, status_dev.ptr, 4, cudaMemcpyDeviceToHost), "status word");
      if (status != 0) {
        row.mismatch = true;
        row.notes += "status word " + std::to_string(status) + " for valid rows; ";
      }
    } else if (bad) {
      row.notes += c->name + " disagrees with the reference (err " + std::to_string(worst) + ", " +
                   std::to_string(nonfinite) + " non-finite); ";
    }
  }
  for (auto& c : contenders)
    if (!c->error.empty()) {
      (c->name == "ours" ? row.error : row.notes) += c->name + ": " + c->error + "; ";
      if (c->name == "ours") row.mismatch = true;
    }
  contenders.erase(std::remove_if(contenders.begin(), contenders.end(), [](const auto& c) { return !c->error.empty(); }),
                   contenders.end());

  if (!contenders.empty() && !B.opt.verify_only) {
    const TimingPlan timed = time_contenders(contenders, B.stream, B.ev_start, B.ev_stop, B.opt.reps, B.opt.target_us, 1,
                                             B.opt.use_graph);
    row.launches = timed.launches;
    row.timing = timed.mode;
    row.notes += timed.notes;
    for (auto& c : contenders) {
      const double med = median(c->samples_us);
      if (c->name == "ours") row.ours_us = med;
      else if (c->name == "ours_many") row.many_us = med;
      else if (c->name == "cublas_loop") row.loop_us = med;
      else if (c->name == "cublaslt_loop") row.lt_loop_us = med;
      else row.cublas_grp_us = med;
    }
  }
  B.rows.push_back(row);
}

std::string row_name(const Problem& p) {
  return std::to_string(p.n) + "x" + std::to_string(p.k) + " G=" + std::to_string(p.groups) + " t=" +
         std::to_string(p.tokens);
}

// "name (why); ..." of the contenders a row could not run.
std::string not_supported_text(const GroupedRow& r) {
  std::string out;
  for (const auto& [name, why] : r.not_supported) out += (out.empty() ? "" : "; ") + name + " (" + why + ")";
  return out;
}

void print_grouped_header() {
  std::printf("loop = one vendor GEMM per expert: cublasGemmEx (bf16), cuBLASLt FP8 with per-tensor scales (fp8t, fp8b)\n");
  std::printf("%-10s %-5s %-24s %7s %6s %9s %7s %9s %9s %9s %7s %7s %8s  %s\n", "layout", "dtype", "NxK G tokens", "rows",
              "m", "ours_us", "TFLOPs", "many_us", "loop_us", "cublasG", "vsLoop", "vsGrp", "err", "status / kernel");
}

void print_grouped_row(const GroupedRow& r) {
  const double tf = r.flops / r.ours_us * 1e-6;
  // The full reason is in the summary and the JSON; the table keeps one line per row.
  const std::string status = r.ours_status.empty() ? r.kernel : "ours " + r.ours_status.substr(0, 60) + "...";
  std::printf("%-10s %-5s %-24s %7lld %6lld %9s %7s %9s %9s %9s %7s %7s %8s  %s%s%s\n", r.prob.layout.c_str(),
              r.prob.dtype.c_str(), row_name(r.prob).c_str(), (long long)r.prob.valid_rows, (long long)r.prob.m,
              fmt("%.1f", r.ours_us).c_str(), fmt("%.1f", tf).c_str(), fmt("%.1f", r.many_us).c_str(),
              fmt("%.1f", r.loop()).c_str(), fmt("%.1f", r.cublas_grp_us).c_str(),
              fmt("%.3f", r.loop() / r.ours_us).c_str(), fmt("%.3f", r.cublas_grp_us / r.ours_us).c_str(),
              fmt("%.1e", r.err_max).c_str(), status.c_str(), r.mismatch ? "  MISMATCH" : "",
              r.error.empty() ? "" : ("  ERROR " + r.error).c_str());
  if (!r.notes.empty()) std::printf("    note: %s\n", r.notes.c_str());
  std::fflush(stdout);
}

std::string grouped_summary(const GroupedBench& B) {
  std::ostringstream os;
  char line[512];
  os << "deepgemm-bench --grouped summary: " << B.prop.name << ", " << B.rows.size()
     << " rows, TFLOP/s of the valid rows; vsLoop = the loop of vendor GEMMs / ours (cublasGemmEx for bf16, cuBLASLt "
        "FP8 per-tensor for fp8t / fp8b), vsGrp = cublasGemmGroupedBatchedEx / ours (>1: we are faster); many = ours, "
        "one plan per expert\n";
  std::snprintf(line, sizeof line, "%-10s %-5s %-24s %8s %8s %8s %8s %7s %7s %7s\n", "layout", "dtype", "NxK G tokens",
                "ours_TF", "many_TF", "loop_TF", "grp_TF", "vsLoop", "vsGrp", "many/lp");
  os << line;
  int unsupported = 0, mismatches = 0, errors = 0;
  for (const GroupedRow& r : B.rows) {
    auto tf = [&](double us) { return r.flops / us * 1e-6; };
    std::snprintf(line, sizeof line, "%-10s %-5s %-24s %8s %8s %8s %8s %7s %7s %7s%s\n", r.prob.layout.c_str(),
                  r.prob.dtype.c_str(), row_name(r.prob).c_str(),
                  r.ours_status.empty() ? fmt("%.1f", tf(r.ours_us)).c_str() : "n/s", fmt("%.1f", tf(r.many_us)).c_str(),
                  fmt("%.1f", tf(r.loop())).c_str(), fmt("%.1f", tf(r.cublas_grp_us)).c_str(),
                  fmt("%.3f", r.loop() / r.ours_us).c_str(), fmt("%.3f", r.cublas_grp_us / r.ours_us).c_str(),
                  fmt("%.3f", r.loop() / r.many_us).c_str(), r.mismatch ? " MISMATCH" : "");
    os << line;
    unsupported += !r.ours_status.empty();
    mismatches += r.mismatch;
    errors += !r.error.empty();
  }
  // Geometric means per dtype: bf16 and FP8 rows have different baselines.
  for (const std::string& dtype : B.opt.dtypes) {
    double log_loop = 0, log_grp = 0, log_many = 0;
    int n_loop = 0, n_grp = 0, n_many = 0, rows = 0;
    std::string why_not;
    auto add = [](double ratio, double* log_sum, int* count) {
      if (std::isfinite(ratio) && ratio > 0) {
        *log_sum += std::log(ratio);
        ++*count;
      }
    };
    for (const GroupedRow& r : B.rows) {
      if (r.prob.dtype != dtype) continue;
      ++rows;
      add(r.loop() / r.ours_us, &log_loop, &n_loop);
      add(r.cublas_grp_us / r.ours_us, &log_grp, &n_grp);
      add(r.loop() / r.many_us, &log_many, &n_many);
      if (why_not.empty()) why_not = not_supported_text(r);
    }
    if (rows == 0) continue;
    os << dtype << ": geomean vsLoop " << (n_loop ? fmt("%.3f", std::exp(log_loop / n_loop)) : "-") << " (" << n_loop
       << " rows), vsGrp " << (n_grp ? fmt("%.3f", std::exp(log_grp / n_grp)) : "-") << " (" << n_grp
       << " rows), many/loop " << (n_many ? fmt("%.3f", std::exp(log_many / n_many)) : "-") << " (" << n_many
       << " rows)\n";
    if (!why_not.empty()) os << dtype << ": not supported: " << why_not << "\n";
  }
  if (unsupported) {
    std::string why;
    for (const GroupedRow& r : B.rows)
      if (!r.ours_status.empty()) {
        why = r.prob.dtype + ": " + r.ours_status;
        break;
      }
    os << "ours not supported in " << unsupported << " rows: " << why.substr(0, 400) << "\n";
  }
  os << "mismatches: " << mismatches << ", failed rows: " << errors << "\n";
  return os.str();
}

void write_grouped_json(const GroupedBench& B, const std::string& file) {
  std::ofstream out(file);
  if (!out) {
    std::fprintf(stderr, "deepgemm-bench: cannot write %s\n", file.c_str());
    return;
  }
  std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  out << "{\n  \"mode\": \"grouped\",\n  \"date\": " << jstr(date) << ",\n  \"device\": " << jstr(B.prop.name)
      << ",\n  \"library\": " << jstr(dgemm_version_string()) << ",\n  \"align\": " << B.opt.align
      << ",\n  \"skew\": " << jnum(B.opt.skew) << ",\n  \"reps\": " << B.opt.reps
      << ",\n  \"scale_type\": " << jstr(B.opt.ue8m0 ? "ue8m0" : "f32") << ",\n  \"shapes_not_run\": " << B.not_run
      << ",\n  \"rows\": [";
  for (size_t i = 0; i < B.rows.size(); ++i) {
    const GroupedRow& r = B.rows[i];
    std::ostringstream counts, not_supported;
    for (size_t g = 0; g < r.prob.counts.size(); ++g) counts << (g ? "," : "") << r.prob.counts[g];
    for (size_t c = 0; c < r.not_supported.size(); ++c)
      not_supported << (c ? ", " : "") << jstr(r.not_supported[c].first) << ": " << jstr(r.not_supported[c].second);
    out << (i ? ",\n" : "\n") << "    {\"layout\": " << jstr(r.prob.layout) << ", \"dtype\": " << jstr(r.prob.dtype)
        << ", \"n\": " << r.prob.n << ", \"k\": " << r.prob.k << ", \"groups\": " << r.prob.groups
        << ", \"tokens\": " << r.prob.tokens << ", \"expected_m\": " << r.prob.expected_m << ", \"counts\": [" << counts.str() << "], \"valid_rows\": "
        << r.prob.valid_rows << ", \"m\": " << r.prob.m << ", \"flops\": " << jnum(r.flops) << ", \"ours_us\": "
        << jnum(r.ours_us) << ", \"ours_many_us\": " << jnum(r.many_us) << ", \"cublas_loop_us\": " << jnum(r.loop_us)
        << ", \"cublaslt_loop_us\": " << jnum(r.lt_loop_us) << ", \"cublas_grouped_us\": " << jnum(r.cublas_grp_us)
        << ", \"ratio_vs_loop\": " << jnum(r.loop() / r.ours_us) << ", \"ratio_vs_cublas_grouped\": "
        << jnum(r.cublas_grp_us / r.ours_us) << ", \"err_ours\": " << jnum(r.err_max) << ", \"nonfinite_ours\": "
        << r.nonfinite << ", \"mismatch\": " << (r.mismatch ? "true" : "false") << ", \"kernel\": " << jstr(r.kernel)
        << ", \"many_kernels\": " << jstr(r.many_kernels) << ", \"ours_status\": " << jstr(r.ours_status)
        << ", \"not_supported\": {" << not_supported.str() << "}, \"launches_per_sample\": " << r.launches
        << ", \"timing\": " << jstr(r.timing) << ", \"error\": " << jstr(r.error) << ", \"notes\": " << jstr(r.notes)
        << "}";
  }
  out << "\n  ]\n}\n";
}

// Every row of the options in run order: one expert load per (seed, N x K, G, tokens), the same
// for every layout and dtype and whichever other rows run, so every run (and a run of a subset of
// the rows) times the same problems.
std::vector<Problem> sweep(const GroupedOptions& o, uint64_t first_seed) {
  std::vector<Problem> out;
  for (const auto& nk : o.nk)
    for (int64_t groups : o.groups)
      for (int64_t tokens : o.tokens) {
        const uint64_t load_seed = first_seed * 0x9E3779B97F4A7C15ull ^ (uint64_t(nk.first) << 40) ^
                                   (uint64_t(nk.second) << 20) ^ (uint64_t(groups) << 12) ^ uint64_t(tokens);
        for (const std::string& layout : o.layouts) {
          Problem pr = make_problem(o, layout, nk.first, nk.second, groups, tokens, load_seed);
          for (const std::string& dtype : o.dtypes) {
            pr.dtype = dtype;
            out.push_back(pr);
          }
        }
      }
  return out;
}

// ---- --dry-run: the setup, checked on the CPU backend without a GPU ----------------------------

float e4m3_value(uint8_t v) {
  const int exponent = (v >> 3) & 15, mantissa = v & 7;
  if (exponent == 15 && mantissa == 7) return std::nanf("");
  const float magnitude = exponent == 0 ? std::ldexp(float(mantissa), -9) : std::ldexp(float(8 + mantissa), exponent - 10);
  return v & 0x80 ? -magnitude : magnitude;
}

float bf16_value(uint16_t v) {
  const uint32_t bits = uint32_t(v) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// dequantize() on the host, in double: rows x cols elements of type t (ld cols) times the scale
// the view gives each (1 without scales).
std::vector<double> dequantize_host(const uint8_t* src, ElemType t, int64_t rows, int64_t cols, const float* scales,
                                    const ScaleView& v) {
  std::vector<double> out(size_t(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t i = r * cols + c;
      double x = e4m3_value(src[i]);
      if (t == ElemType::BF16) {
        uint16_t half;
        std::memcpy(&half, src + 2 * i, 2);
        x = bf16_value(half);
      }
      if (scales) {
        const int64_t sr = r / v.group_rows, sc = c / v.group_cols;
        x *= scales[v.mn_major ? sr + sc * v.ld : sr * v.ld + sc];
      }
      out[size_t(i)] = x;
    }
  return out;
}

// A full-size row planned on the CPU backend with the GPU run's descriptors: they are accepted,
// and the scale tensors the plan reads (dgemm_plan_scale_shape) fit in what the GPU run
// allocates. "" or what is wrong.
std::string check_plan(dgemm_context_t cpu, const Problem& pr, bool ue8m0) {
  const ScaleLayout s = scale_layout(pr, ue8m0);
  std::string why;
  dgemm_plan_t plan = grouped_plan(cpu, pr, s, "", &why);
  if (!plan) return why;
  if (pr.quant() != Quant::None) {
    const int64_t have[2] = {s.quant == Quant::Fp8Block ? s.a_elems : pr.groups,
                             s.quant == Quant::Fp8Block ? s.b_elems : pr.groups};
    for (int which = 0; which < 2; ++which) {
      int64_t need = 0;
      dgemm_plan_scale_shape(plan, which ? DGEMM_SCALE_TENSOR_B : DGEMM_SCALE_TENSOR_A, nullptr, nullptr, nullptr, &need);
      if (need <= 0 || need > have[which])
        why += std::string(which ? "B" : "A") + "'s scales: the plan reads " + std::to_string(need) +
               " elements, the run allocates " + std::to_string(have[which]) + "; ";
    }
  }
  dgemm_destroy_plan(plan);
  return why;
}

// A row run on the CPU backend (host memory) through the GPU run's plan, scale layout and scale
// views, against the loop over the experts of the dequantized operands in double, with the GPU
// run's tolerance: what would otherwise first show as a MISMATCH on the device. Random operands
// (no zeros), D poisoned. Returns "" or what is wrong; *rel_error gets the error.
std::string check_on_cpu(dgemm_context_t cpu, const Problem& pr, bool ue8m0, uint64_t seed, double* rel_error) {
  const ScaleLayout s = scale_layout(pr, ue8m0);
  const RowScales scales = make_scales(pr, s, seed + 1);
  const bool fp8 = pr.quant() != Quant::None;
  const ElemType t = pr.in_type();
  const size_t es = pr.in_size();
  std::mt19937_64 rng(seed);
  auto random_operand = [&](int64_t count) {
    std::vector<uint8_t> v(size_t(count) * es);
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
    for (int64_t i = 0; i < count; ++i) {
      if (fp8) {  // |x| in [2^-9, 1.875]: exponent field 0-7, never 0x00 / 0x80 (zeros)
        const int sign = byte(rng) & 0x80, exponent = byte(rng) & 7, mantissa = 1 + byte(rng) % 7;
        v[size_t(i)] = uint8_t(sign | exponent << 3 | (exponent ? mantissa - 1 : mantissa));
      } else {
        float x = unit(rng);
        if (x == 0.0f) x = 0.5f;
        uint32_t bits;
        std::memcpy(&bits, &x, 4);
        const uint16_t half = uint16_t(bits >> 16);
        std::memcpy(v.data() + 2 * i, &half, 2);
      }
    }
    return v;
  };
  const std::vector<uint8_t> a = random_operand(pr.a_elems()), b = random_operand(pr.groups * pr.n * pr.k);
  std::vector<uint16_t> d(size_t(pr.d_elems()), 0xFFFF);  // NaN in bf16
  uint32_t status = 0xffffffffu;
  std::string why;
  dgemm_plan_t plan = grouped_plan(cpu, pr, s, "", &why);
  if (!plan) return "not planned: " + why;
  dgemm_group_args_t ga;
  dgemm_group_args_init(&ga);
  (pr.masked() ? ga.counts : ga.offsets) = pr.rows.data();
  ga.status = &status;
  dgemm_scale_args_t sa;
  dgemm_scale_args_init(&sa);
  sa.a_scale = plan_a_scales(s, scales).bytes.data();
  sa.b_scale = plan_b_scales(s, scales).bytes.data();
  if (fp8) ga.header.next = &sa;
  size_t ws = 0;
  dgemm_plan_workspace_size(plan, &ws);
  std::vector<uint8_t> workspace(ws);
  const dgemm_status_t st =
      dgemm_execute_ext(plan, a.data(), b.data(), nullptr, d.data(), nullptr, &ga, workspace.data(), ws, nullptr);
  dgemm_destroy_plan(plan);
  if (st != DGEMM_STATUS_SUCCESS) return std::string("execute: ") + dgemm_status_string(st) + ": " + dgemm_last_error();
  if (status != 0) return "status word " + std::to_string(status) + " for valid rows";
  double err2 = 0, ref2 = 0;
  int64_t nonfinite = 0;
  for (int64_t g = 0; g < pr.groups; ++g) {
    const int64_t rows = pr.counts[g];
    if (rows == 0) continue;
    const ScaleView va = scale_view(pr, s, g, true), vb = scale_view(pr, s, g, false);
    const std::vector<double> ga32 =
        dequantize_host(a.data() + size_t(pr.a_offset(g)) * es, t, rows, pr.k,
                        fp8 ? plan_a_scales(s, scales).values.data() + va.offset : nullptr, va);
    const std::vector<double> gb32 = dequantize_host(b.data() + size_t(g * pr.n * pr.k) * es, t, pr.n, pr.k,
                                                     fp8 ? plan_b_scales(s, scales).values.data() + vb.offset : nullptr, vb);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < pr.n; ++j) {
        double ref = 0;
        for (int64_t p = 0; p < pr.k; ++p) ref += ga32[size_t(i * pr.k + p)] * gb32[size_t(j * pr.k + p)];
        const double out = bf16_value(d[size_t(pr.d_offset(g) + i * pr.n + j)]);
        if (!std::isfinite(out)) {
          ++nonfinite;
          continue;
        }
        err2 += (out - ref) * (out - ref);
        ref2 += ref * ref;
      }
  }
  *rel_error = ref2 > 0 ? std::sqrt(err2 / ref2) : 0;
  if (nonfinite > 0) return std::to_string(nonfinite) + " valid outputs not written (non-finite)";
  if (!(*rel_error <= kTolerance)) return "relative error " + fmt("%.2e", *rel_error) + " over the tolerance";
  return "";
}

int grouped_dry_run(const GroupedOptions& o, uint64_t first_seed) {
  dgemm_context_t cpu = nullptr;
  if (dgemm_context_create(DGEMM_DEVICE_CPU, 0, &cpu) != DGEMM_STATUS_SUCCESS) {
    std::fprintf(stderr, "deepgemm-bench --grouped --dry-run: CPU context: %s\n", dgemm_last_error());
    return 1;
  }
  std::printf("deepgemm-bench --grouped --dry-run: libdeepgemm %s, the CPU backend, no GPU; align %lld, skew %.2f, "
              "%s block scales, --seed %llu\n",
              dgemm_version_string(), (long long)o.align, o.skew, o.ue8m0 ? "ue8m0" : "f32",
              (unsigned long long)first_seed);
  if (!o.force_kernel.empty())
    std::printf("(--force-kernel %s names a GPU configuration: the CPU plans here ignore it)\n", o.force_kernel.c_str());
  std::printf("Every row planned at full size (not run): device MiB it allocates for A, B, D, the scales\n");
  std::printf("%-10s %-5s %-24s %7s %6s %8s %8s %8s %8s  %s\n", "layout", "dtype", "NxK G tokens", "rows", "m", "A_MiB",
              "B_MiB", "D_MiB", "sc_KiB", "plan");
  int failures = 0;
  const double mib = 1.0 / (1 << 20);
  for (const Problem& pr : sweep(o, first_seed)) {
    const std::string why = check_plan(cpu, pr, o.ue8m0);
    const ScaleLayout s = scale_layout(pr, o.ue8m0);
    const double scale_bytes = pr.quant() == Quant::None ? 0
                               : double(8 * pr.groups) + double(s.a_elems + s.b_elems) * double(s.scale_size());
    std::printf("%-10s %-5s %-24s %7lld %6lld %8.1f %8.1f %8.1f %8.1f  %s\n", pr.layout.c_str(), pr.dtype.c_str(),
                row_name(pr).c_str(), (long long)pr.valid_rows, (long long)pr.m, double(pr.a_elems() * pr.in_size()) * mib,
                double(pr.groups * pr.n * pr.k * pr.in_size()) * mib, double(pr.d_elems() * 2) * mib,
                scale_bytes / 1024, why.empty() ? "ok" : ("FAILED: " + why).c_str());
    failures += !why.empty();
  }
  // Small rows, computed: 200 x 320 (a partial 128-block of N and of K), up to 8 experts.
  const int64_t groups = std::min<int64_t>(8, *std::max_element(o.groups.begin(), o.groups.end()));
  std::printf("\nSmall rows computed on the CPU backend against this benchmark's reference (tolerance %.0e):\n",
              kTolerance);
  for (const std::string& layout : o.layouts) {
    Problem pr = make_problem(o, layout, 200, 320, groups, 48, first_seed);
    for (const std::string& dtype : o.dtypes) {
      pr.dtype = dtype;
      double rel = kNaN;
      const std::string why = check_on_cpu(cpu, pr, o.ue8m0, first_seed, &rel);
      std::ostringstream counts;
      for (size_t g = 0; g < pr.counts.size(); ++g) counts << (g ? "," : "") << pr.counts[g];
      std::printf("%-10s %-5s %-24s m %lld, rows %s: err %s  %s\n", layout.c_str(), dtype.c_str(), row_name(pr).c_str(),
                  (long long)pr.m, counts.str().c_str(), fmt("%.1e", rel).c_str(),
                  why.empty() ? "ok" : ("FAILED: " + why).c_str());
      failures += !why.empty();
    }
  }
  dgemm_context_destroy(cpu);
  std::printf("\n%s\n", failures ? "dry run FAILED" : "dry run: all right");
  return failures ? 1 : 0;
}

}  // namespace

int run_grouped(int argc, char** argv) {
  GroupedBench B;
  B.opt = parse_grouped(argc, argv);
  // A fixed default seed: the expert loads of a row are the same in every run (and in a run of a
  // subset of the rows), so runs with different --force-kernel values compare the same problems.
  B.seed = B.opt.seed ? B.opt.seed : 1;
  const uint64_t first_seed = B.seed;
  if (B.opt.dry_run) return grouped_dry_run(B.opt, first_seed);
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::printf("deepgemm-bench --grouped: no CUDA device (%s): nothing to measure, skipped\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return 77;
  }
  if (B.opt.device >= devices) grouped_usage_error("--device " + std::to_string(B.opt.device) + ": no such device");
  check_cuda(cudaSetDevice(B.opt.device), "cudaSetDevice");
  check_cuda(cudaGetDeviceProperties(&B.prop, B.opt.device), "cudaGetDeviceProperties");
  if (dgemm_context_create(DGEMM_DEVICE_CUDA, B.opt.device, &B.ctx) != DGEMM_STATUS_SUCCESS) {
    std::fprintf(stderr, "deepgemm-bench: DeepGEMM cannot use the GPU: %s\n", dgemm_last_error());
    return 1;
  }
  check_cuda(cudaStreamCreateWithFlags(&B.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check_cuda(cudaEventCreate(&B.ev_start), "cudaEventCreate");
  check_cuda(cudaEventCreate(&B.ev_stop), "cudaEventCreate");
  B.cublas = std::make_unique<Cublas>();
  if (!B.cublas->ok()) {
    std::fprintf(stderr, "deepgemm-bench: %s\n", B.cublas->error().c_str());
    return 1;
  }
  std::string dtypes;
  for (const std::string& d : B.opt.dtypes) dtypes += (dtypes.empty() ? "" : ",") + d;
  std::printf("deepgemm-bench --grouped: %s, libdeepgemm %s, %s%s, align %lld, skew %.2f, %d reps, --seed %llu\n",
              B.prop.name, dgemm_version_string(), dtypes.c_str(), B.opt.ue8m0 ? " (ue8m0 block scales)" : "",
              (long long)B.opt.align, B.opt.skew, B.opt.reps, (unsigned long long)first_seed);
  print_grouped_header();
  int failures = 0;
  bool broken = false;
  const auto start = std::chrono::steady_clock::now();
  for (const Problem& pr : sweep(B.opt, first_seed)) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (broken || (B.opt.time_limit_s > 0 && elapsed > B.opt.time_limit_s)) {
      ++B.not_run;
      continue;
    }
    try {
      run_grouped_row(B, pr);
      print_grouped_row(B.rows.back());
    } catch (const CudaFailure& f) {
      std::fprintf(stderr, "deepgemm-bench --grouped: %s %s %s: CUDA failure: %s\n", pr.layout.c_str(), pr.dtype.c_str(),
                   row_name(pr).c_str(), f.what.c_str());
      ++failures;
      if (cudaDeviceSynchronize() != cudaSuccess) {
        std::fprintf(stderr, "deepgemm-bench --grouped: the CUDA context is broken: stopping\n");
        broken = true;
      }
    }
  }
  for (const GroupedRow& r : B.rows) failures += r.mismatch || !r.error.empty();
  std::string summary = grouped_summary(B);
  if (B.not_run) summary += "time limit: " + std::to_string(B.not_run) + " rows not run\n";
  if (!B.opt.json_file.empty()) write_grouped_json(B, B.opt.json_file);
  if (!B.opt.summary_file.empty()) std::ofstream(B.opt.summary_file) << summary;
  std::printf("\n%s", summary.c_str());
  B.cublas.reset();
  cudaEventDestroy(B.ev_start);
  cudaEventDestroy(B.ev_stop);
  cudaStreamDestroy(B.stream);
  dgemm_context_destroy(B.ctx);
  return failures ? 1 : 0;
}

}  // namespace bench
