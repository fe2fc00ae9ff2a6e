// `deepgemm run`: plans and executes one GEMM through the public C API (on the GPU when there is
// one, else on the CPU backend; DGEMM_1.1 scales through the *_ext calls), then prints a short
// summary (device, kernel, time, TFLOP/s, the relative error against the CPU oracle, PASS/FAIL),
// the plan's JSON first with --explain, or one JSON object with all of it with --json. The oracle
// is a second plan on a CPU context; large problems are checked on a random sample of rows,
// gathered into a smaller problem of the same kind.
#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "api/convert.hpp"
#include "api/scaling.hpp"
#include "core/error.hpp"
#include "core/float_convert.hpp"
#include "core/scaling.hpp"
#include "deepgemm/deepgemm.h"
#include "tools/cli_options.hpp"
#include "tools/commands.hpp"
#include "tools/json_lookup.hpp"

#ifdef DGEMM_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace dgemm::tools {
namespace {

// Throws the library's status and message when a call fails (main() turns the status into the
// exit code).
// A library handle released when it goes out of scope.
template <class Handle>
using Owned = std::unique_ptr<Handle, dgemm_status_t (*)(Handle*)>;

void check(dgemm_status_t st, const char* what) {
  if (st != DGEMM_STATUS_SUCCESS) {
    throw Error(static_cast<Status>(st), std::string(what) + " failed: " + dgemm_status_string(st) + ": " +
                                             dgemm_last_error());
  }
}

#ifdef DGEMM_WITH_CUDA
void cuda_check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
}
#endif

// A host buffer of `count` elements of type t.
struct HostBuffer {
  DType type = DType::F32;
  int64_t count = 0;
  std::vector<unsigned char> bytes;
  HostBuffer() = default;
  HostBuffer(DType t, int64_t n) : type(t), count(n), bytes(std::size_t(n) * dtype_size(t)) {}
  void* data() { return bytes.empty() ? nullptr : bytes.data(); }
  double get(int64_t i) const { return load_as_double(type, bytes.data(), i); }
  void set(int64_t i, double v) { store_from_double(type, bytes.data(), i, v, true); }
};

// Elements spanned by all batches of a stored rows x cols matrix.
int64_t span(const GemmProblem& p, int64_t rows, int64_t cols, int64_t ld, int64_t stride) {
  if (rows == 0 || cols == 0) return 0;
  return (p.batch_count - 1) * stride + p.offset(rows - 1, cols - 1, ld) + 1;
}

// Random values that are exact in the type: small integers for i8, uniform [-1, 1) otherwise.
void fill_random(HostBuffer& b, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  std::uniform_int_distribution<int> ints(-8, 8);
  for (int64_t i = 0; i < b.count; ++i) b.set(i, b.type == DType::I8 || b.type == DType::I32 ? ints(rng) : uni(rng));
}

// Random scales in [0.5, 2): exact in f32, and they keep the result's magnitude.
void fill_scales(HostBuffer& b, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> pos(0.5, 2.0);
  for (int64_t i = 0; i < b.count; ++i) b.set(i, pos(rng));
}

struct Operands {
  HostBuffer a, b, c, d, bias, scale;
  std::vector<int32_t> zero_point;
  HostBuffer a_scale, b_scale, d_scale;  // DGEMM_1.1 (f32); d_scale is written by the epilogue
};

// D as stored, or for a block-scaled D its value: D(i, j) times the scale of its 1 x 128 block.
struct OutputView {
  const GemmProblem& p;
  const HostBuffer& d;
  const ScaleDesc& d_scale_desc;
  const HostBuffer& d_scale;
  double get(int64_t batch, int64_t i, int64_t j) const {
    const double v = d.get(batch * p.stride_d + p.offset(i, j, p.ldd));
    if (!d_scale_desc.active()) return v;
    return v * d_scale.get(batch * d_scale_desc.stride + d_scale_desc.index(i, j));
  }
};

// Relative Frobenius error of D (rows `rows` of every batch) against the oracle's D (whose rows
// are those rows in order).
double relative_error(const OutputView& d, const std::vector<int64_t>& rows, const OutputView& ref) {
  const GemmProblem& p = d.p;
  double num = 0, den = 0;
  for (int64_t b = 0; b < p.batch_count; ++b) {
    for (std::size_t s = 0; s < rows.size(); ++s) {
      for (int64_t j = 0; j < p.n; ++j) {
        double got = d.get(b, rows[s], j);
        double want = ref.get(b, int64_t(s), j);
        if (std::isnan(got) != std::isnan(want)) return INFINITY;
        if (std::isnan(want)) continue;
        num += (got - want) * (got - want);
        den += want * want;
      }
    }
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

// Error budget per output type against an oracle that rounds once to f32 (float outputs) or to
// the same type (fp8 and integer outputs, where both sides round the same exact value).
double threshold_for(const GemmProblem& p) {
  switch (p.d_type) {
    // FP8 operands: the tensor cores sum a 128-K block's products narrower than f32 (the 1e-3 of
    // tests/gpu/test_sm90_8bit_gemm.cpp).
    case DType::F32:
      if (p.a_type == DType::F8E4M3 || p.a_type == DType::F8E5M2) return 1e-3;
      return p.a_type == DType::F32 ? 1e-6 : 1e-5;
    case DType::F16: return 2e-3;
    case DType::BF16: return 1e-2;
    case DType::F8E4M3: return 5e-2;
    case DType::F8E5M2: return 1e-1;
    case DType::I8: return 2e-2;  // ties may round differently in f32 (GPU) and f64 (oracle)
    case DType::I32: return p.is_integer() ? 1e-6 : 1e-6;
  }
  return 0;
}

// What one run measured, for the summary and the JSON.
struct RunReport {
  std::string plan_json, device;
  double plan_ms = 0, median_us = 0, tflops = 0;
  int samples = 0;
  bool checked = false;
  bool dequantized = false;  // a block-scaled D, compared as D times its scales
  double error = 0, threshold = 0;
  int64_t rows_checked = 0, rows = 0;
  // --amax-d: the amax the plan wrote and the oracle's; compared (relative, the threshold of D)
  // when every row was checked (amax_checked), NaN against NaN.
  bool amax = false, amax_checked = false;
  double amax_got = 0, amax_want = 0;
  bool amax_ok() const {
    if (!amax_checked) return true;
    if (std::isnan(amax_want) || std::isnan(amax_got)) return std::isnan(amax_want) && std::isnan(amax_got);
    return std::fabs(amax_got - amax_want) <= threshold * std::max(std::fabs(amax_want), 1e-30);
  }
  bool passed() const { return !checked || (error <= threshold && amax_ok()); }
};

std::string field(const std::string& json, const char* path) { return json_lookup(json, path).value_or("?"); }

void print_summary(const RunReport& r) {
  const std::string& j = r.plan_json;
  std::printf("problem   %s\n", field(j, "problem").c_str());
  std::printf("epilogue  %s\n", field(j, "epilogue").c_str());
  if (r.device == "cpu") {
    std::printf("device    CPU reference backend\n");
  } else {
    std::printf("device    %s (%s)\n", field(j, "hardware").c_str(), r.device.c_str());
  }
  std::string predicted = field(j, "chosen.predicted_us");
  std::printf("kernel    %s (family %s; predicted %s us; planned in %.1f ms)\n", field(j, "chosen.config.name").c_str(),
              field(j, "family").c_str(), predicted.c_str(), r.plan_ms);
  std::printf("time      %.2f us (median of %d)  %.2f TFLOP/s\n", r.median_us, r.samples, r.tflops);
  if (r.checked) {
    std::printf("error     %.2e relative Frobenius vs the CPU oracle, %lld of %lld rows%s (threshold %.1e)\n", r.error,
                static_cast<long long>(r.rows_checked), static_cast<long long>(r.rows),
                r.dequantized ? ", D dequantized with its block scales" : "", r.threshold);
    if (r.amax_checked) std::printf("amax_d    %.6g (oracle %.6g)\n", r.amax_got, r.amax_want);
    else if (r.amax) std::printf("amax_d    %.6g (not checked: the oracle ran sampled rows)\n", r.amax_got);
    std::printf("result    %s\n", r.passed() ? "PASS" : "FAIL");
  } else {
    std::printf("result    not checked (--check none or an empty output)\n");
  }
}

void print_json(const RunReport& r) {
  std::printf("{\"plan\": %s,\n \"plan_ms\": %.3f, \"device\": \"%s\", \"median_us\": %.3f, \"samples\": %d, "
              "\"tflops\": %.4f,\n \"check\": ",
              r.plan_json.c_str(), r.plan_ms, r.device.c_str(), r.median_us, r.samples, r.tflops);
  if (r.checked) {
    std::printf("{\"relative_error\": %.6e, \"threshold\": %.1e, \"rows_checked\": %lld, \"rows\": %lld",
                r.error, r.threshold, static_cast<long long>(r.rows_checked), static_cast<long long>(r.rows));
    // (NaN is not JSON: an amax of NaN is written as null.)
    auto num = [](double v) { return std::isnan(v) ? std::string("null") : std::to_string(v); };
    if (r.amax_checked)
      std::printf(", \"amax_d\": %s, \"amax_d_oracle\": %s", num(r.amax_got).c_str(), num(r.amax_want).c_str());
    std::printf("}");
  } else {
    std::printf("null");
  }
  std::printf(",\n \"result\": \"%s\"}\n", !r.checked ? "unchecked" : r.passed() ? "PASS" : "FAIL");
}

}  // namespace

int cmd_run(int argc, char** argv) {
  Flags f(argc, argv);
  if (f.get_bool("help")) {
    std::printf("usage: deepgemm run [flags]\n"
                "Plans and runs one GEMM, checks it against the CPU oracle and prints a short summary.\n"
                "Every failing GPU test case prints the command that reruns its problem on the tool's own\n"
                "random inputs (\"repro: deepgemm run ...\"; a \"# not expressible\" note names what no flag says).\n%s"
                "  --device auto|cpu|cuda[:N]   where to run (default auto: first GPU, else CPU)\n"
                "  --reps R --warmup W          timed and untimed executions (default 20, 3)\n"
                "  --check auto|full|sample|none  oracle comparison (auto: sample rows when large)\n"
                "  --seed S                     random inputs\n"
                "  --force-kernel NAME          a family (cpu, sm80, sm90, small_m) or a configuration name\n"
                "                               as --explain prints it (measuring-only ones included)\n"
                "  --autotune                   time the planner's best few candidates, keep the fastest\n"
                "  --explain                    print the plan's JSON (the choice, runners-up, rejections) first\n"
                "  --json                       print one JSON object (plan, time, check) instead of the summary\n"
                "%s"
                "  (run fills A's and B's scales with random values in [0.5, 2); a block-scaled D is checked\n"
                "  dequantized: each value times its block's scale, against the oracle's)\n"
                "%s",
                gemm_options_help(), scaling_options_help(), exit_codes_help());
    return 0;
  }
  GemmOptions opt = parse_gemm_options(f);
  const ScalingOptions scaling_opt = parse_scaling_options(f);
  const std::string device = f.get("device", "auto");
  const int reps = int(f.get_int("reps", 20, 1, INT_MAX));
  const int warmup = int(f.get_int("warmup", 3, 0, INT_MAX));
  const std::string check_mode = f.get_choice("check", "auto", {"auto", "full", "sample", "none"});
  const uint64_t seed = uint64_t(f.get_int("seed", 1, 0));
  const std::string force = f.get("force-kernel", "");
  const bool autotune = f.get_bool("autotune");
  const bool explain = f.get_bool("explain");
  const bool as_json = f.get_bool("json");
  f.check_all_used();

  dgemm_device_kind_t kind = DGEMM_DEVICE_AUTO;
  int index = 0;
  parse_device(device, &kind, &index);

  dgemm_context_t ctx = nullptr;
  check(dgemm_context_create(kind, index, &ctx), "dgemm_context_create");
  // Handles are released on every way out, errors included (the sanitizer tier checks for leaks).
  const Owned<dgemm_context> ctx_owner(ctx, dgemm_context_destroy);
  dgemm_device_kind_t actual = DGEMM_DEVICE_CPU;
  dgemm_context_device(ctx, &actual, &index);
  const bool on_gpu = actual == DGEMM_DEVICE_CUDA;

  dgemm_plan_options_t popt;
  dgemm_plan_options_init(&popt);
  if (!force.empty()) popt.force_kernel = force.c_str();
  if (autotune) popt.flags |= DGEMM_PLAN_AUTOTUNE;
  dgemm_plan_t plan = nullptr;
  const dgemm_scaling_t scaling = scaling_opt.for_problem(opt.problem);
  const dgemm_ext_header_t* plan_ext = scaling_opt.active ? &scaling.header : nullptr;
  auto t0 = std::chrono::steady_clock::now();
  check(dgemm_create_plan_ext(ctx, &opt.problem, &opt.epilogue, &popt, plan_ext, &plan), "dgemm_create_plan");
  const Owned<dgemm_plan> plan_owner(plan, dgemm_destroy_plan);
  double plan_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  size_t desc_size = 0;
  dgemm_plan_describe(plan, nullptr, 0, &desc_size);
  std::string desc(desc_size, '\0');
  dgemm_plan_describe(plan, desc.data(), desc.size(), nullptr);
  desc.resize(desc_size ? desc_size - 1 : 0);
  if (explain && !as_json) std::printf("%s\n", desc.c_str());

  // The same validation the library did, to size the buffers from resolved leading dimensions.
  GemmProblem p = api::convert_problem(&opt.problem);
  Epilogue e = api::convert_epilogue(&opt.epilogue, p);
  api::apply_scaling(plan_ext, p, e);

  std::mt19937_64 rng(seed);
  Operands h;
  h.a = HostBuffer(p.a_type, span(p, p.a_rows(), p.a_cols(), p.lda, p.stride_a));
  h.b = HostBuffer(p.b_type, span(p, p.b_rows(), p.b_cols(), p.ldb, p.stride_b));
  h.d = HostBuffer(p.d_type, span(p, p.m, p.n, p.ldd, p.stride_d));
  fill_random(h.a, rng);
  fill_random(h.b, rng);
  if (e.reads_c()) {
    h.c = HostBuffer(p.c_type, span(p, p.m, p.n, p.ldc, p.stride_c));
    fill_random(h.c, rng);
  }
  if (e.bias_mode != VectorMode::None) {
    h.bias = HostBuffer(e.bias_type, e.bias_mode == VectorMode::PerRow ? p.m : p.n);
    fill_random(h.bias, rng);
  }
  if (e.scale_mode != VectorMode::None) {
    int64_t len = e.scale_mode == VectorMode::PerTensor ? 1 : e.scale_mode == VectorMode::PerRow ? p.m : p.n;
    h.scale = HostBuffer(DType::F32, len);
    fill_scales(h.scale, rng);
    if (e.zero_point) {
      h.zero_point.resize(std::size_t(len));
      for (auto& z : h.zero_point) z = int32_t(rng() % 9) - 4;
    }
  }
  // The scale tensors as the plan sized them (none: 0 elements, a null pointer).
  auto scale_elements = [&](dgemm_scale_tensor_t which) {
    int64_t elements = 0;
    check(dgemm_plan_scale_shape(plan, which, nullptr, nullptr, nullptr, &elements), "dgemm_plan_scale_shape");
    return elements;
  };
  h.a_scale = HostBuffer(DType::F32, scale_elements(DGEMM_SCALE_TENSOR_A));
  h.b_scale = HostBuffer(DType::F32, scale_elements(DGEMM_SCALE_TENSOR_B));
  h.d_scale = HostBuffer(DType::F32, scale_elements(DGEMM_SCALE_TENSOR_D));
  fill_scales(h.a_scale, rng);
  fill_scales(h.b_scale, rng);
  std::memset(h.d.data(), 0xFF, h.d.bytes.size());  // poison: unwritten elements show up as NaN / -1
  const bool want_amax = e.amax_d;
  float amax_host = -1.0f;  // poison: no amax is negative
  if (!h.d_scale.bytes.empty()) std::memset(h.d_scale.data(), 0xFF, h.d_scale.bytes.size());  // no D scales: no buffer

  dgemm_args_t args;
  dgemm_args_init(&args);
  dgemm_scale_args_t scale_args;
  dgemm_scale_args_init(&scale_args);
  const dgemm_ext_header_t* exec_ext = scaling_opt.active ? &scale_args.header : nullptr;
  size_t ws_size = 0;
  check(dgemm_plan_workspace_size(plan, &ws_size), "dgemm_plan_workspace_size");
  std::vector<double> times_us;

  if (on_gpu) {
#ifdef DGEMM_WITH_CUDA
    cuda_check(cudaSetDevice(index), "cudaSetDevice");
    auto upload = [](HostBuffer& hb) -> void* {
      if (hb.bytes.empty()) return nullptr;
      void* dptr = nullptr;
      cuda_check(cudaMalloc(&dptr, hb.bytes.size()), "cudaMalloc");
      cuda_check(cudaMemcpy(dptr, hb.bytes.data(), hb.bytes.size(), cudaMemcpyHostToDevice), "cudaMemcpy");
      return dptr;
    };
    void *da = upload(h.a), *db = upload(h.b), *dc = upload(h.c), *dd = upload(h.d), *dbias = upload(h.bias),
         *dscale = upload(h.scale), *dzp = nullptr, *dws = nullptr, *da_scale = upload(h.a_scale),
         *db_scale = upload(h.b_scale), *dd_scale = upload(h.d_scale);
    if (!h.zero_point.empty()) {
      cuda_check(cudaMalloc(&dzp, h.zero_point.size() * 4), "cudaMalloc");
      cuda_check(cudaMemcpy(dzp, h.zero_point.data(), h.zero_point.size() * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
    }
    if (ws_size) cuda_check(cudaMalloc(&dws, ws_size), "cudaMalloc(workspace)");
    args.bias = dbias;
    args.scale = static_cast<const float*>(dscale);
    args.zero_point = static_cast<const int32_t*>(dzp);
    scale_args.a_scale = da_scale;
    scale_args.b_scale = db_scale;
    scale_args.d_scale = dd_scale;
    float* damax = nullptr;
    if (want_amax) {
      cuda_check(cudaMalloc(reinterpret_cast<void**>(&damax), sizeof(float)), "cudaMalloc(amax_d)");
      cuda_check(cudaMemcpy(damax, &amax_host, sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy(amax_d)");
      scale_args.amax_d = damax;
    }
    cudaStream_t stream;
    cuda_check(cudaStreamCreate(&stream), "cudaStreamCreate");
    cudaEvent_t start, stop;
    cuda_check(cudaEventCreate(&start), "cudaEventCreate");
    cuda_check(cudaEventCreate(&stop), "cudaEventCreate");
    for (int i = 0; i < warmup + reps; ++i) {
      cuda_check(cudaEventRecord(start, stream), "cudaEventRecord");
      check(dgemm_execute_ext(plan, da, db, dc, dd, &args, exec_ext, dws, ws_size, stream), "dgemm_execute");
      cuda_check(cudaEventRecord(stop, stream), "cudaEventRecord");
      cuda_check(cudaEventSynchronize(stop), "cudaEventSynchronize");
      float ms = 0;
      cuda_check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
      if (i >= warmup) times_us.push_back(ms * 1e3);
    }
    cuda_check(cudaGetLastError(), "kernel");
    cuda_check(cudaMemcpy(h.d.data(), dd, h.d.bytes.size(), cudaMemcpyDeviceToHost), "cudaMemcpy(D)");
    if (dd_scale)
      cuda_check(cudaMemcpy(h.d_scale.data(), dd_scale, h.d_scale.bytes.size(), cudaMemcpyDeviceToHost),
                 "cudaMemcpy(D scales)");
    if (damax) cuda_check(cudaMemcpy(&amax_host, damax, sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy(amax_d)");
    for (void* ptr : {da, db, dc, dd, dbias, dscale, dzp, dws, da_scale, db_scale, dd_scale, static_cast<void*>(damax)})
      cudaFree(ptr);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaStreamDestroy(stream);
#endif
  } else {
    args.bias = h.bias.data();
    args.scale = static_cast<const float*>(h.scale.data());
    args.zero_point = h.zero_point.empty() ? nullptr : h.zero_point.data();
    scale_args.a_scale = h.a_scale.data();
    scale_args.b_scale = h.b_scale.data();
    scale_args.d_scale = h.d_scale.data();
    if (want_amax) scale_args.amax_d = &amax_host;
    std::vector<unsigned char> ws(ws_size);
    int cpu_reps = p.flops() > 1e10 ? 1 : reps;  // the reference backend is slow on big problems
    for (int i = 0; i < (p.flops() > 1e10 ? 0 : warmup) + cpu_reps; ++i) {
      auto s = std::chrono::steady_clock::now();
      check(dgemm_execute_ext(plan, h.a.data(), h.b.data(), h.c.data(), h.d.data(), &args, exec_ext, ws.data(), ws_size,
                              nullptr),
            "dgemm_execute");
      double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - s).count();
      if (i >= (p.flops() > 1e10 ? 0 : warmup)) times_us.push_back(us);
    }
  }
  std::sort(times_us.begin(), times_us.end());
  double median_us = times_us[times_us.size() / 2];
  double tflops = p.flops() / (median_us * 1e-6) / 1e12;

  RunReport report;
  report.plan_json = desc;
  report.plan_ms = plan_ms;
  report.median_us = median_us;
  report.samples = int(times_us.size());
  report.tflops = tflops;
  report.device = on_gpu ? "cuda:" + std::to_string(index) : "cpu";
  int rc = 0;
  if (check_mode != "none" && !p.empty_output()) {
    // Oracle problem: the chosen rows of op(A) (all rows when small) in the same order, op N,
    // packed; float outputs rounded once to f32 so the error is measured against exact math.
    std::vector<int64_t> rows;
    bool sample = check_mode == "sample" || (check_mode == "auto" && p.flops() > 4e9);
    if (sample) {
      std::uniform_int_distribution<int64_t> pick(0, p.m - 1);
      for (int i = 0; i < 64; ++i) rows.push_back(pick(rng));
      std::sort(rows.begin(), rows.end());
      rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    } else {
      for (int64_t i = 0; i < p.m; ++i) rows.push_back(i);
    }
    dgemm_problem_t rp = opt.problem;
    rp.m = int64_t(rows.size());
    rp.op_a = DGEMM_OP_N;
    rp.lda = rp.ldc = rp.ldd = 0;
    bool float_out = p.d_type == DType::F32 || p.d_type == DType::F16 || p.d_type == DType::BF16;
    if (float_out) rp.d_type = DGEMM_DTYPE_F32;
    GemmProblem rq;
    {
      dgemm_problem_t tmp = rp;
      tmp.stride_a = tmp.stride_c = tmp.stride_d = 0;
      tmp.batch_count = 1;
      rq = api::convert_problem(&tmp);  // resolves the packed leading dimensions
      rp.stride_a = rq.a_rows() * rq.a_cols();
      rp.stride_c = rp.stride_d = rq.m * rq.n;
      if (p.stride_a == 0) rp.stride_a = 0;  // keep broadcasts
      if (p.stride_c == 0) rp.stride_c = 0;
      rq = api::convert_problem(&rp);
    }
    HostBuffer ra(p.a_type, span(rq, rq.a_rows(), rq.a_cols(), rq.lda, rq.stride_a));
    HostBuffer rc_buf(p.c_type, e.reads_c() ? span(rq, rq.m, rq.n, rq.ldc, rq.stride_c) : 0);
    HostBuffer rbias = h.bias, rscale = h.scale;
    std::vector<int32_t> rzp = h.zero_point;
    for (int64_t b = 0; b < p.batch_count; ++b) {
      for (std::size_t s = 0; s < rows.size(); ++s) {
        int64_t i = rows[s];
        if (b == 0 || rq.stride_a != 0) {
          for (int64_t kk = 0; kk < p.k; ++kk) {
            int64_t src = b * p.stride_a + (p.op_a == Op::N ? p.offset(i, kk, p.lda) : p.offset(kk, i, p.lda));
            ra.set(b * rq.stride_a + rq.offset(int64_t(s), kk, rq.lda), h.a.get(src));
          }
        }
        if (e.reads_c() && (b == 0 || rq.stride_c != 0)) {
          for (int64_t j = 0; j < p.n; ++j)
            rc_buf.set(b * rq.stride_c + rq.offset(int64_t(s), j, rq.ldc), h.c.get(b * p.stride_c + p.offset(i, j, p.ldc)));
        }
      }
    }
    if (e.bias_mode == VectorMode::PerRow) {
      rbias = HostBuffer(e.bias_type, int64_t(rows.size()));
      for (std::size_t s = 0; s < rows.size(); ++s) rbias.set(int64_t(s), h.bias.get(rows[s]));
    }
    if (e.scale_mode == VectorMode::PerRow) {
      rscale = HostBuffer(DType::F32, int64_t(rows.size()));
      rzp.assign(rows.size(), 0);
      for (std::size_t s = 0; s < rows.size(); ++s) {
        rscale.set(int64_t(s), h.scale.get(rows[s]));
        if (!h.zero_point.empty()) rzp[s] = h.zero_point[std::size_t(rows[s])];
      }
      if (h.zero_point.empty()) rzp.clear();
    }
    // Input scales of the chosen rows: B's and a per-tensor A scale as they are; A's per-row
    // ones gathered, a 128 x 128 block's as a 1 x 128 scale per row (the same factor per K block).
    dgemm_scaling_t ref_scaling = scaling_opt.for_problem(rp);
    HostBuffer ra_scale = h.a_scale;
    if (p.a_scale.active() && p.a_scale.mode != ScaleMode::PerTensor) {
      const bool outer = p.a_scale.mode == ScaleMode::OuterVec;
      ref_scaling.a_scale.mode = outer ? DGEMM_SCALE_OUTER_VEC : DGEMM_SCALE_VEC128;
      ref_scaling.a_scale.layout = DGEMM_SCALE_MN_MAJOR;
      ref_scaling.a_scale.ld = 0;
      const int64_t k_blocks = p.a_scale.cols(p.k), n_rows = int64_t(rows.size());
      ra_scale = HostBuffer(DType::F32, n_rows * k_blocks);  // packed MN-major, shared by the batches as A's
      for (int64_t c = 0; c < k_blocks; ++c)
        for (int64_t s = 0; s < n_rows; ++s)
          ra_scale.set(s + c * n_rows, h.a_scale.get(p.a_scale.index(rows[std::size_t(s)], c * kScaleBlock)));
    }
    Epilogue ref_e = e;  // with the oracle's D scale tensor, resolved
    api::apply_scaling(plan_ext ? &ref_scaling.header : nullptr, rq, ref_e);
    HostBuffer rd(rq.d_type, span(rq, rq.m, rq.n, rq.ldd, rq.stride_d));
    HostBuffer rd_scale(DType::F32, ref_e.d_scale.extent(rq.m, rq.n, rq.batch_count));
    dgemm_context_t cpu = nullptr;
    check(dgemm_context_create(DGEMM_DEVICE_CPU, 0, &cpu), "dgemm_context_create(cpu)");
    const Owned<dgemm_context> cpu_owner(cpu, dgemm_context_destroy);
    dgemm_plan_t ref_plan = nullptr;
    check(dgemm_create_plan_ext(cpu, &rp, &opt.epilogue, nullptr, plan_ext ? &ref_scaling.header : nullptr, &ref_plan),
          "dgemm_create_plan(oracle)");
    const Owned<dgemm_plan> ref_plan_owner(ref_plan, dgemm_destroy_plan);
    dgemm_args_t rargs;
    dgemm_args_init(&rargs);
    rargs.bias = rbias.data();
    rargs.scale = static_cast<const float*>(rscale.data());
    rargs.zero_point = rzp.empty() ? nullptr : rzp.data();
    dgemm_scale_args_t ref_scale_args;
    dgemm_scale_args_init(&ref_scale_args);
    ref_scale_args.a_scale = ra_scale.data();
    ref_scale_args.b_scale = h.b_scale.data();
    ref_scale_args.d_scale = rd_scale.data();
    float ref_amax = -1.0f;
    if (want_amax) ref_scale_args.amax_d = &ref_amax;
    size_t ref_ws_size = 0;
    check(dgemm_plan_workspace_size(ref_plan, &ref_ws_size), "dgemm_plan_workspace_size(oracle)");
    std::vector<unsigned char> ref_ws(ref_ws_size);
    check(dgemm_execute_ext(ref_plan, ra.data(), h.b.data(), rc_buf.data(), rd.data(), &rargs,
                            exec_ext ? &ref_scale_args.header : nullptr, ref_ws.data(), ref_ws_size, nullptr),
          "dgemm_execute(oracle)");
    report.checked = true;
    report.dequantized = e.d_scale.active();
    report.error = relative_error({p, h.d, e.d_scale, h.d_scale}, rows, {rq, rd, ref_e.d_scale, rd_scale});
    report.threshold = threshold_for(p);
    report.rows_checked = int64_t(rows.size());
    report.rows = p.m;
    report.amax = want_amax;
    report.amax_got = amax_host;
    report.amax_checked = want_amax && !sample;  // the oracle's amax covers the rows it computed
    report.amax_want = ref_amax;
    rc = report.passed() ? kExitOk : kExitCheckFailed;
  }
  if (as_json) {
    print_json(report);
  } else {
    print_summary(report);
  }
  return rc;
}

}  // namespace dgemm::tools
