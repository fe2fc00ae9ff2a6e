// The shared routed path and its log (see dispatch.hpp).
#include "compat/cublas/dispatch.hpp"

#include <cublasLt.h>
#include <cublas_api.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "compat/cublas/driver.hpp"
#include "compat/cublas/handles.hpp"
#include "compat/cublas/observe.hpp"
#include "compat/cublas/plan_cache.hpp"
#include "compat/cublas/real.hpp"

namespace dgemm_cublas {
namespace {

// ---- the log: one line per distinct call shape and outcome --------------------------------------

const char* type_name(int cuda_type) {
  switch (cuda_type) {
    case CUDA_R_16F: return "f16";
    case CUDA_R_16BF: return "bf16";
    case CUDA_R_32F: return "f32";
    case CUDA_R_64F: return "f64";
    case CUDA_R_8I: return "i8";
    case CUDA_R_32I: return "i32";
    case CUDA_R_8F_E4M3: return "e4m3";
    case CUDA_R_8F_E5M2: return "e5m2";
    default: return "other";
  }
}
const char* op_name(int op) { return op == CUBLAS_OP_N ? "N" : op == CUBLAS_OP_T ? "T" : op == CUBLAS_OP_C ? "C" : "?"; }
const char* compute_name(int c) {
  switch (c) {
    case CUBLAS_COMPUTE_16F: return "16F";
    case CUBLAS_COMPUTE_16F_PEDANTIC: return "16F_PEDANTIC";
    case CUBLAS_COMPUTE_32F: return "32F";
    case CUBLAS_COMPUTE_32F_PEDANTIC: return "32F_PEDANTIC";
    case CUBLAS_COMPUTE_32F_FAST_16F: return "32F_FAST_16F";
    case CUBLAS_COMPUTE_32F_FAST_16BF: return "32F_FAST_16BF";
    case CUBLAS_COMPUTE_32F_FAST_TF32: return "32F_FAST_TF32";
    case CUBLAS_COMPUTE_64F: return "64F";
    case CUBLAS_COMPUTE_32I: return "32I";
    default: return "other";
  }
}

const char* epilogue_name(uint32_t e) {
  switch (e) {
    case CUBLASLT_EPILOGUE_DEFAULT: return "DEFAULT";
    case CUBLASLT_EPILOGUE_RELU: return "RELU";
    case CUBLASLT_EPILOGUE_BIAS: return "BIAS";
    case CUBLASLT_EPILOGUE_RELU_BIAS: return "RELU_BIAS";
    case CUBLASLT_EPILOGUE_GELU: return "GELU";
    case CUBLASLT_EPILOGUE_GELU_BIAS: return "GELU_BIAS";
    default: return "other";
  }
}

// Mixes values into a running hash (the log's identity of a call shape).
struct Hasher {
  uint64_t h = 0xcbf29ce484222325ull;
  Hasher& operator<<(int64_t v) {
    h ^= uint64_t(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return *this;
  }
};

std::string outcome_text(deepgemm_cublas_reason_t r, const Decision& d, const std::string& detail) {
  if (r == DEEPGEMM_CUBLAS_ROUTED) return " -> DeepGEMM" + (detail.empty() ? std::string() : " (" + detail + ")");
  std::string s = std::string(" -> cuBLAS: ") + reason_name(r);
  if (d.why && *d.why) s += std::string(": ") + d.why;
  if (!detail.empty()) s += " [" + detail + "]";
  return s;
}

const char* scalars_text(const Decision& d) {
  if (!d.routed() && d.reason != DEEPGEMM_CUBLAS_NO_DEVICE) return "";
  if (d.scalars.mode == DGEMM_SCALARS_DEVICE) return " scalars=device";
  return d.key.reads_c ? " scalars=host beta!=0" : " scalars=host beta=0";
}

deepgemm_cublas_reason_t finish_gemm(deepgemm_cublas_reason_t r, const GemmCall& c, const HandleModes& modes,
                                     const Decision& d, const std::string& detail) {
  count(r);
  if (!settings().log) return r;
  Hasher h;
  h << int64_t(c.entry) << c.transa << c.transb << c.m << c.n << c.k << c.a_type << c.b_type << c.c_type << c.lda
    << c.ldb << c.ldc << c.batch << c.stride_a << c.stride_b << c.stride_c << c.compute_type << modes.pointer_mode
    << modes.math_mode << d.key.reads_c << int64_t(r);
  if (!first_time(h.h)) return r;
  char line[512];
  std::snprintf(line, sizeof(line), "%s %s,%s m=%lld n=%lld k=%lld A=%s lda=%lld B=%s ldb=%lld C=%s ldc=%lld", entry_name(c.entry),
                op_name(c.transa), op_name(c.transb), (long long)c.m, (long long)c.n, (long long)c.k, type_name(c.a_type),
                (long long)c.lda, type_name(c.b_type), (long long)c.ldb, type_name(c.c_type), (long long)c.ldc);
  std::string text = line;
  if (c.batch != 1 || c.pointer_array) {
    std::snprintf(line, sizeof(line), " batch=%lld strides=%lld,%lld,%lld%s", (long long)c.batch, (long long)c.stride_a,
                  (long long)c.stride_b, (long long)c.stride_c, c.pointer_array ? " (pointer arrays)" : "");
    text += line;
  }
  text += std::string(" compute=") + compute_name(c.compute_type) + scalars_text(d);
  log_line(text + outcome_text(r, d, detail));
  return r;
}

deepgemm_cublas_reason_t finish_lt(deepgemm_cublas_reason_t r, const LtDesc* desc, const LtLayout* a,
                                   const LtLayout* b, const LtLayout* c, const LtLayout* dl, const Decision& d,
                                   const std::string& detail) {
  count(r);
  if (!settings().log) return r;
  Hasher h;
  h << int64_t(r) << d.key.reads_c;
  if (desc) {
    h << desc->compute_type << desc->scale_type << desc->pointer_mode << desc->transa << desc->transb
      << int64_t(desc->epilogue) << desc->bias_type << int64_t(desc->unmapped) << int64_t(desc->unknown);
    for (const LtLayout* l : {a, b, c, dl})
      h << int64_t(l->type) << l->order << int64_t(l->rows) << int64_t(l->cols) << l->ld << l->batch << l->stride;
  }
  if (!first_time(h.h)) return r;
  if (!desc) {
    log_line(std::string("cublasLtMatmul (handle or descriptors not created through this library)") +
             outcome_text(r, d, detail));
    return r;
  }
  char line[512];
  std::snprintf(line, sizeof(line),
                "cublasLtMatmul %s,%s D=%llux%llu A=%s %llux%llu ld=%lld B=%s %llux%llu ld=%lld C=%s ld=%lld D=%s ld=%lld%s "
                "batch=%d compute=%s epilogue=%s(%u)",
                op_name(desc->transa), op_name(desc->transb), (unsigned long long)dl->rows, (unsigned long long)dl->cols,
                type_name(int(a->type)), (unsigned long long)a->rows, (unsigned long long)a->cols, (long long)a->ld,
                type_name(int(b->type)), (unsigned long long)b->rows, (unsigned long long)b->cols, (long long)b->ld,
                type_name(int(c->type)), (long long)c->ld, type_name(int(dl->type)), (long long)dl->ld,
                a->order == CUBLASLT_ORDER_ROW ? " row-major" : "", dl->batch, compute_name(desc->compute_type),
                epilogue_name(desc->epilogue), desc->epilogue);
  log_line(std::string(line) + scalars_text(d) + outcome_text(r, d, detail));
  return r;
}

// ---- running a decided call ---------------------------------------------------------------------

struct Operands {
  const void* A;
  const void* B;
  const void* C;
  void* D;
  void* stream;
  void* workspace;
  std::size_t workspace_size;
};

deepgemm_cublas_reason_t execute(const CachedPlan& plan, const Decision& d, const Operands& o, std::string* detail) {
  dgemm_args_t args;
  dgemm_args_init(&args);
  args.scalar_mode = d.scalars.mode;
  args.alpha = d.scalars.alpha;
  args.beta = d.scalars.beta;
  args.alpha_ptr = d.scalars.alpha_ptr;
  args.beta_ptr = d.scalars.beta_ptr;
  args.bias = d.bias;
  const dgemm_status_t st = dgemm_execute(plan.plan, o.A, o.B, d.key.reads_c ? o.C : nullptr, o.D, &args, o.workspace,
                                          o.workspace_size, o.stream);
  if (st == DGEMM_STATUS_SUCCESS) {
    if (settings().log) *detail = plan.detail;  // a copy only when it will be printed
    return DEEPGEMM_CUBLAS_ROUTED;
  }
  // dgemm_execute enqueues nothing when it fails: forwarding the call is safe.
  *detail = std::string(dgemm_status_string(st)) + ": " + dgemm_last_error();
  return DEEPGEMM_CUBLAS_EXECUTE;
}

// The cold path: the plan for a key not in the cache. Made outside the handle's lock (planning
// can compile); the first of two racing threads wins the insert.
std::shared_ptr<const CachedPlan> plan_miss(std::mutex& mu, PlanCache& cache, const PlanKey& key, void* stream,
                                            deepgemm_cublas_reason_t* why, std::string* detail) {
  if (stream_capturing(stream)) {
    *why = DEEPGEMM_CUBLAS_CAPTURE;
    return nullptr;
  }
  const char* ctx_error = "";
  dgemm_context_t ctx = context_for(key.device, &ctx_error);
  if (!ctx) {
    *why = DEEPGEMM_CUBLAS_NO_DEVICE;
    *detail = ctx_error;
    return nullptr;
  }
  std::shared_ptr<const CachedPlan> made = make_plan(ctx, key);
  (made->plan ? counters().plans_created : counters().plans_refused).fetch_add(1);
  std::size_t evicted = 0;
  std::lock_guard<std::mutex> lock(mu);
  std::shared_ptr<const CachedPlan> kept = cache.insert(key, std::move(made), &evicted);
  counters().plans_evicted.fetch_add(evicted);
  return kept;
}

}  // namespace

static deepgemm_cublas_reason_t try_gemm_body(const void* handle, const GemmCall& call) {
  counters().calls.fetch_add(1, std::memory_order_relaxed);
  HandleModes modes;
  Decision d;
  std::string detail;
  if (!settings().enabled) {
    d.why = "DEEPGEMM_CUBLAS=off";
    return finish_gemm(DEEPGEMM_CUBLAS_DISABLED, call, modes, d, detail);
  }
  const std::shared_ptr<HandleState> hs = find_handle(handle);
  if (!hs) {
    d.why = "handle not created through this library";
    return finish_gemm(DEEPGEMM_CUBLAS_UNKNOWN_HANDLE, call, modes, d, detail);
  }
  int device = 0;
  const bool have_device = current_device(&device);

  void* stream;
  void* user_ws;
  std::size_t user_ws_size;
  std::shared_ptr<const CachedPlan> plan;
  void* ws = nullptr;
  std::size_t ws_size = 0;
  {
    std::lock_guard<std::mutex> lock(hs->mu);
    modes = hs->modes;
    stream = hs->stream;
    user_ws = hs->user_ws;
    user_ws_size = hs->user_ws_size;
    d = route_gemm(call, modes);
    if (d.routed() && have_device) {
      d.key.device = device;
      plan = hs->cache.find(d.key);
      if (plan && plan->workspace) {
        if (user_ws_size >= plan->workspace) {
          ws = user_ws;
          ws_size = user_ws_size;
        } else if ((ws = hs->pool(stream, plan->workspace)) != nullptr) {
          ws_size = plan->workspace;
        }
      }
    }
  }
  if (!d.routed()) return finish_gemm(d.reason, call, modes, d, detail);
  if (!have_device) {
    d.why = "no CUDA context current on this thread (or no driver)";
    return finish_gemm(DEEPGEMM_CUBLAS_NO_DEVICE, call, modes, d, detail);
  }
  if (plan) {
    counters().plan_cache_hits.fetch_add(1, std::memory_order_relaxed);
  } else {
    deepgemm_cublas_reason_t why = DEEPGEMM_CUBLAS_PLAN;
    plan = plan_miss(hs->mu, hs->cache, d.key, stream, &why, &detail);
    if (!plan) {
      d.why = why == DEEPGEMM_CUBLAS_CAPTURE ? "stream is capturing and no plan is ready for this shape" : "";
      return finish_gemm(why, call, modes, d, detail);
    }
  }
  if (!plan->plan) {
    d.why = "dgemm_create_plan refused this shape";
    return finish_gemm(DEEPGEMM_CUBLAS_PLAN, call, modes, d, plan->detail);
  }
  if (plan->workspace && !ws) {
    if (user_ws_size >= plan->workspace) {
      ws = user_ws;
      ws_size = user_ws_size;
    } else if (stream_capturing(stream)) {
      d.why = "stream is capturing and the handle has no workspace pool for it yet";
      return finish_gemm(DEEPGEMM_CUBLAS_CAPTURE, call, modes, d, detail);
    } else if ((ws = grow_pool(*hs, stream, plan->workspace)) == nullptr) {
      d.why = "cannot allocate the handle's workspace pool";
      return finish_gemm(DEEPGEMM_CUBLAS_WORKSPACE, call, modes, d, detail);
    } else {
      ws_size = plan->workspace;
    }
  }
  const Operands o{call.A, call.B, call.C, const_cast<void*>(call.C), stream, ws, ws_size};
  return finish_gemm(execute(*plan, d, o, &detail), call, modes, d, detail);
}

static deepgemm_cublas_reason_t try_lt_body(const LtCall& call) {
  Decision d;
  std::string detail;
  const std::shared_ptr<LtHandleState> hs = find_lt_handle(call.handle);
  LtDesc desc;
  LtLayout a, b, c, dl;
  const bool known = hs && find_lt_shadows(call.desc, call.a_layout, call.b_layout, call.c_layout, call.d_layout, &desc,
                                           &a, &b, &c, &dl);
  // cuBLAS's own cuBLASLt calls (its handle and descriptors are never ours) are not the program's.
  if (!known && inside_real_cublas(call.caller)) return DEEPGEMM_CUBLAS_UNKNOWN_HANDLE;
  counters().calls.fetch_add(1, std::memory_order_relaxed);
  if (!settings().enabled) {
    d.why = "DEEPGEMM_CUBLAS=off";
    return finish_lt(DEEPGEMM_CUBLAS_DISABLED, nullptr, nullptr, nullptr, nullptr, nullptr, d, detail);
  }
  if (!known) {
    d.why = "handle or descriptor not created through this library";
    return finish_lt(DEEPGEMM_CUBLAS_UNKNOWN_HANDLE, nullptr, nullptr, nullptr, nullptr, nullptr, d, detail);
  }
  auto done = [&](deepgemm_cublas_reason_t r) { return finish_lt(r, &desc, &a, &b, &c, &dl, d, detail); };
  d = route_lt(desc, a, b, c, dl, call.ops);
  if (!d.routed()) return done(d.reason);
  int device = 0;
  if (!current_device(&device)) {
    d.why = "no CUDA context current on this thread (or no driver)";
    return done(DEEPGEMM_CUBLAS_NO_DEVICE);
  }
  d.key.device = device;
  std::shared_ptr<const CachedPlan> plan;
  {
    std::lock_guard<std::mutex> lock(hs->mu);
    plan = hs->cache.find(d.key);
  }
  if (plan) {
    counters().plan_cache_hits.fetch_add(1, std::memory_order_relaxed);
  } else {
    deepgemm_cublas_reason_t why = DEEPGEMM_CUBLAS_PLAN;
    plan = plan_miss(hs->mu, hs->cache, d.key, call.stream, &why, &detail);
    if (!plan) {
      d.why = why == DEEPGEMM_CUBLAS_CAPTURE ? "stream is capturing and no plan is ready for this shape" : "";
      return done(why);
    }
  }
  if (!plan->plan) {
    d.why = "dgemm_create_plan refused this shape";
    detail = plan->detail;
    return done(DEEPGEMM_CUBLAS_PLAN);
  }
  if (plan->workspace > call.workspace_size) {
    d.why = "the plan needs more workspace than the call passed";
    detail = std::to_string(plan->workspace) + " > " + std::to_string(call.workspace_size) + " bytes";
    return done(DEEPGEMM_CUBLAS_WORKSPACE);
  }
  const Operands o{call.ops.A, call.ops.B, call.ops.C, const_cast<void*>(call.ops.D), call.stream, call.workspace,
                   call.workspace_size};
  return done(execute(*plan, d, o, &detail));
}

// The exception firewall: nothing thrown in here (out of host memory, a failed lock) may cross
// the C boundary of a cuBLAS function; the call is forwarded instead.
deepgemm_cublas_reason_t try_gemm(const void* handle, const GemmCall& call) noexcept {
  try {
    return try_gemm_body(handle, call);
  } catch (...) {
    count(DEEPGEMM_CUBLAS_INTERNAL);
    return DEEPGEMM_CUBLAS_INTERNAL;
  }
}

deepgemm_cublas_reason_t try_lt(const LtCall& call) noexcept {
  try {
    return try_lt_body(call);
  } catch (...) {
    count(DEEPGEMM_CUBLAS_INTERNAL);
    return DEEPGEMM_CUBLAS_INTERNAL;
  }
}

}  // namespace dgemm_cublas
