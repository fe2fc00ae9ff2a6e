// deepgemm-bench --grouped: mixture-of-experts GEMMs (G experts sharing N x K, uneven tokens per
// expert) in the contiguous and masked layouts of deepgemm.h, timed against what a user has
// otherwise, on the same device buffers, interleaved (the method of bench/README.md):
//   ours         one grouped plan (DGEMM_EXT_GROUPED), the row array in device memory;
//   ours_many    dgemm_create_plan_many: one of our single-GEMM plans per expert, in one call;
//   cublas_loop  a loop of cublasGemmEx, one per expert (what most MoE code did before grouped GEMMs);
//   cublas_grp   cublasGemmGroupedBatchedEx, cuBLAS's own grouped GEMM.
// Every contender computes exactly the valid rows' results and is checked once against cuBLAS's
// f32 product per expert before timing. A contender that cannot run the problem (our grouped
// plan before a GPU family runs grouped problems) is reported "not supported" with the reason,
// and the rest of the row is still measured. TFLOP/s counts the valid rows only (2 x rows x N x K).
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
};

const char* kGroupedUsage =
    "usage: deepgemm-bench --grouped [options]\n"
    "  --layout LIST     contiguous, masked (default both)\n"
    "  --groups LIST     experts per GEMM (default 8,32)\n"
    "  --tokens LIST     mean tokens per expert (default 64,256,1024); the load is uneven (--skew)\n"
    "  --nk LIST         NxK of each expert's weight (default 4096x7168,7168x2048: DeepSeek-V3)\n"
    "  --align A         contiguous layout: each expert's rows padded to a multiple of A (default 128)\n"
    "  --skew S          sigma of the log-normal load per expert (default 0.6; 0 = even)\n"
    "  --force-kernel C  our grouped plan uses configuration C (e.g. sm90_64x128x64_s4_t256_b2_p)\n"
    "  --reps R, --quick, --no-graph, --verify-only, --json FILE, --summary FILE, --seed S,\n"
    "  --time-limit S, --device I   as in the single-GEMM mode\n"
    "exit status: 0 all right (a 'not supported' contender is reported, not a failure), 1 a failure\n"
    "or a result mismatch, 2 bad usage, 77 no GPU\n";

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

// One problem of the sweep and what it needs on the device.
struct Problem {
  std::string layout;
  int64_t n = 0, k = 0, groups = 0, tokens = 0;
  std::vector<int32_t> counts;   // valid rows per expert
  std::vector<int32_t> rows;     // what the plan reads: G + 1 offsets or G counts
  std::vector<int64_t> first;    // row of D where expert g's valid rows start (within its slot for masked)
  int64_t m = 0;                 // rows of A / D (contiguous) or of each slot (masked)
  int64_t valid_rows = 0;
  bool masked() const { return layout == "masked"; }
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
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  std::vector<double> w(groups);
  double sum = 0;
  for (double& x : w) sum += (x = std::exp(o.skew * z(rng)));
  for (int64_t g = 0; g < groups; ++g) {
    p.counts.push_back(int32_t(std::llround(double(groups * tokens) * w[g] / sum)));
    p.valid_rows += p.counts.back();
  }
  auto round_up = [](int64_t v, int64_t a) { return (v + a - 1) / a * a; };
  if (p.masked()) {
    // A fixed slot per expert, as a decode step under a CUDA graph has: room for the busiest one.
    p.m = round_up(std::max<int64_t>(1, *std::max_element(p.counts.begin(), p.counts.end())), 128);
    p.rows = p.counts;
    p.first.assign(groups, 0);
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

struct GroupedRow {
  Problem prob;
  double flops = 0;
  double ours_us = kNaN, many_us = kNaN, loop_us = kNaN, cublas_grp_us = kNaN;
  double err_max = kNaN;          // the largest relative error of ours over the experts
  unsigned long long nonfinite = 0;
  bool mismatch = false;
  std::string kernel, many_kernels;
  std::string ours_status;        // "" = measured; else why ours did not run ("not supported: ...")
  std::string error, notes;
  int launches = 0;
  std::string timing;
  int min_count = 0, max_count = 0;

  double best_cublas() const {
    if (std::isnan(loop_us)) return cublas_grp_us;
    if (std::isnan(cublas_grp_us)) return loop_us;
    return std::min(loop_us, cublas_grp_us);
  }
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

// A grouped plan (null + the reason when the context cannot run grouped problems).
dgemm_plan_t grouped_plan(dgemm_context_t ctx, const Problem& pr, int64_t align, const std::string& force,
                          std::string* why) {
  dgemm_problem_t p = bf16_problem(pr.m, pr.n, pr.k);
  p.batch_count = pr.groups;
  p.stride_b = pr.n * pr.k;
  if (pr.masked()) {
    p.stride_a = pr.m * pr.k;
    p.stride_d = pr.m * pr.n;
  }
  dgemm_grouped_t g;
  dgemm_grouped_init(&g);
  g.layout = pr.masked() ? DGEMM_GROUP_MASKED : DGEMM_GROUP_CONTIGUOUS;
  g.m_alignment = pr.masked() ? 1 : align;
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

void run_grouped_row(GroupedBench& B, const Problem& pr) {
  GroupedRow row;
  row.prob = pr;
  row.flops = 2.0 * double(pr.valid_rows) * double(pr.n) * double(pr.k);
  row.min_count = *std::min_element(pr.counts.begin(), pr.counts.end());
  row.max_count = *std::max_element(pr.counts.begin(), pr.counts.end());
  const size_t es = 2;  // bf16
  const ElemType t = ElemType::BF16;

  DeviceBuffer a(size_t(pr.a_elems()) * es), b(size_t(pr.groups * pr.n * pr.k) * es);
  DeviceBuffer ref(size_t(pr.d_elems()) * sizeof(float));
  check_int(fill_random(a.ptr, size_t(pr.a_elems()), t, B.seed++, 1.0f, B.stream), "fill A");
  check_int(fill_random(b.ptr, size_t(pr.groups * pr.n * pr.k), t, B.seed++, 1.0f, B.stream), "fill B");
  DeviceBuffer rows_dev(pr.rows.size() * sizeof(int32_t)), status_dev(sizeof(uint32_t));
  check_cuda(cudaMemcpyAsync(rows_dev.ptr, pr.rows.data(), pr.rows.size() * sizeof(int32_t), cudaMemcpyHostToDevice,
                             B.stream), "row array");
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
  // The reference: cuBLAS's f32 product per expert.
  for (int64_t g = 0; g < pr.groups; ++g) {
    if (pr.counts[g] == 0) continue;
    const std::string err = B.cublas->gemm_ex_f32(shape_of(g), at(a, pr.a_offset(g), es), at(b, g * pr.n * pr.k, es),
                                                  reinterpret_cast<float*>(at(ref, pr.d_offset(g), 4)), B.stream);
    if (!err.empty()) throw CudaFailure{"reference " + err};
  }

  std::vector<std::unique_ptr<Contender>> contenders;
  std::vector<std::unique_ptr<DeviceBuffer>> outputs;
  auto add = [&](const std::string& name, std::function<std::string(void* D)> fn) {
    outputs.push_back(std::make_unique<DeviceBuffer>(size_t(pr.d_elems()) * es));
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
  grouped.p = grouped_plan(B.ctx, pr, B.opt.align, B.opt.force_kernel, &row.ours_status);
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
      return after(dgemm_execute_ext(grouped.p, a.ptr, b.ptr, nullptr, D, nullptr, &ga, ours_workspace->ptr, ours_ws,
                                     B.stream),
                   "dgemm_execute_ext");
    });
  }

  // ours_many: one single-GEMM plan per expert with rows, planned once, run in one call.
  std::vector<int64_t> busy;  // experts with rows
  for (int64_t g = 0; g < pr.groups; ++g)
    if (pr.counts[g] > 0) busy.push_back(g);
  std::vector<dgemm_problem_t> problems;
  for (int64_t g : busy) problems.push_back(bf16_problem(pr.counts[g], pr.n, pr.k));
  std::vector<const void*> a_ptrs, b_ptrs;
  for (int64_t g : busy) {
    a_ptrs.push_back(at(a, pr.a_offset(g), es));
    b_ptrs.push_back(at(b, g * pr.n * pr.k, es));
  }
  if (!busy.empty() &&
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
      for (int64_t g : busy) d_ptrs.push_back(static_cast<char*>(D) + size_t(pr.d_offset(g)) * es);
      return after(dgemm_execute_many(many.p, a_ptrs.data(), b_ptrs.data(), nullptr, d_ptrs.data(), nullptr,
                                      workspace->ptr, ws, B.stream),
                   "dgemm_execute_many");
    });
  } else if (!busy.empty()) {
    row.notes += std::string("ours_many not planned: ") + dgemm_last_error() + "; ";
  }

  // cuBLAS: a loop of GemmEx, and its grouped GEMM (device arrays of pointers, made once).
  add("cublas_loop", [&](void* D) {
    for (int64_t g : busy) {
      std::string err = B.cublas->gemm_ex(shape_of(g), at(a, pr.a_offset(g), es), at(b, g * pr.n * pr.k, es),
                                          static_cast<char*>(D) + size_t(pr.d_offset(g)) * es, B.stream);
      if (!err.empty()) return err;
    }
    return std::string();
  });
  std::vector<int> busy_rows;
  for (int64_t g : busy) busy_rows.push_back(pr.counts[g]);
  DeviceBuffer ptr_arrays(3 * std::max<size_t>(1, busy.size()) * sizeof(void*));
  std::vector<std::unique_ptr<DeviceBuffer>> grp_out_ptrs;  // one D pointer array per output buffer
  if (!busy.empty()) {
    std::vector<const void*> host(a_ptrs);
    host.insert(host.end(), b_ptrs.begin(), b_ptrs.end());
    check_cuda(cudaMemcpyAsync(ptr_arrays.ptr, host.data(), host.size() * sizeof(void*), cudaMemcpyHostToDevice, B.stream),
               "pointer arrays");
    // The D pointers depend on the contender's output buffer: written once, right now.
    outputs.push_back(std::make_unique<DeviceBuffer>(size_t(pr.d_elems()) * es));
    void* D = outputs.back()->ptr;
    std::vector<void*> d_ptrs;
    for (int64_t g : busy) d_ptrs.push_back(static_cast<char*>(D) + size_t(pr.d_offset(g)) * es);
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
    check_cuda(cudaMemsetAsync(c->out, 0xFF, size_t(pr.d_elems()) * es, B.stream), "poison D");
    c->error = c->launch(0);
    if (!c->error.empty()) continue;
    double worst = 0;
    unsigned long long nonfinite = 0;
    for (int64_t g : busy) {
      Comparison cmp;
      check_int(compare(static_cast<char*>(c->out) + size_t(pr.d_offset(g)) * es, t,
                        reinterpret_cast<const float*>(at(ref, pr.d_offset(g), 4)), size_t(pr.counts[g]) * pr.n,
                        B.stream, &cmp),
                "compare");
      worst = std::max(worst, cmp.rel_error);
      nonfinite += cmp.nonfinite;
    }
    c->check.rel_error = worst;
    c->check.nonfinite = nonfinite;
    c->checked = true;
    const bool bad = nonfinite > 0 || !(worst <= 1e-2);
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
      else row.cublas_grp_us = med;
    }
  }
  B.rows.push_back(row);
}

std::string row_name(const Problem& p) {
  return std::to_string(p.n) + "x" + std::to_string(p.k) + " G=" + std::to_string(p.groups) + " t=" +
         std::to_string(p.tokens);
}

void print_grouped_header() {
  std::printf("%-10s %-24s %7s %6s %9s %7s %9s %9s %9s %7s %7s %8s  %s\n", "layout", "NxK G tokens", "rows", "m",
              "ours_us", "TFLOPs", "many_us", "loop_us", "cublasG", "vsLoop", "vsGrp", "err", "status / kernel");
}

void print_grouped_row(const GroupedRow& r) {
  const double tf = r.flops / r.ours_us * 1e-6;
  // The full reason is in the summary and the JSON; the table keeps one line per row.
  const std::string status = r.ours_status.empty() ? r.kernel : "ours " + r.ours_status.substr(0, 60) + "...";
  std::printf("%-10s %-24s %7lld %6lld %9s %7s %9s %9s %9s %7s %7s %8s  %s%s%s\n", r.prob.layout.c_str(),
              row_name(r.prob).c_str(), (long long)r.prob.valid_rows, (long long)r.prob.m,
              fmt("%.1f", r.ours_us).c_str(), fmt("%.1f", tf).c_str(), fmt("%.1f", r.many_us).c_str(),
              fmt("%.1f", r.loop_us).c_str(), fmt("%.1f", r.cublas_grp_us).c_str(),
              fmt("%.3f", r.loop_us / r.ours_us).c_str(), fmt("%.3f", r.cublas_grp_us / r.ours_us).c_str(),
              fmt("%.1e", r.err_max).c_str(), status.c_str(), r.mismatch ? "  MISMATCH" : "",
              r.error.empty() ? "" : ("  ERROR " + r.error).c_str());
  if (!r.notes.empty()) std::printf("    note: %s\n", r.notes.c_str());
  std::fflush(stdout);
}

std::string grouped_summary(const GroupedBench& B) {
  std::ostringstream os;
  char line[512];
  os << "deepgemm-bench --grouped summary: " << B.prop.name << ", " << B.rows.size()
     << " rows, bf16, TFLOP/s of the valid rows; vsLoop = cuBLAS loop / ours, vsGrp = cublasGemmGroupedBatchedEx / ours "
        "(>1: we are faster); many = ours, one plan per expert\n";
  std::snprintf(line, sizeof line, "%-10s %-24s %8s %8s %8s %8s %7s %7s %7s\n", "layout", "NxK G tokens", "ours_TF",
                "many_TF", "loop_TF", "grp_TF", "vsLoop", "vsGrp", "many/lp");
  os << line;
  double log_loop = 0, log_grp = 0, log_many = 0;
  int n_loop = 0, n_grp = 0, n_many = 0, unsupported = 0, mismatches = 0, errors = 0;
  for (const GroupedRow& r : B.rows) {
    auto tf = [&](double us) { return r.flops / us * 1e-6; };
    std::snprintf(line, sizeof line, "%-10s %-24s %8s %8s %8s %8s %7s %7s %7s%s\n", r.prob.layout.c_str(),
                  row_name(r.prob).c_str(), r.ours_status.empty() ? fmt("%.1f", tf(r.ours_us)).c_str() : "n/s",
                  fmt("%.1f", tf(r.many_us)).c_str(), fmt("%.1f", tf(r.loop_us)).c_str(),
                  fmt("%.1f", tf(r.cublas_grp_us)).c_str(), fmt("%.3f", r.loop_us / r.ours_us).c_str(),
                  fmt("%.3f", r.cublas_grp_us / r.ours_us).c_str(), fmt("%.3f", r.loop_us / r.many_us).c_str(),
                  r.mismatch ? " MISMATCH" : "");
    os << line;
    auto add = [](double ratio, double* log_sum, int* count) {
      if (std::isfinite(ratio) && ratio > 0) {
        *log_sum += std::log(ratio);
        ++*count;
      }
    };
    add(r.loop_us / r.ours_us, &log_loop, &n_loop);
    add(r.cublas_grp_us / r.ours_us, &log_grp, &n_grp);
    add(r.loop_us / r.many_us, &log_many, &n_many);
    unsupported += !r.ours_status.empty();
    mismatches += r.mismatch;
    errors += !r.error.empty();
  }
  os << "geomean vsLoop " << (n_loop ? fmt("%.3f", std::exp(log_loop / n_loop)) : "-") << " (" << n_loop
     << " rows), vsGrp " << (n_grp ? fmt("%.3f", std::exp(log_grp / n_grp)) : "-") << " (" << n_grp
     << " rows), many/loop " << (n_many ? fmt("%.3f", std::exp(log_many / n_many)) : "-") << " (" << n_many << " rows)\n";
  if (unsupported) {
    std::string why;
    for (const GroupedRow& r : B.rows)
      if (!r.ours_status.empty()) {
        why = r.ours_status;
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
      << ",\n  \"skew\": " << jnum(B.opt.skew) << ",\n  \"reps\": " << B.opt.reps << ",\n  \"shapes_not_run\": "
      << B.not_run << ",\n  \"rows\": [";
  for (size_t i = 0; i < B.rows.size(); ++i) {
    const GroupedRow& r = B.rows[i];
    std::ostringstream counts;
    for (size_t g = 0; g < r.prob.counts.size(); ++g) counts << (g ? "," : "") << r.prob.counts[g];
    out << (i ? ",\n" : "\n") << "    {\"layout\": " << jstr(r.prob.layout) << ", \"n\": " << r.prob.n
        << ", \"k\": " << r.prob.k << ", \"groups\": " << r.prob.groups << ", \"tokens\": " << r.prob.tokens
        << ", \"counts\": [" << counts.str() << "], \"valid_rows\": " << r.prob.valid_rows << ", \"m\": " << r.prob.m
        << ", \"flops\": " << jnum(r.flops) << ", \"ours_us\": " << jnum(r.ours_us) << ", \"ours_many_us\": "
        << jnum(r.many_us) << ", \"cublas_loop_us\": " << jnum(r.loop_us) << ", \"cublas_grouped_us\": "
        << jnum(r.cublas_grp_us) << ", \"ratio_vs_loop\": " << jnum(r.loop_us / r.ours_us)
        << ", \"ratio_vs_cublas_grouped\": " << jnum(r.cublas_grp_us / r.ours_us) << ", \"err_ours\": "
        << jnum(r.err_max) << ", \"nonfinite_ours\": " << r.nonfinite << ", \"mismatch\": "
        << (r.mismatch ? "true" : "false") << ", \"kernel\": " << jstr(r.kernel) << ", \"many_kernels\": "
        << jstr(r.many_kernels) << ", \"ours_status\": " << jstr(r.ours_status) << ", \"launches_per_sample\": "
        << r.launches << ", \"timing\": " << jstr(r.timing) << ", \"error\": " << jstr(r.error)
        << ", \"notes\": " << jstr(r.notes) << "}";
  }
  out << "\n  ]\n}\n";
}

}  // namespace

int run_grouped(int argc, char** argv) {
  GroupedBench B;
  B.opt = parse_grouped(argc, argv);
  // A fixed default seed: the expert loads of a row are the same in every run (and in a run of a
  // subset of the rows), so runs with different --force-kernel values compare the same problems.
  B.seed = B.opt.seed ? B.opt.seed : 1;
  const uint64_t first_seed = B.seed;
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
  std::printf("deepgemm-bench --grouped: %s, libdeepgemm %s, bf16, align %lld, skew %.2f, %d reps, --seed %llu\n",
              B.prop.name, dgemm_version_string(), (long long)B.opt.align, B.opt.skew, B.opt.reps,
              (unsigned long long)first_seed);
  print_grouped_header();
  int failures = 0;
  bool broken = false;
  const auto start = std::chrono::steady_clock::now();
  for (const auto& nk : B.opt.nk)
    for (int64_t groups : B.opt.groups)
      for (int64_t tokens : B.opt.tokens) {
        // One expert load per (seed, NxK, G, tokens), the same for both layouts and whichever
        // other rows run.
        const uint64_t load_seed = first_seed * 0x9E3779B97F4A7C15ull ^ (uint64_t(nk.first) << 40) ^
                                   (uint64_t(nk.second) << 20) ^ (uint64_t(groups) << 12) ^ uint64_t(tokens);
        for (const std::string& layout : B.opt.layouts) {
          const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          if (broken || (B.opt.time_limit_s > 0 && elapsed > B.opt.time_limit_s)) {
            ++B.not_run;
            continue;
          }
          const Problem pr = make_problem(B.opt, layout, nk.first, nk.second, groups, tokens, load_seed);
          try {
            run_grouped_row(B, pr);
            print_grouped_row(B.rows.back());
          } catch (const CudaFailure& f) {
            std::fprintf(stderr, "deepgemm-bench --grouped: %s %s: CUDA failure: %s\n", layout.c_str(),
                         row_name(pr).c_str(), f.what.c_str());
            ++failures;
            if (cudaDeviceSynchronize() != cudaSuccess) {
              std::fprintf(stderr, "deepgemm-bench --grouped: the CUDA context is broken: stopping\n");
              broken = true;
            }
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
