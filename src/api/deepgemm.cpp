// The C boundary: validates every argument, converts the public structs into the core value
// types, asks the planner and the backend, and turns every exception into a status plus a
// thread-local message. No exception leaves this file.
#include "deepgemm/deepgemm.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <sstream>
#include <string>

#include "api/convert.hpp"
#include "api/entry_points.hpp"
#include "api/extensions.hpp"
#include "api/grouped.hpp"
#include "api/handles.hpp"
#include "api/scaling.hpp"
#include "backend/backend.hpp"
#include "core/error.hpp"
#include "plan/autotune.hpp"
#include "plan/planner.hpp"

using namespace dgemm;
using namespace dgemm::api;

static_assert(int(Status::InternalError) == DGEMM_STATUS_INTERNAL_ERROR, "status numbers differ");
static_assert(int(Status::ArchFileError) == DGEMM_STATUS_ARCH_FILE_ERROR, "status numbers differ");
static_assert(int(DType::I32) == DGEMM_DTYPE_I32 && int(DType::F8E4M3) == DGEMM_DTYPE_F8_E4M3, "dtype numbers differ");
static_assert(int(Activation::Silu) == DGEMM_ACT_SILU, "activation numbers differ");
static_assert(int(VectorMode::PerColumn) == DGEMM_VECTOR_PER_COLUMN, "vector mode numbers differ");
static_assert(int(ScalarMode::Device) == DGEMM_SCALARS_DEVICE, "scalar mode numbers differ");

namespace {

thread_local std::string t_last_error;

// Runs `body`, converting every exception into a status and the thread's last-error message.
template <class Body>
dgemm_status_t guarded(const char* function, Body&& body) noexcept {
  try {
    body();
    t_last_error.clear();
    return DGEMM_STATUS_SUCCESS;
  } catch (const Error& e) {
    try {
      t_last_error = std::string(function) + ": " + e.what();
    } catch (...) {
    }
    return static_cast<dgemm_status_t>(e.status());
  } catch (const std::bad_alloc&) {
    try {
      t_last_error = std::string(function) + ": out of host memory";
    } catch (...) {
    }
    return DGEMM_STATUS_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    try {
      t_last_error = std::string(function) + ": internal error: " + e.what();
    } catch (...) {
    }
    return DGEMM_STATUS_INTERNAL_ERROR;
  } catch (...) {
    try {
      t_last_error = std::string(function) + ": internal error: unknown exception";
    } catch (...) {
    }
    return DGEMM_STATUS_INTERNAL_ERROR;
  }
}

// The key under which a context caches plans: everything that can change the plan, exactly
// (Epilogue::key keeps the bit patterns of alpha and beta).
std::string plan_key(const GemmProblem& p, const Epilogue& e, const PlanRequest& r, const std::string& arch_file) {
  std::ostringstream os;
  os << p.to_string() << "|" << e.key() << "|" << r.key() << "|" << arch_file;
  return os.str();
}

// force_kernel: a family name ("sm90") or a configuration name as dgemm_plan_describe shows it
// ("sm90_128x256x64_s4_t384_c2_p"), which also picks configurations kept for measuring.
PlanRequest forced_request(const std::string& name) {
  PlanRequest r;
  Family f;
  if (family_from_name(name, &f)) {
    r.force = f;
    return r;
  }
  // The longest family name followed by '_' that starts `name` ("small_m_..." is not "sm...").
  for (std::size_t cut = name.size(); cut-- > 0;) {
    if (name[cut] == '_' && family_from_name(name.substr(0, cut), &f) && f != Family::Cpu) {
      r.force = f;
      r.force_config = name;
      return r;
    }
  }
  fail(Status::InvalidArgument, "options->force_kernel = \"", name, "\": not a kernel family (", family_names(),
       ") or configuration name (e.g. sm80_128x128x32_s4_t128_v1)");
}

void check_aligned(const void* ptr, DType t, const char* name) {
  if (reinterpret_cast<std::uintptr_t>(ptr) % dtype_size(t) != 0) {
    fail(Status::InvalidArgument, name, " = ", ptr, ": not aligned to its element size (", dtype_size(t), " bytes)");
  }
}

}  // namespace

extern "C" {

DGEMM_API unsigned dgemm_version(void) { return DGEMM_VERSION_NUMBER; }

#define DGEMM_STR2(x) #x
#define DGEMM_STR(x) DGEMM_STR2(x)
DGEMM_API const char* dgemm_version_string(void) {
  return DGEMM_STR(DGEMM_VERSION_MAJOR) "." DGEMM_STR(DGEMM_VERSION_MINOR) "." DGEMM_STR(DGEMM_VERSION_PATCH);
}

DGEMM_API const char* dgemm_status_string(dgemm_status_t status) {
  switch (enum_value(status)) {
    case DGEMM_STATUS_SUCCESS: return "DGEMM_STATUS_SUCCESS";
    case DGEMM_STATUS_INVALID_ARGUMENT: return "DGEMM_STATUS_INVALID_ARGUMENT";
    case DGEMM_STATUS_NOT_SUPPORTED: return "DGEMM_STATUS_NOT_SUPPORTED";
    case DGEMM_STATUS_OUT_OF_MEMORY: return "DGEMM_STATUS_OUT_OF_MEMORY";
    case DGEMM_STATUS_INSUFFICIENT_WORKSPACE: return "DGEMM_STATUS_INSUFFICIENT_WORKSPACE";
    case DGEMM_STATUS_CONTEXT_MISMATCH: return "DGEMM_STATUS_CONTEXT_MISMATCH";
    case DGEMM_STATUS_NO_DEVICE: return "DGEMM_STATUS_NO_DEVICE";
    case DGEMM_STATUS_DEVICE_ERROR: return "DGEMM_STATUS_DEVICE_ERROR";
    case DGEMM_STATUS_COMPILE_ERROR: return "DGEMM_STATUS_COMPILE_ERROR";
    case DGEMM_STATUS_ARCH_FILE_ERROR: return "DGEMM_STATUS_ARCH_FILE_ERROR";
    case DGEMM_STATUS_INTERNAL_ERROR: return "DGEMM_STATUS_INTERNAL_ERROR";
  }
  return "DGEMM_STATUS_UNKNOWN";
}

DGEMM_API const char* dgemm_last_error(void) { return t_last_error.c_str(); }

DGEMM_API dgemm_status_t dgemm_problem_init(dgemm_problem_t* p) {
  return guarded("dgemm_problem_init", [&] {
    init_struct(p, "p");
    p->m = p->n = p->k = 1;
    p->a_type = p->b_type = p->c_type = p->d_type = DGEMM_DTYPE_BF16;
    p->compute_type = DGEMM_DTYPE_F32;
    p->op_a = p->op_b = DGEMM_OP_N;
    p->order = DGEMM_ORDER_ROW_MAJOR;
    p->batch_count = 1;
  });
}

DGEMM_API dgemm_status_t dgemm_epilogue_init(dgemm_epilogue_t* e) {
  return guarded("dgemm_epilogue_init", [&] {
    init_struct(e, "e");  // beta 0, no bias, activation or scale: zero
    e->flags = DGEMM_EPILOGUE_SATURATE;
    e->alpha = 1.0f;
    e->bias_type = DGEMM_DTYPE_F32;
  });
}

DGEMM_API dgemm_status_t dgemm_plan_options_init(dgemm_plan_options_t* o) {
  return guarded("dgemm_plan_options_init", [&] {
    init_struct(o, "o");
  });
}

DGEMM_API dgemm_status_t dgemm_args_init(dgemm_args_t* a) {
  return guarded("dgemm_args_init", [&] {
    init_struct(a, "a");  // DGEMM_SCALARS_FROM_PLAN, beta 0: zero
    a->alpha = 1.0f;
  });
}

DGEMM_API dgemm_status_t dgemm_context_create(dgemm_device_kind_t kind, int device_index, dgemm_context_t* ctx) {
  return guarded("dgemm_context_create", [&] {
    require_non_null(ctx, "ctx");
    const int kind_value = enum_value(kind);
    if (kind_value != DGEMM_DEVICE_AUTO && kind_value != DGEMM_DEVICE_CUDA && kind_value != DGEMM_DEVICE_CPU)
      fail(Status::InvalidArgument, "kind = ", kind_value, ": not a dgemm_device_kind_t");
    if (device_index < 0) fail(Status::InvalidArgument, "device_index = ", device_index, ": must be >= 0");
    if (kind_value != DGEMM_DEVICE_CUDA && device_index != 0)
      fail(Status::InvalidArgument, "device_index = ", device_index, ": must be 0 unless kind is DGEMM_DEVICE_CUDA");
    auto c = std::make_unique<dgemm_context>();
    if (kind_value == DGEMM_DEVICE_CPU) {
      c->backend = make_cpu_backend();
    } else {
      std::string why;
      c->backend = make_cuda_backend(device_index, &why);
      if (!c->backend) {
        if (kind_value == DGEMM_DEVICE_CUDA)
          fail(Status::NoDevice, "kind = DGEMM_DEVICE_CUDA, device_index = ", device_index, ": no usable CUDA device (", why, ")");
        c->backend = make_cpu_backend();
      } else {
        c->device_index = device_index;
      }
    }
    *ctx = c.release();
  });
}

DGEMM_API dgemm_status_t dgemm_context_destroy(dgemm_context_t ctx) {
  return guarded("dgemm_context_destroy", [&] {
    if (ctx == nullptr) return;
    int live = ctx->live_plans.load();
    if (live != 0)
      fail(Status::InvalidArgument, "ctx = ", static_cast<void*>(ctx), " still has ", live, " live plan(s): destroy them first");
    delete ctx;
  });
}

DGEMM_API dgemm_status_t dgemm_context_device(dgemm_context_t ctx, dgemm_device_kind_t* kind, int* device_index) {
  return guarded("dgemm_context_device", [&] {
    require_non_null(ctx, "ctx");
    bool cpu = std::strcmp(ctx->backend->name(), "cpu") == 0;
    if (kind) *kind = cpu ? DGEMM_DEVICE_CPU : DGEMM_DEVICE_CUDA;
    if (device_index) *device_index = cpu ? 0 : ctx->device_index;
  });
}

}  // extern "C"

namespace dgemm::api {

// dgemm_create_plan and dgemm_create_plan_ext: `ext` is the plan-time extension chain.
void create_plan(dgemm_context_t ctx, const dgemm_problem_t* problem, const dgemm_epilogue_t* epilogue,
                 const dgemm_plan_options_t* caller_options, const void* ext, dgemm_plan_t* plan) {
  require_non_null(ctx, "ctx");
  require_non_null(problem, "problem");
  require_non_null(plan, "plan");
  const ExtensionChain chain = collect_extensions(ext, ExtensionStage::Plan);
  GemmProblem p = convert_problem(problem, convert_grouped(chain.grouped));
  Epilogue e = convert_epilogue(epilogue, p);
  apply_scaling(chain.scaling, p, e);
  PlanRequest request;
  std::string arch_file;
  bool autotune = false;
  if (caller_options) {
    const dgemm_plan_options_t options_copy = read_struct(caller_options, "options");
    const dgemm_plan_options_t* options = &options_copy;
    if (options->flags & ~uint32_t(DGEMM_PLAN_AUTOTUNE))
      fail(Status::InvalidArgument, "options->flags = 0x", std::hex, options->flags, ": unknown bits");
    if (options->force_kernel) request = forced_request(options->force_kernel);
    if (options->arch_file) arch_file = options->arch_file;
    autotune = (options->flags & DGEMM_PLAN_AUTOTUNE) != 0;
  }
  if (arch_file.empty()) {
    if (const char* env = std::getenv("DEEPGEMM_ARCH")) arch_file = env;
  }
  const std::string key = plan_key(p, e, request, arch_file) + (autotune ? "|autotune" : "");

  std::shared_ptr<const PlanEntry> entry;
  {
    std::lock_guard<std::mutex> lock(ctx->mutex);
    if (auto* hit = ctx->plan_cache.find(key)) entry = *hit;
  }
  if (!entry) {
    const HardwareDesc hw = hardware_for_plan(*ctx, arch_file);
    PlanDecision decision = choose_kernel(p, e, hw, request);
    if (autotune) {
      // Time the best few candidates on the device; the winner is remembered on disk.
      std::unique_ptr<CandidateTimer> timer = make_candidate_timer(*ctx->backend, ctx->device_index);
      if (timer) {
        AutotuneOptions tune;
        tune.memory_dir = default_autotune_dir();
        decision = dgemm::autotune(decision, p, e, *timer, tune).decision;
      } else {
        decision.chosen.notes = std::string("autotune requested, but the ") + ctx->backend->name() +
                                " backend has nothing to time; " + decision.chosen.notes;
      }
    }
    auto fresh = std::make_shared<PlanEntry>();
    fresh->executable = ctx->backend->prepare(p, e, decision.chosen.config,
                                              decision.fallback ? &decision.fallback->config : nullptr);
    fresh->description = decision.to_json(p, e, hw);
    fresh->config = decision.chosen.config;
    std::lock_guard<std::mutex> lock(ctx->mutex);
    entry = ctx->plan_cache.insert(key, std::move(fresh));
  }
  auto h = std::make_unique<dgemm_plan>();
  h->ctx = ctx;
  h->problem = p;
  h->epilogue = e;
  h->entry = std::move(entry);
  ctx->live_plans.fetch_add(1);
  *plan = h.release();
}

}  // namespace dgemm::api

extern "C" {

DGEMM_API dgemm_status_t dgemm_create_plan(dgemm_context_t ctx, const dgemm_problem_t* problem,
                                           const dgemm_epilogue_t* epilogue, const dgemm_plan_options_t* options,
                                           dgemm_plan_t* plan) {
  return guarded("dgemm_create_plan", [&] { create_plan(ctx, problem, epilogue, options, nullptr, plan); });
}

DGEMM_API dgemm_status_t dgemm_create_plan_ext(dgemm_context_t ctx, const dgemm_problem_t* problem,
                                               const dgemm_epilogue_t* epilogue, const dgemm_plan_options_t* options,
                                               const void* ext, dgemm_plan_t* plan) {
  return guarded("dgemm_create_plan_ext", [&] { create_plan(ctx, problem, epilogue, options, ext, plan); });
}

DGEMM_API dgemm_status_t dgemm_destroy_plan(dgemm_plan_t plan) {
  return guarded("dgemm_destroy_plan", [&] {
    if (plan == nullptr) return;
    plan->ctx->live_plans.fetch_sub(1);
    delete plan;
  });
}

DGEMM_API dgemm_status_t dgemm_plan_workspace_size(dgemm_plan_t plan, size_t* bytes) {
  return guarded("dgemm_plan_workspace_size", [&] {
    require_non_null(plan, "plan");
    require_non_null(bytes, "bytes");
    *bytes = plan->entry->executable->workspace_size();
  });
}

DGEMM_API dgemm_status_t dgemm_plan_describe(dgemm_plan_t plan, char* buffer, size_t size, size_t* required) {
  return guarded("dgemm_plan_describe", [&] {
    require_non_null(plan, "plan");
    if (buffer == nullptr && size != 0) fail(Status::InvalidArgument, "buffer is NULL but size = ", size);
    const std::string& text = plan->entry->description;
    if (required) *required = text.size() + 1;
    if (size == 0) return;
    std::size_t n = text.size() < size - 1 ? text.size() : size - 1;
    std::memcpy(buffer, text.data(), n);
    buffer[n] = '\0';
  });
}

}  // extern "C"

namespace dgemm::api {

// dgemm_execute and dgemm_execute_ext: `ext` is the execute-time extension chain.
bool prepare_execute(dgemm_plan_t plan, const void* A, const void* B, const void* C, void* D,
                     const dgemm_args_t* caller_args, const void* ext, void* workspace, size_t workspace_size,
                     void* stream, ExecArgs* out) {
  require_non_null(plan, "plan");
  if (!plan->parts.empty())
    fail(Status::InvalidArgument, "plan was made by dgemm_create_plan_many: run it with dgemm_execute_many");
  const ExtensionChain chain = collect_extensions(ext, ExtensionStage::Execute);
  const GemmProblem& p = plan->problem;
  const Epilogue& e = plan->epilogue;
  ExecArgs x;
  x.alpha = e.alpha;
  x.beta = e.beta;
  if (caller_args) {
    const dgemm_args_t args_copy = read_struct(caller_args, "args");
    const dgemm_args_t* args = &args_copy;
    x.scalar_mode =
        checked_enum<ScalarMode>(enum_value(args->scalar_mode), 2, "args->scalar_mode", "dgemm_scalar_mode_t");
    if (x.scalar_mode == ScalarMode::Host) {
      x.alpha = args->alpha;
      x.beta = args->beta;
      if (x.beta != 0.0f && !e.reads_c())
        fail(Status::InvalidArgument, "args->beta = ", args->beta,
             ": the plan was made with beta = 0, so it does not read C (plan with a non-zero beta)");
    } else if (x.scalar_mode == ScalarMode::Device) {
      require_non_null(args->alpha_ptr, "args->alpha_ptr (scalar_mode DEVICE)");
      check_aligned(args->alpha_ptr, DType::F32, "args->alpha_ptr");
      if (e.reads_c()) {
        require_non_null(args->beta_ptr, "args->beta_ptr (scalar_mode DEVICE, plan reads C)");
        check_aligned(args->beta_ptr, DType::F32, "args->beta_ptr");
      }
      x.alpha_ptr = args->alpha_ptr;
      x.beta_ptr = args->beta_ptr;
    }
    x.bias = args->bias;
    x.scale = args->scale;
    x.zero_point = args->zero_point;
  }
  convert_group_args(*plan, chain.group_args, &x);
  apply_scale_args(chain.scale_args, p, e, x);
  if (p.empty_output()) return false;  // nothing to compute: touches nothing
  require_non_null(D, "D");
  check_aligned(D, p.d_type, "D");
  if (p.k > 0) {
    require_non_null(A, "A");
    require_non_null(B, "B");
    check_aligned(A, p.a_type, "A");
    check_aligned(B, p.b_type, "B");
  }
  if (e.reads_c()) {
    if (C == nullptr) fail(Status::InvalidArgument, "C is NULL but the plan reads C (it was made with beta = ", e.beta, ")");
    check_aligned(C, p.c_type, "C");
  }
  if (e.bias_mode != VectorMode::None) {
    if (x.bias == nullptr)
      fail(Status::InvalidArgument, "args->bias is NULL but the plan has a ", vector_mode_name(e.bias_mode), " bias");
    check_aligned(x.bias, e.bias_type, "args->bias");
  }
  if (e.scale_mode != VectorMode::None) {
    if (x.scale == nullptr)
      fail(Status::InvalidArgument, "args->scale is NULL but the plan has a ", vector_mode_name(e.scale_mode),
           " output scale");
    check_aligned(x.scale, DType::F32, "args->scale");
  }
  if (e.zero_point) {
    if (x.zero_point == nullptr)
      fail(Status::InvalidArgument, "args->zero_point is NULL but the plan has DGEMM_EPILOGUE_ZERO_POINT");
    check_aligned(x.zero_point, DType::I32, "args->zero_point");
  }
  const std::size_t need = plan->entry->executable->workspace_size();
  if (workspace_size < need || (need > 0 && workspace == nullptr)) {
    fail(Status::InsufficientWorkspace, "workspace_size = ", workspace_size, " (workspace = ", workspace,
         "): the plan needs ", need, " bytes");
  }
  x.a = A;
  x.b = B;
  x.c = C;
  x.d = D;
  x.workspace = workspace;
  x.workspace_size = workspace_size;
  x.stream = stream;
  *out = x;
  return true;
}

}  // namespace dgemm::api

namespace {

void execute(dgemm_plan_t plan, const void* A, const void* B, const void* C, void* D, const dgemm_args_t* args,
             const void* ext, void* workspace, size_t workspace_size, void* stream) {
  ExecArgs x;
  if (prepare_execute(plan, A, B, C, D, args, ext, workspace, workspace_size, stream, &x))
    plan->entry->executable->run(x);
}

}  // namespace

extern "C" {

DGEMM_API dgemm_status_t dgemm_execute(dgemm_plan_t plan, const void* A, const void* B, const void* C, void* D,
                                       const dgemm_args_t* args, void* workspace, size_t workspace_size,
                                       void* stream) {
  return guarded("dgemm_execute",
                 [&] { execute(plan, A, B, C, D, args, nullptr, workspace, workspace_size, stream); });
}

DGEMM_API dgemm_status_t dgemm_execute_ext(dgemm_plan_t plan, const void* A, const void* B, const void* C, void* D,
                                           const dgemm_args_t* args, const void* ext, void* workspace,
                                           size_t workspace_size, void* stream) {
  return guarded("dgemm_execute_ext",
                 [&] { execute(plan, A, B, C, D, args, ext, workspace, workspace_size, stream); });
}

/* DGEMM_1.1: grouped problems and many-problem plans (bodies in api/grouped.cpp, api/plan_many.cpp). */
DGEMM_API dgemm_status_t dgemm_grouped_init(dgemm_grouped_t* g) {
  return guarded("dgemm_grouped_init", [&] { grouped_init(g); });
}

DGEMM_API dgemm_status_t dgemm_group_args_init(dgemm_group_args_t* a) {
  return guarded("dgemm_group_args_init", [&] { group_args_init(a); });
}

DGEMM_API dgemm_status_t dgemm_create_plan_many(dgemm_context_t ctx, int64_t count, const dgemm_problem_t* problems,
                                                const dgemm_epilogue_t* epilogues, const dgemm_plan_options_t* options,
                                                dgemm_plan_t* plan) {
  return guarded("dgemm_create_plan_many", [&] { create_plan_many(ctx, count, problems, epilogues, options, plan); });
}

DGEMM_API dgemm_status_t dgemm_execute_many(dgemm_plan_t plan, const void* const* A, const void* const* B,
                                            const void* const* C, void* const* D, const dgemm_args_t* args,
                                            void* workspace, size_t workspace_size, void* stream) {
  return guarded("dgemm_execute_many",
                 [&] { execute_many(plan, A, B, C, D, args, workspace, workspace_size, stream); });
}

// ---- DGEMM_1.1: scaling (the conversions are in api/scaling.hpp) --------------------------------

DGEMM_API dgemm_status_t dgemm_scaling_init(dgemm_scaling_t* s) {
  return guarded("dgemm_scaling_init", [&] {
    init_extension(s, "s", DGEMM_EXT_SCALING);
  });
}

DGEMM_API dgemm_status_t dgemm_scale_args_init(dgemm_scale_args_t* a) {
  return guarded("dgemm_scale_args_init", [&] {
    init_extension(a, "a", DGEMM_EXT_SCALE_ARGS);
  });
}

DGEMM_API dgemm_status_t dgemm_plan_scale_shape(dgemm_plan_t plan, dgemm_scale_tensor_t which, int64_t* rows,
                                                int64_t* cols, int64_t* ld, int64_t* elements) {
  return guarded("dgemm_plan_scale_shape", [&] {
    require_non_null(plan, "plan");
    // Read as an int: a C caller may pass any value, and loading one outside the enumerators
    // through the enum type is undefined behaviour in C++ (UBSan: fuzz_c_api_v11).
    const int w = enum_value(which);
    if (w < DGEMM_SCALE_TENSOR_A || w > DGEMM_SCALE_TENSOR_D)
      fail(Status::InvalidArgument, "which = ", w, ": not a dgemm_scale_tensor_t");
    const GemmProblem& p = plan->problem;
    const ScaleDesc& s = w == DGEMM_SCALE_TENSOR_A   ? p.a_scale
                         : w == DGEMM_SCALE_TENSOR_B ? p.b_scale
                                                     : plan->epilogue.d_scale;
    // A: rows of op(A) by K; B: columns of op(B) by K; D: rows of D by its columns.
    const int64_t outer = w == DGEMM_SCALE_TENSOR_B ? p.n : p.m;
    const int64_t inner = w == DGEMM_SCALE_TENSOR_D ? p.n : p.k;
    if (rows) *rows = s.rows(outer);
    if (cols) *cols = s.cols(inner);
    if (ld) *ld = s.active() ? s.ld : 0;
    if (elements) *elements = s.extent(outer, inner, p.batch_count);
  });
}

}  // extern "C"
