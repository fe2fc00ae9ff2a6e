// deepgemm-bench: times DeepGEMM plans (public C API only: what users get) against cublasGemmEx and
// cublasLtMatmul on the same device buffers, interleaved, and checks the planner's predictions
// against the measurements. See bench/README.md for the options and the method.
#include <cuda_profiler_api.h>
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
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench_cublas.hpp"
#include "bench_cuda.hpp"
#include "bench_device.hpp"
#include "bench_grouped.hpp"
#include "bench_report.hpp"
#include "bench_util.hpp"

namespace bench {
namespace {

const double kNaN = std::nan("");

// ---- options --------------------------------------------------------------------------------------
struct Options {
  std::vector<std::string> sets{"seed"};
  std::vector<std::string> dtypes{"bf16", "f16"};
  std::vector<std::string> layouts{"tn", "nn"};
  std::string shapes_file;
  int64_t m = 0, n = 0, k = 0;
  std::string epilogue = "plain";  // for --m/--n/--k
  int reps = 20;
  double target_us = 2000;  // length of one timed graph replay
  bool runner_up = false;
  int candidates = 0;       // --candidates K: also time the planner's next K candidates (regret)
  std::string force_kernel; // --force-kernel NAME: plan with this family or configuration
  bool use_graph = true;
  bool use_lt = true;
  bool profile = false;
  bool verify_only = false;  // check every contender's result, time nothing
  double time_limit_s = 0;  // 0: none; else start no new shape after this many seconds
  uint64_t seed = 0;        // 0: from the clock (fresh inputs every run); printed, for --seed
  int device = 0;
  std::string json_file, summary_file, html_file;
  std::string render_file;  // --render: a saved bench.json to turn into --html, no GPU
};

const char* kUsage =
    "usage: deepgemm-bench [options]\n"
    "  --set LIST        shape sets, comma-separated: seed decode batched mid unaligned epilogue square llm\n"
    "                    prefill fp8 all (default seed; all = every set but prefill and fp8)\n"
    "  --shapes FILE     a shape file instead (lines 'M N K [plain|bias_gelu]')\n"
    "  --m M --n N --k K one shape instead (with --epilogue plain|bias_gelu)\n"
    "                    (bias_gelu: a per-column bias and GELU in its tanh form, as cuBLASLt's GELU_BIAS)\n"
    "  --dtype LIST      bf16,f16 (default both); quantized rows (layout tn only): fp8t (e4m3, per-tensor\n"
    "                    scales, bf16 out), fp8b (1x128 A / 128x128 B block scales, bf16 out), fp8q (fp8b\n"
    "                    with an e4m3 output and its 1x128 scales), i8 (int8, i32 out)\n"
    "  --layout LIST     tn (row-major D = A B^T), nn (D = A B), tt (D = A^T B^T), nt (D = A^T B);\n"
    "                    A^T: A stored k x m (default tn,nn)\n"
    "  --reps R          timed repetitions per contender, median reported (default 20)\n"
    "  --quick           5 repetitions of ~1 ms each\n"
    "  --runner-up       also time the planner's best candidate of another kernel family\n"
    "  --candidates K    also time the planner's next K candidates (forced by name, K <= 4): the\n"
    "                    best measured one and the regret of the choice (chosen time / best - 1)\n"
    "  --force-kernel F  plan with this family or configuration name (as dgemm_plan_options_t)\n"
    "  --no-graph        back-to-back launches between events instead of CUDA-graph replays\n"
    "  --no-lt           skip cuBLASLt\n"
    "  --verify-only     check every result against the reference, time nothing (a quick sweep)\n"
    "  --json FILE       write every row and the summary as JSON\n"
    "  --summary FILE    write the short summary table (also printed last)\n"
    "  --html FILE       write the HTML report (charts; self-contained) of this run\n"
    "  --render JSON     no GPU: turn a saved --json file into the --html report, and exit\n"
    "  --device I        CUDA device ordinal (default 0)\n"
    "  --seed S          seed of the random inputs (default: from the clock; printed to repeat a run)\n"
    "  --time-limit S    start no new shape after S seconds (the rows done are still reported)\n"
    "  --profile         our kernel alone, one launch inside cudaProfilerStart/Stop (for ncu\n"
    "                    --profile-from-start off and compute-sanitizer); no cuBLAS, no timing;\n"
    "                    the first --dtype (fp8/i8 rows with the timed row's scales and D type)\n"
    "  --list            print the shape sets and exit\n"
    "  --self-test       check the JSON reader, shape files and statistics (no GPU) and exit\n"
    "  --grouped         mixture-of-experts GEMMs instead (deepgemm-bench --grouped --help)\n"
    "exit status: 0 all right, 1 a failure or a result mismatch, 2 bad usage, 77 no GPU\n";

// The FP8 / INT8 rows by their --dtype names (None: bf16 / f16).
Quant quant_of(const std::string& dtype) {
  if (dtype == "fp8t") return Quant::Fp8Tensor;
  if (dtype == "fp8b") return Quant::Fp8Block;
  if (dtype == "fp8q") return Quant::Fp8BlockQ;
  if (dtype == "i8") return Quant::Int8;
  return Quant::None;
}

// A and B's element type of a --dtype.
ElemType input_type(const std::string& dtype) {
  switch (quant_of(dtype)) {
    case Quant::None: return dtype == "f16" ? ElemType::F16 : ElemType::BF16;
    case Quant::Int8: return ElemType::I8;
    default: return ElemType::E4M3;
  }
}

// Leading dimension of the MN-major 1 x 128 scale tensors of A and D: m rounded up to 4 floats
// (16 bytes), DeepGEMM's TMA-aligned layout, the one the GPU kernels will read fastest.
int64_t block_scale_ld(int64_t m) { return (m + 3) / 4 * 4; }
int64_t k_blocks(int64_t k) { return (k + 127) / 128; }

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr, "deepgemm-bench: %s\n%s", msg.c_str(), kUsage);
  std::exit(2);
}

int64_t parse_size(const char* flag, const char* text) {
  char* end = nullptr;
  long long v = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || v <= 0) usage_error(std::string(flag) + " needs a positive integer, got '" + text + "'");
  return v;
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (a == "--set") {
      o.sets = split_list(value());
    } else if (a == "--shapes") {
      o.shapes_file = value();
    } else if (a == "--m") {
      o.m = parse_size("--m", value());
    } else if (a == "--n") {
      o.n = parse_size("--n", value());
    } else if (a == "--k") {
      o.k = parse_size("--k", value());
    } else if (a == "--epilogue") {
      o.epilogue = value();
      if (o.epilogue != "plain" && o.epilogue != "bias_gelu") usage_error("--epilogue is plain or bias_gelu");
    } else if (a == "--dtype") {
      o.dtypes = split_list(value());
    } else if (a == "--layout") {
      o.layouts = split_list(value());
    } else if (a == "--reps") {
      o.reps = static_cast<int>(parse_size("--reps", value()));
    } else if (a == "--quick") {
      o.reps = 5;
      o.target_us = 1000;
    } else if (a == "--runner-up") {
      o.runner_up = true;
    } else if (a == "--candidates") {
      o.candidates = static_cast<int>(parse_size("--candidates", value()));
    } else if (a == "--force-kernel") {
      o.force_kernel = value();
    } else if (a == "--no-graph") {
      o.use_graph = false;
    } else if (a == "--verify-only") {
      o.verify_only = true;
    } else if (a == "--no-lt") {
      o.use_lt = false;
    } else if (a == "--json") {
      o.json_file = value();
    } else if (a == "--summary") {
      o.summary_file = value();
    } else if (a == "--html") {
      o.html_file = value();
    } else if (a == "--render") {
      o.render_file = value();
    } else if (a == "--device") {
      char* end = nullptr;
      const char* v = value();
      o.device = static_cast<int>(std::strtol(v, &end, 10));
      if (end == v || *end || o.device < 0) usage_error("--device needs a non-negative integer");
    } else if (a == "--seed") {
      o.seed = static_cast<uint64_t>(parse_size("--seed", value()));
    } else if (a == "--time-limit") {
      o.time_limit_s = double(parse_size("--time-limit", value()));
    } else if (a == "--profile") {
      o.profile = true;
    } else {
      usage_error("unknown option '" + a + "'");
    }
  }
  for (const std::string& d : o.dtypes)
    if (d != "bf16" && d != "f16" && quant_of(d) == Quant::None)
      usage_error("--dtype: unknown type '" + d + "' (bf16, f16, fp8t, fp8b, fp8q, i8)");
  for (const std::string& l : o.layouts)
    if (l != "tn" && l != "nn" && l != "tt" && l != "nt")
      usage_error("--layout: unknown layout '" + l + "' (tn, nn, tt, nt)");
  if ((o.m || o.n || o.k) && !(o.m && o.n && o.k)) usage_error("--m, --n and --k go together");
  if (o.dtypes.empty() || o.layouts.empty()) usage_error("empty --dtype or --layout");
  if (!o.render_file.empty() && o.html_file.empty()) usage_error("--render needs --html FILE");
  return o;
}

std::vector<Shape> collect_shapes(const Options& o) {
  std::vector<Shape> shapes;
  std::string error;
  if (o.m) {
    Shape s;
    s.m = o.m;
    s.n = o.n;
    s.k = o.k;
    s.epilogue = o.epilogue == "bias_gelu" ? EpilogueKind::BiasGelu : EpilogueKind::Plain;
    s.set = "cli";
    shapes.push_back(s);
    return shapes;
  }
  if (!o.shapes_file.empty()) {
    std::ifstream in(o.shapes_file);
    if (!in) usage_error("cannot read --shapes file '" + o.shapes_file + "'");
    std::stringstream text;
    text << in.rdbuf();
    if (!parse_shapes(text.str(), o.shapes_file, &shapes, &error)) usage_error(error);
    return shapes;
  }
  const auto& sets = embedded_shape_sets();
  std::vector<std::string> names;
  for (const std::string& s : o.sets) {
    if (s == "all") {
      // The sets with the issues' targets first, so that a --time-limit cuts the long tail.
      for (const char* n : {"seed", "decode", "batched", "mid", "unaligned", "epilogue", "square", "llm"}) names.push_back(n);
    } else {
      names.push_back(s);
    }
  }
  for (const std::string& name : names) {
    auto it = sets.find(name);
    if (it == sets.end()) usage_error("unknown shape set '" + name + "'");
    if (!parse_shapes(it->second, name, &shapes, &error)) usage_error(error);
  }
  return shapes;
}

// ---- our side: a plan made through the public API ----------------------------------------------
struct OurPlan {
  dgemm_plan_t plan = nullptr;
  DeviceBuffer workspace;
  size_t workspace_size = 0;
  bool uses_bias = false;   // the epilogue reads a bias vector
  std::string error;        // why there is no plan
  dgemm_status_t status = DGEMM_STATUS_SUCCESS;  // of dgemm_create_plan
  Quant quant = Quant::None;
  std::string description;  // dgemm_plan_describe's JSON
  std::string kernel;       // chosen.config.name
  std::string family;       // chosen.config.family
  double predicted_us = kNaN;
  double plan_ms = kNaN;    // dgemm_create_plan's wall time (includes compiling on a cache miss)
  // The best runner-up of another family, from the description (to force with --runner-up).
  std::string other_family;
  double other_predicted_us = kNaN;
  double first_runner_up_us = kNaN;  // runners_up[0].predicted_us, whatever its family
  std::vector<std::string> runner_up_names;  // every runner-up's configuration (not the CPU's)
  double floor_us = kNaN;            // the planner's roofline: max(compute floor, memory floor)
  double compute_floor_us = kNaN, memory_floor_us = kNaN, min_bytes = kNaN;  // its terms (report's roofline)

  OurPlan() = default;
  OurPlan(const OurPlan&) = delete;
  OurPlan& operator=(const OurPlan&) = delete;
  ~OurPlan() { dgemm_destroy_plan(plan); }
};

dgemm_dtype_t dgemm_type(ElemType t) { return t == ElemType::F16 ? DGEMM_DTYPE_F16 : DGEMM_DTYPE_BF16; }

void make_plan(dgemm_context_t ctx, const GemmShape& s, const char* force_family, OurPlan* out) {
  dgemm_problem_t p;
  dgemm_problem_init(&p);
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.a_type = p.b_type = p.c_type = p.d_type = dgemm_type(s.type);
  p.compute_type = DGEMM_DTYPE_F32;
  // FP8 / INT8: the types, and the scale tensors in the layouts the Operands hold.
  dgemm_scaling_t scaling;
  dgemm_scaling_init(&scaling);
  out->quant = s.quant;
  if (s.quant == Quant::Int8) {
    p.a_type = p.b_type = DGEMM_DTYPE_I8;
    p.c_type = p.d_type = p.compute_type = DGEMM_DTYPE_I32;
  } else if (s.quant != Quant::None) {
    p.a_type = p.b_type = DGEMM_DTYPE_F8_E4M3;
    p.c_type = p.d_type = DGEMM_DTYPE_BF16;
    if (s.quant == Quant::Fp8Tensor) {
      scaling.a_scale.mode = scaling.b_scale.mode = DGEMM_SCALE_PER_TENSOR;
    } else {
      scaling.a_scale.mode = DGEMM_SCALE_VEC128;
      scaling.a_scale.ld = block_scale_ld(s.m);
      scaling.b_scale.mode = DGEMM_SCALE_BLK128x128;
      scaling.b_scale.layout = DGEMM_SCALE_K_MAJOR;
    }
    if (s.quant == Quant::Fp8BlockQ) {
      p.d_type = DGEMM_DTYPE_F8_E4M3;
      scaling.d_scale.mode = DGEMM_SCALE_VEC128;
      scaling.d_scale.ld = block_scale_ld(s.m);
    }
  }
  const bool scaled = s.quant != Quant::None && s.quant != Quant::Int8;
  p.op_a = s.a_transposed ? DGEMM_OP_T : DGEMM_OP_N;
  p.op_b = s.b_transposed ? DGEMM_OP_T : DGEMM_OP_N;
  p.order = DGEMM_ORDER_ROW_MAJOR;
  dgemm_epilogue_t e;
  dgemm_epilogue_init(&e);
  if (s.bias_gelu) {
    e.bias_mode = DGEMM_VECTOR_PER_COLUMN;
    e.bias_type = dgemm_type(s.type);
    e.activation = DGEMM_ACT_GELU_TANH;
  }
  dgemm_plan_options_t opts;
  dgemm_plan_options_init(&opts);
  opts.force_kernel = force_family;
  out->uses_bias = s.bias_gelu;

  auto t0 = std::chrono::steady_clock::now();
  dgemm_status_t st = dgemm_create_plan_ext(ctx, &p, &e, &opts, scaled ? &scaling : nullptr, &out->plan);
  out->plan_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  out->status = st;
  if (st != DGEMM_STATUS_SUCCESS) {
    out->plan = nullptr;
    out->error = std::string("dgemm_create_plan: ") + dgemm_status_string(st) + ": " + dgemm_last_error();
    return;
  }
  st = dgemm_plan_workspace_size(out->plan, &out->workspace_size);
  if (st != DGEMM_STATUS_SUCCESS) {
    out->error = std::string("dgemm_plan_workspace_size: ") + dgemm_last_error();
    return;
  }
  dgemm_device_kind_t kind = DGEMM_DEVICE_CPU;
  dgemm_context_device(ctx, &kind, nullptr);
  // Device workspace for GPU plans; a CPU plan (the self-test's) is only described, never run here.
  if (out->workspace_size && kind == DGEMM_DEVICE_CUDA) out->workspace = DeviceBuffer(out->workspace_size);

  size_t required = 0;
  dgemm_plan_describe(out->plan, nullptr, 0, &required);
  std::vector<char> text(required + 1, '\0');
  dgemm_plan_describe(out->plan, text.data(), text.size(), &required);
  out->description = text.data();
  Json j;
  std::string err;
  if (!parse_json(out->description, &j, &err)) {
    out->kernel = "(unreadable description: " + err + ")";
    return;
  }
  if (const Json* v = j.path("chosen.config.name")) out->kernel = v->string;
  if (const Json* v = j.path("chosen.config.family")) out->family = v->string;
  if (const Json* v = j.path("chosen.predicted_us")) out->predicted_us = v->number;
  const Json* cf = j.path("roofline.compute_floor_us");
  const Json* mf = j.path("roofline.memory_floor_us");
  if (cf && mf) out->floor_us = std::max(cf->number, mf->number);
  if (cf) out->compute_floor_us = cf->number;
  if (mf) out->memory_floor_us = mf->number;
  if (const Json* b = j.path("roofline.min_bytes")) out->min_bytes = b->number;
  if (const Json* ru = j.get("runners_up")) {
    for (size_t i = 0; i < ru->array.size(); ++i) {
      const Json& c = ru->array[i];
      const Json* pred = c.get("predicted_us");
      const Json* fam = c.path("config.family");
      if (i == 0 && pred) out->first_runner_up_us = pred->number;
      if (const Json* name = c.path("config.name"); name && fam && fam->string != "cpu")
        out->runner_up_names.push_back(name->string);
      // The CPU family never runs on device memory: it is no runner-up of a GPU plan.
      if (fam && fam->string != out->family && fam->string != "cpu" && out->other_family.empty()) {
        out->other_family = fam->string;
        out->other_predicted_us = pred ? pred->number : kNaN;
      }
    }
  }
}

std::string fmt_us(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// ---- one row of the table -----------------------------------------------------------------------
struct Row {
  Shape shape;
  std::string dtype, layout;
  double flops = 0, bytes = 0;
  bool memory_bound = false;
  std::string kernel, family;
  double predicted_us = kNaN, plan_ms = kNaN, first_runner_up_predicted_us = kNaN, floor_us = kNaN;
  double compute_floor_us = kNaN, memory_floor_us = kNaN, min_bytes = kNaN;
  double ours_us = kNaN, ours_p25 = kNaN, ours_p75 = kNaN;
  double cublas_us = kNaN, lt_us = kNaN;
  std::string ru_kernel;
  double ru_predicted_us = kNaN, ru_us = kNaN;
  // --candidates: the planner's next candidates measured; the fastest of them and the chosen one.
  std::vector<std::pair<std::string, double>> candidates;  // (configuration, measured us)
  std::string best_kernel;
  double best_us = kNaN;
  double regret() const { return ours_us / best_us - 1.0; }
  double err_ours = kNaN, err_cublas = kNaN, err_lt = kNaN, err_ru = kNaN;
  unsigned long long nonfinite_ours = 0;
  bool mismatch = false;
  int sets = 1, launches = 0;
  std::string timing;  // "graph" or "stream"
  std::string error;   // a failure of our side
  std::string notes;   // cuBLAS-side problems, informational
  bool unsupported = false;  // our side answered NOT_SUPPORTED (FP8 / INT8 rows before their kernels)

  double best_cublas_us() const {
    double b = kNaN;
    for (double t : {cublas_us, lt_us})
      if (!std::isnan(t) && (std::isnan(b) || t < b)) b = t;
    return b;
  }
  double ratio() const { return best_cublas_us() / ours_us; }
};

// Relative Frobenius error allowed for an output of type t. An e4m3 output keeps 3 mantissa bits;
// i32 outputs are exact integers, compared after the same conversion to float on both sides.
double tolerance(ElemType t) {
  switch (t) {
    case ElemType::F16: return 2e-3;
    case ElemType::E4M3: return 7e-2;
    case ElemType::I32: return 1e-7;
    default: return 1e-2;
  }
}

struct Bench {
  Options opt;
  dgemm_context_t ctx = nullptr;
  std::unique_ptr<Cublas> cublas;
  cudaStream_t stream = nullptr;
  cudaEvent_t ev_start = nullptr, ev_stop = nullptr;
  cudaDeviceProp prop{};
  uint64_t seed = 1;        // next seed of the input generator
  uint64_t first_seed = 1;  // what --seed repeats
  std::vector<Row> rows;
  size_t shapes_not_run = 0;  // cut by --time-limit
  double copy_tbps = kNaN;    // device-to-device copy bandwidth measured at start (read + write)
};

// A 1 GiB device-to-device copy, median of 7 after a warm-up: what streaming code can reach.
double copy_bandwidth_tbps(cudaStream_t stream) {
  const size_t bytes = size_t(1) << 30;
  void *src = nullptr, *dst = nullptr;
  if (cudaMalloc(&src, bytes) != cudaSuccess || cudaMalloc(&dst, bytes) != cudaSuccess) {
    cudaFree(src);
    cudaGetLastError();
    return kNaN;
  }
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaMemsetAsync(src, 0x3c, bytes, stream);
  std::vector<double> us;
  for (int i = 0; i < 8; ++i) {
    cudaEventRecord(a, stream);
    cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream);
    cudaEventRecord(b, stream);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    if (i > 0) us.push_back(1000.0 * ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaFree(src);
  cudaFree(dst);
  return 2.0 * double(bytes) / median(us) * 1e-6;
}

// Buffers shared by every layout and contender of one (shape, dtype): the same device memory
// feeds ours and cuBLAS.
struct Operands {
  std::vector<DeviceBuffer> a, b;
  DeviceBuffer bias, ref;
  int sets = 1;
  // FP8 rows: one f32 scale each for A and B (per tensor; cuBLASLt's scale pointers in every FP8
  // row), A's 1 x 128 scales (m x KB, MN-major, ld block_scale_ld(m)), B's 128 x 128 scales
  // (ceil(n/128) x KB, K-major), and D's 1 x 128 scales written by fp8q plans (layout of A's).
  DeviceBuffer a_scale, b_scale, a_block_scale, b_block_scale, d_block_scale;
};

Operands make_operands(Bench& B, const Shape& s, ElemType t, Quant quant) {
  Operands ops;
  size_t es = elem_size(t);
  // FP8 values in [-2, 2) (e4m3 rounding), int8 in [-127, 127]; bf16 / f16 in [-1, 1).
  const float range = t == ElemType::I8 ? 127.0f : t == ElemType::E4M3 ? 2.0f : 1.0f;
  size_t a_bytes = size_t(s.m) * s.k * es, b_bytes = size_t(s.n) * s.k * es;
  // Rotate input sets when the operands would stay in L2 between launches: a benchmark must read
  // them from HBM as a real layer does.
  double l2 = double(B.prop.l2CacheSize);
  double operand_bytes = double(a_bytes + b_bytes);
  ops.sets = operand_bytes < 3.0 * l2 ? std::min(8, int(std::ceil(3.0 * l2 / operand_bytes))) : 1;
  for (int i = 0; i < ops.sets; ++i) {
    ops.a.emplace_back(a_bytes);
    ops.b.emplace_back(b_bytes);
    check_int(fill_random(ops.a.back().ptr, size_t(s.m) * s.k, t, B.seed++, range, B.stream), "fill A");
    check_int(fill_random(ops.b.back().ptr, size_t(s.n) * s.k, t, B.seed++, range, B.stream), "fill B");
  }
  ops.bias = DeviceBuffer(size_t(s.n) * es);
  check_int(fill_random(ops.bias.ptr, size_t(s.n), t, B.seed++, 1.0f, B.stream), "fill bias");
  ops.ref = DeviceBuffer(size_t(s.m) * s.n * sizeof(float));
  if (quant != Quant::None && quant != Quant::Int8) {
    const int64_t kb = k_blocks(s.k), a_blocks = block_scale_ld(s.m) * kb, b_blocks = k_blocks(s.n) * kb;
    ops.a_scale = DeviceBuffer(sizeof(float));
    ops.b_scale = DeviceBuffer(sizeof(float));
    ops.a_block_scale = DeviceBuffer(size_t(a_blocks) * sizeof(float));
    ops.b_block_scale = DeviceBuffer(size_t(b_blocks) * sizeof(float));
    ops.d_block_scale = DeviceBuffer(size_t(block_scale_ld(s.m) * k_blocks(s.n)) * sizeof(float));
    check_int(fill_scales(static_cast<float*>(ops.a_scale.ptr), 1, B.seed++, B.stream), "fill scales");
    check_int(fill_scales(static_cast<float*>(ops.b_scale.ptr), 1, B.seed++, B.stream), "fill scales");
    check_int(fill_scales(static_cast<float*>(ops.a_block_scale.ptr), size_t(a_blocks), B.seed++, B.stream), "fill scales");
    check_int(fill_scales(static_cast<float*>(ops.b_block_scale.ptr), size_t(b_blocks), B.seed++, B.stream), "fill scales");
  }
  return ops;
}

// The reference of a quantized row in ops.ref (row-major m x n f32): FP8 operands dequantized
// with the row's scales into f32 (the same sum over K blocks of sa * sb * partial sums), then
// one f32 cublasGemmEx; INT8 from cublasGemmEx's exact i32 product.
void quantized_reference(Bench& B, const GemmShape& gs, Operands& ops) {
  const int64_t m = gs.m, n = gs.n, k = gs.k;
  float* ref = static_cast<float*>(ops.ref.ptr);
  if (gs.quant == Quant::Int8) {
    DeviceBuffer exact(size_t(m) * n * sizeof(int32_t));
    std::string err = B.cublas->gemm_ex(gs, ops.a[0].ptr, ops.b[0].ptr, exact.ptr, B.stream);
    if (!err.empty()) throw CudaFailure{"reference " + err};
    check_int(dequantize(exact.ptr, ElemType::I32, m, n, nullptr, 1, 1, false, 0, ref, B.stream), "reference");
    check_cuda(cudaStreamSynchronize(B.stream), "reference");
    return;
  }
  DeviceBuffer a32(size_t(m) * k * sizeof(float)), b32(size_t(n) * k * sizeof(float));
  const bool per_tensor = gs.quant == Quant::Fp8Tensor;
  check_int(per_tensor ? dequantize(ops.a[0].ptr, ElemType::E4M3, m, k, static_cast<const float*>(ops.a_scale.ptr), m, k,
                                    false, 0, static_cast<float*>(a32.ptr), B.stream)
                       : dequantize(ops.a[0].ptr, ElemType::E4M3, m, k, static_cast<const float*>(ops.a_block_scale.ptr),
                                    1, 128, true, block_scale_ld(m), static_cast<float*>(a32.ptr), B.stream),
            "dequantize A");
  check_int(per_tensor ? dequantize(ops.b[0].ptr, ElemType::E4M3, n, k, static_cast<const float*>(ops.b_scale.ptr), n, k,
                                    false, 0, static_cast<float*>(b32.ptr), B.stream)
                       : dequantize(ops.b[0].ptr, ElemType::E4M3, n, k, static_cast<const float*>(ops.b_block_scale.ptr),
                                    128, 128, false, k_blocks(k), static_cast<float*>(b32.ptr), B.stream),
            "dequantize B");
  GemmShape f32 = gs;
  f32.type = ElemType::F32;
  f32.quant = Quant::None;
  std::string err = B.cublas->gemm_ex_f32(f32, a32.ptr, b32.ptr, ref, B.stream);
  if (!err.empty()) throw CudaFailure{"reference " + err};
  check_cuda(cudaStreamSynchronize(B.stream), "reference");  // before a32 / b32 go
}

std::string execute(const OurPlan& p, const Operands& ops, const void* A, const void* Bm, void* D, cudaStream_t stream) {
  dgemm_args_t args;
  dgemm_args_init(&args);
  if (p.uses_bias) args.bias = ops.bias.ptr;  // only what the plan asks for, as a user would
  dgemm_scale_args_t scales;
  dgemm_scale_args_init(&scales);
  const bool scaled = p.quant != Quant::None && p.quant != Quant::Int8;
  if (p.quant == Quant::Fp8Tensor) {
    scales.a_scale = ops.a_scale.ptr;
    scales.b_scale = ops.b_scale.ptr;
  } else if (scaled) {
    scales.a_scale = ops.a_block_scale.ptr;
    scales.b_scale = ops.b_block_scale.ptr;
    if (p.quant == Quant::Fp8BlockQ) scales.d_scale = ops.d_block_scale.ptr;
  }
  dgemm_status_t st = dgemm_execute_ext(p.plan, A, Bm, nullptr, D, &args, scaled ? &scales : nullptr, p.workspace.ptr,
                                        p.workspace_size, stream);
  if (st != DGEMM_STATUS_SUCCESS) return std::string("dgemm_execute: ") + dgemm_status_string(st) + ": " + dgemm_last_error();
  cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? "" : std::string("after dgemm_execute: ") + cudaGetErrorString(e);
}

void run_row(Bench& B, const Shape& shape, ElemType type, const std::string& dtype, const std::string& layout,
             Operands& ops) {
  Row row;
  row.shape = shape;
  row.dtype = dtype;
  row.layout = layout;
  row.sets = ops.sets;
  GemmShape gs;
  gs.m = shape.m;
  gs.n = shape.n;
  gs.k = shape.k;
  gs.b_transposed = layout[0] == 't';  // tn, tt
  gs.a_transposed = layout[1] == 't';  // tt, nt
  gs.type = type;
  gs.bias_gelu = shape.epilogue == EpilogueKind::BiasGelu;
  gs.quant = quant_of(dtype);
  gs.out_type = gs.quant == Quant::Int8 ? ElemType::I32 : ElemType::BF16;  // cuBLAS's D in quantized rows
  gs.a_scale = static_cast<const float*>(ops.a_scale.ptr);
  gs.b_scale = static_cast<const float*>(ops.b_scale.ptr);
  // D's type: ours (e4m3 for fp8q, whose 1 x 128 scales are then checked too) and cuBLAS's.
  const ElemType cublas_out = gs.quant == Quant::None ? type : gs.out_type;
  const ElemType our_out = gs.quant == Quant::Fp8BlockQ ? ElemType::E4M3 : cublas_out;
  size_t d_count = size_t(shape.m) * shape.n;
  row.flops = 2.0 * double(shape.m) * double(shape.n) * double(shape.k);
  row.bytes = double(elem_size(type)) * (double(shape.m) * shape.k + double(shape.n) * shape.k +
                                         (gs.bias_gelu ? double(shape.n) : 0.0)) +
              double(elem_size(our_out)) * double(shape.m) * shape.n;
  row.memory_bound = shape.m <= 64 || shape.n <= 64;

  if (gs.quant != Quant::None) {
    quantized_reference(B, gs, ops);
  } else {
    // The reference: cuBLAS's f32 product on set 0, the epilogue applied in double precision.
    std::string err = B.cublas->gemm_ex_f32(gs, ops.a[0].ptr, ops.b[0].ptr, static_cast<float*>(ops.ref.ptr), B.stream);
    if (!err.empty()) throw CudaFailure{"reference " + err};
    if (gs.bias_gelu)
      check_int(apply_bias_gelu(static_cast<float*>(ops.ref.ptr), ops.bias.ptr, type, shape.m, shape.n, B.stream),
                "reference epilogue");
  }

  OurPlan ours;
  make_plan(B.ctx, gs, B.opt.force_kernel.empty() ? nullptr : B.opt.force_kernel.c_str(), &ours);
  row.kernel = ours.kernel;
  row.family = ours.family;
  row.predicted_us = ours.predicted_us;
  row.plan_ms = ours.plan_ms;
  row.first_runner_up_predicted_us = ours.first_runner_up_us;
  row.floor_us = ours.floor_us;
  row.compute_floor_us = ours.compute_floor_us;
  row.memory_floor_us = ours.memory_floor_us;
  row.min_bytes = ours.min_bytes;

  std::vector<std::unique_ptr<Contender>> contenders;
  std::vector<std::unique_ptr<DeviceBuffer>> outputs;
  auto add = [&](const std::string& name, ElemType out_type, std::function<std::string(void* D, int set)> fn) {
    outputs.push_back(std::make_unique<DeviceBuffer>(d_count * elem_size(out_type)));
    auto c = std::make_unique<Contender>();
    c->name = name;
    c->out_type = out_type;
    c->out = outputs.back()->ptr;
    void* D = c->out;
    c->launch = [fn, D](int set) { return fn(D, set); };
    contenders.push_back(std::move(c));
  };
  if (ours.plan) {
    add("ours", our_out, [&](void* D, int set) { return execute(ours, ops, ops.a[set].ptr, ops.b[set].ptr, D, B.stream); });
  } else if (ours.status == DGEMM_STATUS_NOT_SUPPORTED && gs.quant != Quant::None) {
    // FP8 / INT8 before their GPU kernels: cuBLAS is still measured, ours is reported as such.
    row.unsupported = true;
    row.notes += "ours: not supported: " + ours.error + "; ";
  } else {
    row.error = ours.error;
  }
  OurPlan other;
  if (B.opt.runner_up && ours.plan && !ours.other_family.empty()) {
    make_plan(B.ctx, gs, ours.other_family.c_str(), &other);
    if (other.plan) {
      row.ru_kernel = other.kernel;
      row.ru_predicted_us = other.predicted_us;
      add("runner_up", our_out,
          [&](void* D, int set) { return execute(other, ops, ops.a[set].ptr, ops.b[set].ptr, D, B.stream); });
    } else {
      row.notes += "runner-up (" + ours.other_family + ") not planned: " + other.error + "; ";
    }
  }
  // --candidates: the next configurations of the plan's ranking, each planned by name.
  std::vector<std::unique_ptr<OurPlan>> cands;
  for (int i = 0; ours.plan && i < B.opt.candidates && i < int(ours.runner_up_names.size()); ++i) {
    auto c = std::make_unique<OurPlan>();
    make_plan(B.ctx, gs, ours.runner_up_names[size_t(i)].c_str(), c.get());
    if (!c->plan) {
      row.notes += "candidate " + ours.runner_up_names[size_t(i)] + " not planned: " + c->error + "; ";
      continue;
    }
    OurPlan* plan = c.get();
    add("cand:" + plan->kernel, our_out,
        [&, plan](void* D, int set) { return execute(*plan, ops, ops.a[set].ptr, ops.b[set].ptr, D, B.stream); });
    cands.push_back(std::move(c));
  }
  // cublasGemmEx has no fused epilogue (Lt alone stands for cuBLAS there) and no FP8.
  if (!gs.bias_gelu && type != ElemType::E4M3) {
    add("cublas", cublas_out,
        [&](void* D, int set) { return B.cublas->gemm_ex(gs, ops.a[set].ptr, ops.b[set].ptr, D, B.stream); });
  }
  if (B.opt.use_lt) {
    std::string why = B.cublas->prepare_lt(gs, ops.bias.ptr);
    if (why.empty()) {
      add("cublaslt", cublas_out,
          [&](void* D, int set) { return B.cublas->run_lt(ops.a[set].ptr, ops.b[set].ptr, D, B.stream); });
      // Block-scaled rows compare with cuBLAS's per-tensor FP8 GEMM of the shape (what the issue's
      // targets name): another product, so it is timed but not checked against our reference.
      if (gs.quant == Quant::Fp8Block || gs.quant == Quant::Fp8BlockQ) contenders.back()->verify = false;
    } else {
      row.notes += "cuBLASLt: " + why + "; ";
    }
  }

  // Verify every contender once, before timing: poisoned output (0xFF bytes: NaN in f16 and bf16),
  // one launch on set 0, compared with the reference.
  // A block-scaled e4m3 output (fp8q) is checked dequantized with the scales it came with (poisoned
  // too: 0xFF bytes are NaN scales).
  std::unique_ptr<DeviceBuffer> dequantized;
  for (auto& c : contenders) {
    check_cuda(cudaMemsetAsync(c->out, 0xFF, d_count * elem_size(c->out_type), B.stream), "poison D");
    const bool block_out = gs.quant == Quant::Fp8BlockQ && c->out_type == ElemType::E4M3;
    if (block_out)
      check_cuda(cudaMemsetAsync(ops.d_block_scale.ptr, 0xFF, size_t(block_scale_ld(shape.m) * k_blocks(shape.n)) * 4,
                                 B.stream),
                 "poison D's scales");
    c->error = c->launch(0);
    if (!c->error.empty() || !c->verify) continue;
    const void* out = c->out;
    ElemType out_type = c->out_type;
    if (block_out) {
      if (!dequantized) dequantized = std::make_unique<DeviceBuffer>(d_count * sizeof(float));
      check_int(dequantize(c->out, ElemType::E4M3, shape.m, shape.n, static_cast<const float*>(ops.d_block_scale.ptr), 1,
                           128, true, block_scale_ld(shape.m), static_cast<float*>(dequantized->ptr), B.stream),
                "dequantize D");
      out = dequantized->ptr;
      out_type = ElemType::F32;
    }
    check_int(compare(out, out_type, static_cast<const float*>(ops.ref.ptr), d_count, B.stream, &c->check), "compare");
    c->checked = true;
  }
  for (auto& c : contenders) {
    if (!c->verify) {
      row.notes += c->name + " runs the per-tensor FP8 GEMM of this shape (not checked); ";
      continue;
    }
    double e = c->checked ? c->check.rel_error : kNaN;
    bool bad = !c->checked || c->check.nonfinite > 0 || !(e <= tolerance(c->out_type));
    if (c->name == "ours") {
      row.err_ours = e;
      row.nonfinite_ours = c->check.nonfinite;
      if (!c->error.empty()) row.error = c->error;
      if (bad) row.mismatch = true;
    } else if (c->name == "runner_up") {
      row.err_ru = e;
      if (bad) row.notes += "runner-up MISMATCH (err " + std::to_string(e) + ") " + c->error + "; ";
    } else if (c->name.rfind("cand:", 0) == 0) {
      if (bad) {
        row.notes += c->name + " MISMATCH (err " + std::to_string(e) + ") " + c->error + "; ";
        row.mismatch = true;  // a configuration the planner may choose computes wrongly
        c->error = "mismatch";
      }
    } else {
      (c->name == "cublas" ? row.err_cublas : row.err_lt) = e;
      if (bad) row.notes += c->name + " disagrees with the reference (err " + std::to_string(e) + ") " + c->error + "; ";
    }
  }
  contenders.erase(std::remove_if(contenders.begin(), contenders.end(), [](const auto& c) { return !c->error.empty(); }),
                   contenders.end());

  if (!contenders.empty() && !B.opt.verify_only) {
    const TimingPlan timed = time_contenders(contenders, B.stream, B.ev_start, B.ev_stop, B.opt.reps, B.opt.target_us,
                                             ops.sets, B.opt.use_graph);
    row.launches = timed.launches;
    row.timing = timed.mode;
    row.notes += timed.notes;
    for (auto& c : contenders) {
      double med = median(c->samples_us);
      if (c->name == "ours") {
        row.ours_us = med;
        row.ours_p25 = percentile(c->samples_us, 0.25);
        row.ours_p75 = percentile(c->samples_us, 0.75);
      } else if (c->name == "runner_up") {
        row.ru_us = med;
      } else if (c->name.rfind("cand:", 0) == 0) {
        row.candidates.push_back({c->name.substr(5), med});
      } else if (c->name == "cublas") {
        row.cublas_us = med;
      } else {
        row.lt_us = med;
      }
    }
  }
  if (!std::isnan(row.ours_us)) {
    row.best_kernel = row.kernel;
    row.best_us = row.ours_us;
    for (const auto& [name, us] : row.candidates)
      if (us < row.best_us) {
        row.best_kernel = name;
        row.best_us = us;
      }
    if (!row.candidates.empty())
      row.notes += "fastest measured of " + std::to_string(row.candidates.size() + 1) + ": " + row.best_kernel + " " +
                   fmt_us(row.best_us) + " us (regret of the choice " + fmt_us(100.0 * row.regret()) + "%); ";
  }
  B.rows.push_back(row);
}

// ---- printing -----------------------------------------------------------------------------------
std::string shape_name(const Shape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}
const char* epi_name(const Shape& s) { return s.epilogue == EpilogueKind::BiasGelu ? "bias_gelu" : "plain"; }

void print_header() {
  std::printf("%-9s %-17s %-9s %-4s %-3s %9s %7s %9s %7s %9s %6s %7s %8s %-30s %9s %9s  %s\n", "set", "MxNxK", "epilogue",
              "type", "lay", "ours_us", "TFLOPs", "cublas_us", "TFLOPs", "lt_us", "ratio", "GB/s", "err", "kernel",
              "pred_us", "next_pred", "runner-up of another family: kernel pred/meas us");
}

// One line per row; next_pred is runners_up[0].predicted_us (whatever its family, not timed).
void print_row(const Row& r) {
  std::string ru = r.ru_kernel.empty() ? std::string("-")
                                       : r.ru_kernel + " " + fmt("%.1f", r.ru_predicted_us) + "/" + fmt("%.1f", r.ru_us);
  std::string gbps = r.memory_bound ? fmt("%.0f", r.bytes / r.ours_us * 1e-3) : std::string("-");
  std::string error = r.error.empty() ? std::string() : "  ERROR " + r.error;
  if (r.unsupported) error = "  not supported";
  std::printf("%-9s %-17s %-9s %-4s %-3s %9s %7s %9s %7s %9s %6s %7s %8s %-30s %9s %9s  %s%s%s\n", r.shape.set.c_str(),
              shape_name(r.shape).c_str(), epi_name(r.shape), r.dtype.c_str(), r.layout.c_str(),
              fmt("%.1f", r.ours_us).c_str(), fmt("%.1f", r.flops / r.ours_us * 1e-6).c_str(),
              fmt("%.1f", r.cublas_us).c_str(), fmt("%.1f", r.flops / r.cublas_us * 1e-6).c_str(),
              fmt("%.1f", r.lt_us).c_str(), fmt("%.3f", r.ratio()).c_str(), gbps.c_str(), fmt("%.1e", r.err_ours).c_str(),
              r.kernel.empty() ? "-" : r.kernel.c_str(), fmt("%.1f", r.predicted_us).c_str(),
              fmt("%.1f", r.first_runner_up_predicted_us).c_str(), ru.c_str(), r.mismatch ? "  MISMATCH" : "",
              error.c_str());
  if (!r.notes.empty()) std::printf("    note: %s\n", r.notes.c_str());
  std::fflush(stdout);
}

struct Correlations {
  double chosen = kNaN;    // over rows: predicted vs measured time of the chosen plan
  double with_ru = kNaN;   // the same with the runner-up measurements added as extra points
  int chosen_points = 0, ru_points = 0;
  int ru_pairs = 0, ru_pairs_right = 0;  // rows where the chosen plan measured faster than the runner-up
};

Correlations correlations(const std::vector<Row>& rows) {
  Correlations c;
  std::vector<double> px, mx;
  for (const Row& r : rows)
    if (!std::isnan(r.predicted_us) && !std::isnan(r.ours_us)) {
      px.push_back(r.predicted_us);
      mx.push_back(r.ours_us);
    }
  c.chosen_points = static_cast<int>(px.size());
  c.chosen = spearman(px, mx);
  for (const Row& r : rows)
    if (!std::isnan(r.ru_predicted_us) && !std::isnan(r.ru_us)) {
      px.push_back(r.ru_predicted_us);
      mx.push_back(r.ru_us);
      ++c.ru_points;
      if (!std::isnan(r.ours_us)) {
        ++c.ru_pairs;
        if (r.ours_us <= r.ru_us) ++c.ru_pairs_right;
      }
    }
  c.with_ru = spearman(px, mx);
  return c;
}

// The rows the targets of the issues name, compactly: printed last and written to --summary.
bool is_key_row(const Row& r) {
  const Shape& s = r.shape;
  if (s.set == "seed" || s.set == "unaligned" || s.set == "epilogue" || s.set == "cli") return true;
  if (s.set == "square") return s.m == 4096 || s.m == 8192;
  // Decode and prefill extremes, bf16 only: the summary must fit the end of a device call's output.
  if (s.set == "llm") return (s.m == 1 || s.m == 4096) && r.dtype == "bf16";
  if (s.set == "decode" || s.set == "batched" || s.set == "mid") return r.dtype == "bf16";
  return true;  // a --shapes file: every row
}

std::string summary_text(const Bench& B) {
  std::ostringstream os;
  char line[512];
  os << "deepgemm-bench summary: " << B.prop.name << ", " << B.rows.size() << " rows, ratio = best cuBLAS time / ours (>1: we are faster)\n";
  if (!std::isnan(B.copy_tbps)) {
    std::snprintf(line, sizeof line, "copy bandwidth %.2f TB/s; memory-bound rows (M or N <= 64): GB/s column / copy\n", B.copy_tbps);
    os << line;
  }
  std::snprintf(line, sizeof line, "%-9s %-16s %-9s %-4s %-3s %8s %8s %6s %8s %8s %s\n", "set", "MxNxK", "epilogue", "type",
                "lay", "ours_TF", "cublasTF", "ratio", "pred_us", "meas_us", "kernel");
  os << line;
  int hidden = 0;
  for (const Row& r : B.rows) {
    if (!is_key_row(r)) {
      ++hidden;
      continue;
    }
    std::snprintf(line, sizeof line, "%-9s %-16s %-9s %-4s %-3s %8s %8s %6s %8s %8s %s%s%s\n", r.shape.set.c_str(),
                  shape_name(r.shape).c_str(), epi_name(r.shape), r.dtype.c_str(), r.layout.c_str(),
                  fmt("%.1f", r.flops / r.ours_us * 1e-6).c_str(), fmt("%.1f", r.flops / r.best_cublas_us() * 1e-6).c_str(),
                  fmt("%.3f", r.ratio()).c_str(), fmt("%.1f", r.predicted_us).c_str(), fmt("%.1f", r.ours_us).c_str(),
                  r.unsupported ? "not supported" : r.kernel.c_str(), r.mismatch ? " MISMATCH" : "",
                  r.error.empty() ? "" : " ERROR");
    os << line;
  }
  if (hidden) os << "(" << hidden << " more rows in the full table)\n";

  // Geometric mean and minimum of the ratio per set, type and layout.
  struct Agg {
    double log_sum = 0;
    int n = 0;
    double min = kNaN;
  };
  std::vector<std::pair<std::string, Agg>> aggs;
  for (const Row& r : B.rows) {
    double q = r.ratio();
    if (std::isnan(q)) continue;
    std::string key = r.shape.set + " " + r.dtype + " " + r.layout;
    auto it = std::find_if(aggs.begin(), aggs.end(), [&](const auto& a) { return a.first == key; });
    if (it == aggs.end()) {
      aggs.push_back({key, Agg{}});
      it = aggs.end() - 1;
    }
    it->second.log_sum += std::log(q);
    it->second.n++;
    it->second.min = std::isnan(it->second.min) ? q : std::min(it->second.min, q);
  }
  for (const auto& a : aggs) {
    std::snprintf(line, sizeof line, "ratio %-22s geomean %.3f  min %.3f  (%d rows)\n", a.first.c_str(),
                  std::exp(a.second.log_sum / a.second.n), a.second.min, a.second.n);
    os << line;
  }
  // Epilogue overhead: ours with bias+GELU over ours plain, same shape, type and layout.
  for (const Row& e : B.rows) {
    if (e.shape.epilogue != EpilogueKind::BiasGelu) continue;
    for (const Row& p : B.rows)
      if (p.shape.epilogue == EpilogueKind::Plain && p.shape.m == e.shape.m && p.shape.n == e.shape.n &&
          p.shape.k == e.shape.k && p.dtype == e.dtype && p.layout == e.layout && p.shape.set == e.shape.set) {
        std::snprintf(line, sizeof line, "epilogue %s %s %s: bias+gelu / plain = %.3f\n", shape_name(e.shape).c_str(),
                      e.dtype.c_str(), e.layout.c_str(), e.ours_us / p.ours_us);
        os << line;
        break;
      }
  }
  // Regret of the planner's choice (--candidates): chosen time / fastest measured candidate, per set.
  std::vector<std::pair<std::string, Agg>> regrets;
  for (const Row& r : B.rows) {
    if (r.candidates.empty() || std::isnan(r.best_us)) continue;
    auto it = std::find_if(regrets.begin(), regrets.end(), [&](const auto& a) { return a.first == r.shape.set; });
    if (it == regrets.end()) {
      regrets.push_back({r.shape.set, Agg{}});
      it = regrets.end() - 1;
    }
    it->second.log_sum += std::log(r.ours_us / r.best_us);
    it->second.n++;
    it->second.min = std::isnan(it->second.min) ? r.ours_us / r.best_us : std::max(it->second.min, r.ours_us / r.best_us);
  }
  for (const auto& a : regrets) {
    std::snprintf(line, sizeof line, "regret %-10s geomean %+.1f%%  worst %+.1f%%  (%d rows; chosen / fastest candidate)\n",
                  a.first.c_str(), 100.0 * (std::exp(a.second.log_sum / a.second.n) - 1.0), 100.0 * (a.second.min - 1.0),
                  a.second.n);
    os << line;
  }
  Correlations c = correlations(B.rows);
  std::snprintf(line, sizeof line, "spearman(predicted, measured): chosen plans %s over %d rows; with runners-up %s over %d points\n",
                fmt("%.3f", c.chosen).c_str(), c.chosen_points, fmt("%.3f", c.with_ru).c_str(),
                c.chosen_points + c.ru_points);
  os << line;
  if (c.ru_pairs) {
    std::snprintf(line, sizeof line, "chosen plan measured no slower than the runner-up in %d of %d rows\n", c.ru_pairs_right,
                  c.ru_pairs);
    os << line;
  }
  int mismatches = 0, errors = 0, unsupported = 0;
  for (const Row& r : B.rows) {
    mismatches += r.mismatch;
    errors += !r.error.empty();
    unsupported += r.unsupported;
  }
  os << "mismatches: " << mismatches << ", failed rows: " << errors;
  if (unsupported) os << ", not supported by DeepGEMM on this device (cuBLAS measured): " << unsupported;
  os << "\n";
  return os.str();
}

// ---- JSON output --------------------------------------------------------------------------------
std::string json_text(const Bench& B) {
  std::ostringstream out;
  std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  Correlations c = correlations(B.rows);
  out << "{\n  \"date\": " << jstr(date) << ",\n  \"device\": " << jstr(B.prop.name) << ",\n  \"sms\": "
      << B.prop.multiProcessorCount << ",\n  \"l2_bytes\": " << B.prop.l2CacheSize << ",\n  \"library\": "
      << jstr(dgemm_version_string()) << ",\n  \"seed\": " << B.first_seed << ",\n  \"reps\": " << B.opt.reps << ",\n  \"target_us\": " << jnum(B.opt.target_us)
      << ",\n  \"spearman_chosen\": " << jnum(c.chosen) << ",\n  \"spearman_with_runner_up\": " << jnum(c.with_ru)
      << ",\n  \"copy_tbps\": " << jnum(B.copy_tbps) << ",\n  \"shapes_not_run\": " << B.shapes_not_run << ",\n  \"runner_up_pairs\": " << c.ru_pairs << ",\n  \"runner_up_pairs_chosen_faster\": " << c.ru_pairs_right
      << ",\n  \"rows\": [";
  for (size_t i = 0; i < B.rows.size(); ++i) {
    const Row& r = B.rows[i];
    out << (i ? ",\n" : "\n") << "    {\"set\": " << jstr(r.shape.set) << ", \"m\": " << r.shape.m << ", \"n\": " << r.shape.n
        << ", \"k\": " << r.shape.k << ", \"epilogue\": " << jstr(epi_name(r.shape)) << ", \"dtype\": " << jstr(r.dtype)
        << ", \"layout\": " << jstr(r.layout) << ", \"ours_us\": " << jnum(r.ours_us) << ", \"ours_p25_us\": "
        << jnum(r.ours_p25) << ", \"ours_p75_us\": " << jnum(r.ours_p75) << ", \"ours_tflops\": "
        << jnum(r.flops / r.ours_us * 1e-6) << ", \"cublas_us\": " << jnum(r.cublas_us) << ", \"cublaslt_us\": "
        << jnum(r.lt_us) << ", \"cublas_tflops\": " << jnum(r.flops / r.best_cublas_us() * 1e-6)
        << ", \"ratio\": " << jnum(r.ratio()) << ", \"ours_gbps\": " << jnum(r.bytes / r.ours_us * 1e-3)
        << ", \"memory_bound\": " << (r.memory_bound ? "true" : "false") << ", \"kernel\": " << jstr(r.kernel)
        << ", \"family\": " << jstr(r.family) << ", \"predicted_us\": " << jnum(r.predicted_us)
        << ", \"runners_up0_predicted_us\": " << jnum(r.first_runner_up_predicted_us)
        << ", \"roofline_floor_us\": " << jnum(r.floor_us) << ", \"compute_floor_us\": " << jnum(r.compute_floor_us)
        << ", \"memory_floor_us\": " << jnum(r.memory_floor_us) << ", \"min_bytes\": " << jnum(r.min_bytes) << ", \"plan_ms\": "
        << jnum(r.plan_ms) << ", \"runner_up_kernel\": " << jstr(r.ru_kernel) << ", \"runner_up_predicted_us\": "
        << jnum(r.ru_predicted_us) << ", \"runner_up_us\": " << jnum(r.ru_us) << ", \"err_ours\": " << jnum(r.err_ours)
        << ", \"err_cublas\": " << jnum(r.err_cublas) << ", \"err_cublaslt\": " << jnum(r.err_lt)
        << ", \"err_runner_up\": " << jnum(r.err_ru) << ", \"nonfinite_ours\": " << r.nonfinite_ours
        << ", \"mismatch\": " << (r.mismatch ? "true" : "false") << ", \"unsupported\": "
        << (r.unsupported ? "true" : "false") << ", \"input_sets\": " << r.sets
        << ", \"best_kernel\": " << jstr(r.best_kernel) << ", \"best_us\": " << jnum(r.best_us) << ", \"candidates\": [";
    for (size_t c = 0; c < r.candidates.size(); ++c)
      out << (c ? ", " : "") << "{\"kernel\": " << jstr(r.candidates[c].first) << ", \"us\": " << jnum(r.candidates[c].second)
          << "}";
    out << "]"
        << ", \"launches_per_sample\": " << r.launches << ", \"timing\": " << jstr(r.timing) << ", \"error\": "
        << jstr(r.error) << ", \"notes\": " << jstr(r.notes) << "}";
  }
  out << "\n  ]\n}\n";
  return out.str();
}

// Writes text to a file; false (with a message) when it cannot.
bool write_file(const std::string& file, const std::string& text) {
  std::ofstream out(file);
  if (out) out << text;
  if (!out) std::fprintf(stderr, "deepgemm-bench: cannot write %s\n", file.c_str());
  return bool(out);
}

void write_json(const Bench& B, const std::string& file) { write_file(file, json_text(B)); }

// --render: a saved bench.json into the HTML report, with no GPU. 0, or 2 for a file that cannot be
// read or is not JSON.
int render_report(const Options& o) {
  std::ifstream in(o.render_file);
  if (!in) usage_error("cannot read --render file '" + o.render_file + "'");
  std::stringstream text;
  text << in.rdbuf();
  Json j;
  std::string err;
  if (!parse_json(text.str(), &j, &err) || !j.get("rows")) usage_error(o.render_file + ": not a bench.json (" + err + ")");
  if (!write_file(o.html_file, report_html(text.str()))) return 1;
  std::printf("deepgemm-bench: %s -> %s (%zu rows)\n", o.render_file.c_str(), o.html_file.c_str(), j.get("rows")->array.size());
  return 0;
}

// ---- --profile: our kernel alone, for ncu and compute-sanitizer ---------------------------------
int profile_one(Bench& B, const Shape& shape, const std::string& dtype, const std::string& layout) {
  const ElemType type = input_type(dtype);
  GemmShape gs;
  gs.m = shape.m;
  gs.n = shape.n;
  gs.k = shape.k;
  gs.b_transposed = layout[0] == 't';  // tn, tt
  gs.a_transposed = layout[1] == 't';  // tt, nt
  gs.type = type;
  gs.bias_gelu = shape.epilogue == EpilogueKind::BiasGelu;
  gs.quant = quant_of(dtype);
  // The operands (and FP8 scale tensors) a timed row of this dtype uses; one input set is enough.
  Operands ops = make_operands(B, shape, type, gs.quant);
  // D as the timed row writes it: e4m3 for fp8q, i32 for i8, bf16 for the other FP8 rows.
  const ElemType out = gs.quant == Quant::None        ? type
                       : gs.quant == Quant::Int8      ? ElemType::I32
                       : gs.quant == Quant::Fp8BlockQ ? ElemType::E4M3
                                                      : ElemType::BF16;
  DeviceBuffer d(size_t(shape.m) * shape.n * elem_size(out));
  OurPlan ours;
  make_plan(B.ctx, gs, B.opt.force_kernel.empty() ? nullptr : B.opt.force_kernel.c_str(), &ours);
  if (!ours.plan) {
    std::fprintf(stderr, "deepgemm-bench: %s\n", ours.error.c_str());
    return 1;
  }
  std::printf("profile %s %s %s: kernel %s, predicted %.1f us\n", shape_name(shape).c_str(), layout.c_str(),
              dtype.c_str(), ours.kernel.c_str(), ours.predicted_us);
  std::string err = execute(ours, ops, ops.a[0].ptr, ops.b[0].ptr, d.ptr, B.stream);  // warm-up, outside the range
  check_cuda(cudaStreamSynchronize(B.stream), "warm-up");
  check_cuda(cudaProfilerStart(), "cudaProfilerStart");
  if (err.empty()) err = execute(ours, ops, ops.a[0].ptr, ops.b[0].ptr, d.ptr, B.stream);
  check_cuda(cudaStreamSynchronize(B.stream), "profiled launch");
  check_cuda(cudaProfilerStop(), "cudaProfilerStop");
  if (!err.empty()) {
    std::fprintf(stderr, "deepgemm-bench: %s\n", err.c_str());
    return 1;
  }
  return 0;
}

// The output side without a GPU: rows made up here go through the table, the summary and the
// JSON writer, and the JSON is read back. Returns the number of failures.
int output_self_test() {
  int failures = 0;
  auto check = [&](bool ok, const char* what) {
    if (!ok) {
      std::printf("self-test FAILED: %s\n", what);
      ++failures;
    }
  };
  Bench B;
  std::snprintf(B.prop.name, sizeof B.prop.name, "%s", "Test \"GPU\"");
  const double pred[] = {100, 200, 300, 50}, meas[] = {110, 190, 320, 60};
  for (int i = 0; i < 4; ++i) {
    Row r;
    r.shape.m = 4096;
    r.shape.n = 4096;
    r.shape.k = 1024 * (i + 1);
    r.shape.set = (i == 0 || i == 3) ? "epilogue" : "seed";  // rows 0 and 3: plain and bias+GELU
    r.shape.epilogue = i == 3 ? EpilogueKind::BiasGelu : EpilogueKind::Plain;
    if (i == 3) r.shape.k = 1024;
    r.dtype = "bf16";
    r.layout = "tn";
    r.flops = 2.0 * 4096 * 4096 * double(r.shape.k);
    r.kernel = "sm90_128x256x64_s4_t384_p";
    r.predicted_us = pred[i];
    r.ours_us = meas[i];
    r.cublas_us = i == 3 ? kNaN : meas[i] * 1.1;
    r.lt_us = meas[i] * 1.2;
    if (i == 1) {
      r.ru_kernel = "sm80_128x128x32_s4_t256";
      r.ru_predicted_us = 400;
      r.ru_us = 380;
    }
    r.notes = i == 2 ? "a \"quoted\" note" : "";
    B.rows.push_back(r);
  }
  print_header();
  for (const Row& r : B.rows) print_row(r);
  std::string summary = summary_text(B);
  std::printf("%s", summary.c_str());
  check(summary.find("bias+gelu / plain = 0.545") != std::string::npos, "epilogue overhead line (60/110)");
  check(summary.find("chosen plan measured no slower than the runner-up in 1 of 1 rows") != std::string::npos,
        "runner-up agreement line");
  check(std::fabs(B.rows[0].ratio() - 1.1) < 1e-12 && std::fabs(B.rows[3].ratio() - 1.2) < 1e-12,
        "ratio = best cuBLAS / ours");

  std::string file = "deepgemm-bench-self-test.json";
  write_json(B, file);
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  in.close();
  std::remove(file.c_str());
  Json j;
  std::string err;
  bool parsed = parse_json(text.str(), &j, &err);
  if (!parsed) std::printf("JSON: %s\n", err.c_str());
  check(parsed, "the JSON output parses");
  const Json* rows = j.get("rows");
  check(rows && rows->array.size() == 4, "4 rows in the JSON");
  if (rows && rows->array.size() == 4) {
    check(rows->array[3].get("cublas_us")->type == Json::Type::Null, "NaN is written as null");
    check(std::fabs(rows->array[1].get("runner_up_us")->number - 380) < 1e-9, "runner_up_us");
    check(rows->array[2].get("notes")->string == "a \"quoted\" note", "escaped strings round-trip");
  }
  const Json* rho = j.get("spearman_chosen");
  check(rho && std::fabs(rho->number - 1.0) < 1e-9, "spearman_chosen = 1 for rank-identical rows");
  check(j.get("device") && j.get("device")->string == "Test \"GPU\"", "device name");
  std::string html = report_html("{\"rows\": [], \"notes\": \"</script><b>&\"}");
  check(html.find("__DEEPGEMM_BENCH_JSON__") == std::string::npos, "the report holds the data");
  check(html.find("\\u003c/script\\u003e\\u003cb\\u003e\\u0026") != std::string::npos &&
            html.find("</script><b>") == std::string::npos,
        "the data cannot close its script block");
  return failures;
}

// The plan-description reader against the real library: a plan on the CPU backend (no GPU
// needed) goes through make_plan, whose fields come from dgemm_plan_describe's JSON.
int library_self_test() {
  int failures = 0;
  dgemm_context_t ctx = nullptr;
  if (dgemm_context_create(DGEMM_DEVICE_CPU, 0, &ctx) != DGEMM_STATUS_SUCCESS) {
    std::printf("self-test FAILED: CPU context: %s\n", dgemm_last_error());
    return 1;
  }
  // Plain and bias + GELU bf16, then the FP8 / INT8 rows' plans (the CPU backend has every scaling).
  const Quant kinds[] = {Quant::None, Quant::None, Quant::Fp8Tensor, Quant::Fp8Block, Quant::Fp8BlockQ, Quant::Int8};
  for (int i = 0; i < 6; ++i) {
    const bool bias_gelu = i == 1;
    GemmShape gs;
    gs.m = 33;
    gs.n = 17;
    gs.k = 9;
    gs.bias_gelu = bias_gelu;
    gs.quant = kinds[i];
    OurPlan plan;
    try {
      make_plan(ctx, gs, nullptr, &plan);
    } catch (const CudaFailure& f) {  // a CPU plan asking for device workspace
      plan.error = f.what;
    }
    bool ok = plan.plan && plan.kernel == "cpu" && plan.family == "cpu" && std::isfinite(plan.predicted_us) &&
              plan.predicted_us > 0 && plan.uses_bias == bias_gelu;
    if (!ok) {
      std::printf("self-test FAILED: plan description of CPU plan %d (%s): kernel '%s', family '%s', predicted %g\n%s\n",
                  i, plan.error.c_str(), plan.kernel.c_str(), plan.family.c_str(), plan.predicted_us,
                  plan.description.c_str());
      ++failures;
    }
  }
  dgemm_context_destroy(ctx);
  return failures;
}

int run(int argc, char** argv) {
  Bench B;
  B.opt = parse_options(argc, argv);
  B.seed = B.opt.seed ? B.opt.seed
                      : static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()) % 1000000007u + 1;
  B.first_seed = B.seed;
  const uint64_t first_seed = B.seed;
  if (!B.opt.render_file.empty()) return render_report(B.opt);
  std::vector<Shape> shapes = collect_shapes(B.opt);

  int devices = 0;
  cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::printf("deepgemm-bench: no CUDA device (%s): nothing to measure, skipped\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return 77;
  }
  if (B.opt.device >= devices) usage_error("--device " + std::to_string(B.opt.device) + ": only " + std::to_string(devices) + " devices");
  check_cuda(cudaSetDevice(B.opt.device), "cudaSetDevice");
  check_cuda(cudaGetDeviceProperties(&B.prop, B.opt.device), "cudaGetDeviceProperties");
  dgemm_status_t st = dgemm_context_create(DGEMM_DEVICE_CUDA, B.opt.device, &B.ctx);
  if (st != DGEMM_STATUS_SUCCESS) {
    std::fprintf(stderr, "deepgemm-bench: a GPU is here but DeepGEMM cannot use it: %s: %s\n", dgemm_status_string(st),
                 dgemm_last_error());
    return 1;
  }
  check_cuda(cudaStreamCreateWithFlags(&B.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check_cuda(cudaEventCreate(&B.ev_start), "cudaEventCreate");
  check_cuda(cudaEventCreate(&B.ev_stop), "cudaEventCreate");

  if (B.opt.profile) {
    int rc = profile_one(B, shapes.front(), B.opt.dtypes.front(), B.opt.layouts.front());
    dgemm_context_destroy(B.ctx);
    return rc;
  }

  B.cublas = std::make_unique<Cublas>();
  if (!B.cublas->ok()) {
    std::fprintf(stderr, "deepgemm-bench: %s\n", B.cublas->error().c_str());
    return 1;
  }
  B.copy_tbps = copy_bandwidth_tbps(B.stream);
  std::printf("device-to-device copy: %.2f TB/s (bytes read + written, 1 GiB, median of 7): the HBM ceiling of the memory-bound rows\n",
              B.copy_tbps);
  std::printf("deepgemm-bench: %s (%d SMs, L2 %d MB), libdeepgemm %s, %d reps, ~%.0f us per sample, %s, --seed %llu\n",
              B.prop.name, B.prop.multiProcessorCount, B.prop.l2CacheSize >> 20, dgemm_version_string(), B.opt.reps,
              B.opt.target_us, B.opt.use_graph ? "CUDA-graph replays" : "back-to-back launches",
              static_cast<unsigned long long>(first_seed));
  std::printf("ratio = best of (cublasGemmEx, cublasLt) time / our time: > 1 means DeepGEMM is faster\n");
  print_header();

  int failures = 0;
  bool broken = false;
  auto start = std::chrono::steady_clock::now();
  for (const Shape& shape : shapes) {
    double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (B.opt.time_limit_s > 0 && elapsed_s > B.opt.time_limit_s) {
      ++B.shapes_not_run;
      continue;
    }
    for (const std::string& dtype : B.opt.dtypes) {
      if (broken) break;
      if (quant_of(dtype) != Quant::None && shape.epilogue != EpilogueKind::Plain) continue;  // plain GEMMs only
      ElemType type = input_type(dtype);
      try {
        Operands ops = make_operands(B, shape, type, quant_of(dtype));
        for (const std::string& layout : B.opt.layouts) {
          // cuBLASLt runs FP8 (and this benchmark INT8) only as TN: row-major D = A B^T.
          if (quant_of(dtype) != Quant::None && layout != "tn") continue;
          run_row(B, shape, type, dtype, layout, ops);
          print_row(B.rows.back());
        }
      } catch (const CudaFailure& f) {
        // A CUDA error may leave the context unusable (a sticky error): report and stop.
        std::fprintf(stderr, "deepgemm-bench: %s %s: CUDA failure: %s\n", shape_name(shape).c_str(), dtype.c_str(),
                     f.what.c_str());
        ++failures;
        cudaError_t sticky = cudaDeviceSynchronize();
        if (sticky != cudaSuccess) {
          std::fprintf(stderr, "deepgemm-bench: the CUDA context is broken (%s): stopping\n", cudaGetErrorString(sticky));
          broken = true;
        }
      }
    }
  }
  for (const Row& r : B.rows) failures += r.mismatch || !r.error.empty();
  std::string summary = summary_text(B);
  if (B.shapes_not_run) summary += "time limit: " + std::to_string(B.shapes_not_run) + " shapes not run\n";
  if (!B.opt.json_file.empty()) write_json(B, B.opt.json_file);
  if (!B.opt.html_file.empty()) write_file(B.opt.html_file, report_html(json_text(B)));
  if (!B.opt.summary_file.empty()) {
    std::ofstream out(B.opt.summary_file);
    out << summary;
  }
  std::printf("\n%s", summary.c_str());
  B.cublas.reset();
  cudaEventDestroy(B.ev_start);
  cudaEventDestroy(B.ev_stop);
  cudaStreamDestroy(B.stream);
  dgemm_context_destroy(B.ctx);
  return failures ? 1 : 0;
}

}  // namespace
}  // namespace bench

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--self-test") == 0) {
      int failures = bench::self_test() + bench::output_self_test() + bench::library_self_test();
      std::printf("%s\n", failures ? "self-test FAILED" : "all self-tests passed");
      return failures ? 1 : 0;
    }
    if (std::strcmp(argv[i], "--list") == 0) {
      for (const auto& kv : bench::embedded_shape_sets()) std::printf("== %s\n%s\n", kv.first.c_str(), kv.second.c_str());
      return 0;
    }
  }
  try {
    for (int i = 1; i < argc; ++i)
      if (std::strcmp(argv[i], "--grouped") == 0) return bench::run_grouped(argc, argv);
    return bench::run(argc, argv);
  } catch (const bench::CudaFailure& f) {
    std::fprintf(stderr, "deepgemm-bench: CUDA failure: %s\n", f.what.c_str());
    return 1;
  }
}
