// Fuzz target: the C boundary on the CPU context, driven as an outside tester would. Every field
// of the problem, epilogue, options and args comes from the input (mostly plausible values, now
// and then raw ones: garbage enums, struct sizes, reserved words, strides), then
// create -> describe -> execute, with guard bands around every buffer. The promises checked
// (a violation aborts, so libFuzzer reports it with the input):
//   - every status is a dgemm_status_t; a failure leaves *plan and every output untouched and
//     says why in dgemm_last_error;
//   - an execute given a missing or misaligned vector the plan reads, or too little workspace,
//     fails; one given valid arguments succeeds;
//   - a successful execute writes exactly D's elements, each equal to what the independent
//     reference (tests/common/reference.hpp) allows, and nothing else: not the inputs, not the
//     guard bands, not a byte outside the workspace.
// One context serves every input, so its plan cache (exact keys, bounded size) is exercised too.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "api/convert.hpp"
#include "common/reference.hpp"
#include "deepgemm/deepgemm.h"
#include "fuzz_c_api_common.hpp"
#include "fuzz_guarded.hpp"
#include "fuzz_input.hpp"

namespace {

using dgemm::DType;
using dgemm_fuzz::Guarded;
using dgemm_fuzz::Input;

using dgemm_fuzz::context;
using dgemm_fuzz::valid_status;
using dgemm_fuzz::violated;

// Elements spanned by batch_count matrices of rows x cols (0 when empty).
int64_t extent(const dgemm::GemmProblem& p, int64_t rows, int64_t cols, int64_t ld, int64_t stride) {
  if (rows == 0 || cols == 0) return 0;
  const int64_t one = p.order == dgemm::Order::RowMajor ? (rows - 1) * ld + cols : (cols - 1) * ld + rows;
  return one + (p.batch_count - 1) * stride;
}

// Values exactly representable in every input type (quarters in [-2, 2], integers for i8).
void fill(DType t, void* buf, int64_t count, std::mt19937& rng) {
  for (int64_t i = 0; i < count; ++i) {
    const int q = int(rng() % 17) - 8;
    dgemm::store_from_double(t, buf, i, t == DType::I8 || t == DType::I32 ? q : q * 0.25, true);
  }
}

int32_t raw_or(Input& in, int32_t plausible) { return in.one_in(16) ? in.take<int32_t>() : plausible; }

float scalar(Input& in) {
  static const float kValues[] = {1.0f, 0.0f, -1.0f, 0.5f, 2.0f, 1.0000049f, -0.0f, 0.25f};
  if (in.one_in(32)) return in.take<float>();  // anything: NaN, inf, denormals
  return kValues[in.pick(8)];
}

int64_t size_field(Input& in) {
  if (in.one_in(32)) return in.take<int64_t>();
  static const int64_t kSizes[] = {1, 7, 16, 17, 3, 0, 33, 5};
  return kSizes[in.pick(8)];
}

void fill_problem(Input& in, dgemm_problem_t& p) {
  dgemm_problem_init(&p);
  p.m = size_field(in);
  p.n = size_field(in);
  p.k = size_field(in);
  static const dgemm_dtype_t kAB[] = {DGEMM_DTYPE_F32, DGEMM_DTYPE_BF16, DGEMM_DTYPE_F16, DGEMM_DTYPE_I8,
                                      DGEMM_DTYPE_F8_E4M3, DGEMM_DTYPE_F8_E5M2};
  const dgemm_dtype_t ab = kAB[in.pick(6)];
  const bool integer = ab == DGEMM_DTYPE_I8;
  const int32_t a = raw_or(in, ab), b = raw_or(in, in.one_in(4) ? kAB[in.pick(6)] : ab);
  const int32_t d = raw_or(in, in.one_in(2) ? (integer ? DGEMM_DTYPE_I32 : DGEMM_DTYPE_F32) : int32_t(in.pick(7)));
  const int32_t c = raw_or(in, in.one_in(2) ? d : int32_t(in.pick(7)));
  const int32_t compute = raw_or(in, integer ? DGEMM_DTYPE_I32 : DGEMM_DTYPE_F32);
  std::memcpy(&p.a_type, &a, 4);  // enum fields hold whatever the caller stored
  std::memcpy(&p.b_type, &b, 4);
  std::memcpy(&p.c_type, &c, 4);
  std::memcpy(&p.d_type, &d, 4);
  std::memcpy(&p.compute_type, &compute, 4);
  const int32_t op_a = raw_or(in, in.pick(2)), op_b = raw_or(in, in.pick(2)), order = raw_or(in, in.pick(2));
  std::memcpy(&p.op_a, &op_a, 4);
  std::memcpy(&p.op_b, &op_b, 4);
  std::memcpy(&p.order, &order, 4);
  for (int64_t* ld : {&p.lda, &p.ldb, &p.ldc, &p.ldd}) {
    const unsigned how = in.pick(8);
    *ld = how < 5 ? 0 : how == 5 ? int64_t(in.pick(64)) : how == 6 ? -int64_t(in.pick(4)) : in.take<int64_t>();
  }
  if (in.one_in(3)) {
    p.batch_count = in.one_in(16) ? in.take<int64_t>() : 1 + in.pick(3);
    for (int64_t* s : {&p.stride_a, &p.stride_b, &p.stride_c, &p.stride_d})
      *s = in.one_in(8) ? in.take<int64_t>() : in.one_in(4) ? 0 : 2048 + in.pick(16);
  }
  if (in.one_in(32)) p.reserved[in.pick(8)] = in.take<uint64_t>();
  if (in.one_in(32)) p.reserved0 = in.take<uint32_t>();
}

void fill_epilogue(Input& in, dgemm_epilogue_t& e) {
  dgemm_epilogue_init(&e);
  e.alpha = scalar(in);
  e.beta = in.one_in(3) ? scalar(in) : 0.0f;
  const int32_t bias_mode = raw_or(in, in.one_in(2) ? 0 : 2 + in.pick(2));
  const int32_t bias_type = raw_or(in, in.pick(3));
  const int32_t act = raw_or(in, in.pick(5));
  const int32_t scale_mode = raw_or(in, in.one_in(2) ? 0 : in.pick(4));
  std::memcpy(&e.bias_mode, &bias_mode, 4);
  std::memcpy(&e.bias_type, &bias_type, 4);
  std::memcpy(&e.activation, &act, 4);
  std::memcpy(&e.scale_mode, &scale_mode, 4);
  if (in.one_in(4)) e.flags = in.one_in(8) ? in.take<uint32_t>() : in.pick(4);
  if (in.one_in(32)) e.reserved[in.pick(8)] = in.take<uint64_t>();
}

// A public struct as a newer or broken caller might pass it: a larger size (zero or non-zero
// tail) or a raw size. Returns the struct to pass, inside `storage`.
template <class Struct>
const Struct* versioned(Input& in, const Struct& s, std::vector<unsigned char>& storage) {
  storage.assign(sizeof s + 64, 0);
  std::memcpy(storage.data(), &s, sizeof s);
  auto* out = reinterpret_cast<Struct*>(storage.data());
  const unsigned how = in.pick(16);
  if (how == 14) {
    out->struct_size = uint32_t(sizeof s + 8 * (1 + in.pick(8)));  // within storage
    if (in.one_in(2)) storage[sizeof s + in.pick(8)] = 1;
  } else if (how == 15) {
    const uint32_t size = in.take<uint32_t>();
    out->struct_size = size > storage.size() ? uint32_t(in.pick(uint32_t(sizeof s))) : size;
  }
  return out;
}

struct Vectors {
  Guarded bias{0}, scale{0}, zero{0};
};


void run(Input& in) {
  dgemm_problem_t problem;
  fill_problem(in, problem);
  dgemm_epilogue_t epilogue;
  fill_epilogue(in, epilogue);
  std::vector<unsigned char> p_store, e_store, o_store, a_store;
  const dgemm_problem_t* p_arg = versioned(in, problem, p_store);
  const dgemm_epilogue_t* e_arg = in.one_in(8) ? nullptr : versioned(in, epilogue, e_store);
  dgemm_plan_options_t options;
  dgemm_plan_options_init(&options);
  const dgemm_plan_options_t* o_arg = nullptr;
  if (in.one_in(6)) {
    static const char* kForce[] = {nullptr, "cpu", "sm90", "warp_drive"};
    options.force_kernel = kForce[in.pick(4)];
    options.flags = in.one_in(8) ? in.take<uint32_t>() : in.pick(2);
    o_arg = versioned(in, options, o_store);
  }

  const dgemm_plan_t kSentinel = reinterpret_cast<dgemm_plan_t>(uintptr_t(0x5e47));
  dgemm_plan_t plan = kSentinel;
  const dgemm_status_t st = dgemm_create_plan(context(), p_arg, e_arg, o_arg, &plan);
  char where[512];
  std::snprintf(where, sizeof where, "create_plan: m=%" PRId64 " n=%" PRId64 " k=%" PRId64, problem.m, problem.n,
                problem.k);
  if (!valid_status(st)) violated("status out of range", where);
  if (st != DGEMM_STATUS_SUCCESS) {
    if (plan != kSentinel) violated("plan written by a failing create_plan", where);
    if (dgemm_last_error()[0] == '\0') violated("failure without a message", where);
    return;
  }
  // The plan describes itself as JSON, whatever the buffer.
  size_t need = 0;
  if (dgemm_plan_describe(plan, nullptr, 0, &need) != DGEMM_STATUS_SUCCESS || need < 2) violated("describe size", where);
  std::vector<char> text(need + 4, 'x');
  const size_t small = in.pick(unsigned(need + 2));
  if (dgemm_plan_describe(plan, text.data(), small, nullptr) != DGEMM_STATUS_SUCCESS) violated("describe", where);
  if (small > 0 && text[std::min(small, need) - 1] != '\0') violated("describe: not terminated", where);
  if (dgemm_plan_describe(plan, text.data(), need, nullptr) != DGEMM_STATUS_SUCCESS || text[0] != '{' ||
      std::strlen(text.data()) + 1 != need)
    violated("describe: not the JSON of the size it announced", where);

  // The problem as the library understood it (white box: the same conversion), for buffers.
  const dgemm::GemmProblem p = dgemm::api::convert_problem(p_arg);
  const dgemm::Epilogue e = dgemm::api::convert_epilogue(e_arg, p);
  const std::string desc = p.to_string() + " | " + e.to_string();
  std::snprintf(where, sizeof where, "%s", desc.c_str());
  // The library checked these extents for overflow, unless there is nothing to compute (then
  // nothing is read or written, and every buffer may be empty).
  const bool work = !p.empty_output();
  const int64_t na = work && p.k > 0 ? extent(p, p.a_rows(), p.a_cols(), p.lda, p.stride_a) : 0;
  const int64_t nb = work && p.k > 0 ? extent(p, p.b_rows(), p.b_cols(), p.ldb, p.stride_b) : 0;
  const int64_t nc = work && e.reads_c() ? extent(p, p.m, p.n, p.ldc, p.stride_c) : 0;
  const int64_t nd = work ? extent(p, p.m, p.n, p.ldd, p.stride_d) : 0;
  constexpr int64_t kMaxElements = 1 << 16;  // keep every input fast
  if (na > kMaxElements || nb > kMaxElements || nc > kMaxElements || nd > kMaxElements ||
      p.flops() > 2e6) {
    dgemm_destroy_plan(plan);
    return;
  }
  const std::size_t asz = dgemm::dtype_size(p.a_type), bsz = dgemm::dtype_size(p.b_type),
                    csz = dgemm::dtype_size(p.c_type), dsz = dgemm::dtype_size(p.d_type);
  std::mt19937 rng(in.take<uint32_t>());
  Guarded A(std::size_t(na) * asz), B(std::size_t(nb) * bsz), C(std::size_t(nc) * csz), D(std::size_t(nd) * dsz, 0xCD);
  fill(p.a_type, A.data(), na, rng);
  fill(p.b_type, B.data(), nb, rng);
  fill(p.c_type, C.data(), nc, rng);
  const int64_t bias_len = !work ? 0 : e.bias_mode == dgemm::VectorMode::PerRow ? p.m : p.n;
  const int64_t scale_len = !work                                        ? 1
                            : e.scale_mode == dgemm::VectorMode::PerTensor ? 1
                            : e.scale_mode == dgemm::VectorMode::PerRow    ? p.m
                                                                           : p.n;
  Vectors v{Guarded(std::size_t(bias_len) * 4), Guarded(std::size_t(scale_len) * 4),
            Guarded(std::size_t(scale_len) * 4)};
  fill(e.bias_type, v.bias.data(), bias_len, rng);
  for (int64_t i = 0; i < scale_len; ++i) {
    reinterpret_cast<float*>(v.scale.data())[i] = float(1 + rng() % 4) * 0.5f;
    reinterpret_cast<int32_t*>(v.zero.data())[i] = int32_t(rng() % 7) - 3;
  }
  const std::vector<unsigned char> before_a = A.bytes, before_b = B.bytes, before_c = C.bytes,
                                   before_d = D.bytes, before_bias = v.bias.bytes, before_scale = v.scale.bytes,
                                   before_zero = v.zero.bytes;

  // Execute-time arguments, broken now and then on purpose: `bad_args` (the args struct, its
  // scalar mode: checked even when there is nothing to compute) or `must_fail` (anything the
  // computation reads, and the workspace).
  bool bad_args = false, must_fail = false;
  dgemm_status_t want_failure = DGEMM_STATUS_INVALID_ARGUMENT;
  dgemm_args_t args;
  dgemm_args_init(&args);
  float alpha_cell[2] = {scalar(in), 0}, beta_cell[2] = {e.reads_c() ? scalar(in) : 0.0f, 0};
  const bool use_args = !in.one_in(8);
  const unsigned mode = in.pick(3);
  args.scalar_mode = dgemm_scalar_mode_t(mode);
  args.alpha = scalar(in);
  args.beta = e.reads_c() || in.one_in(16) ? scalar(in) : 0.0f;
  if (mode == DGEMM_SCALARS_DEVICE) {
    args.alpha_ptr = alpha_cell;
    args.beta_ptr = beta_cell;
  }
  args.bias = v.bias.data();
  args.scale = reinterpret_cast<const float*>(v.scale.data());
  args.zero_point = reinterpret_cast<const int32_t*>(v.zero.data());
  const bool needs_vectors = e.bias_mode != dgemm::VectorMode::None || e.scale_mode != dgemm::VectorMode::None ||
                             e.zero_point || mode == DGEMM_SCALARS_DEVICE;
  if (use_args && needs_vectors && in.one_in(6)) {
    // Break one thing the plan reads: NULL or one byte off.
    const unsigned which = in.pick(4);
    const bool null = in.one_in(2);
    if (which == 0 && e.bias_mode != dgemm::VectorMode::None && dgemm::dtype_size(e.bias_type) > 1) {
      args.bias = null ? nullptr : v.bias.data(1);
      must_fail = true;
    } else if (which == 1 && e.scale_mode != dgemm::VectorMode::None) {
      args.scale = null ? nullptr : reinterpret_cast<const float*>(v.scale.data(1));
      must_fail = true;
    } else if (which == 2 && e.zero_point) {
      args.zero_point = null ? nullptr : reinterpret_cast<const int32_t*>(v.zero.data(2));
      must_fail = true;
    } else if (which == 3 && mode == DGEMM_SCALARS_DEVICE) {
      args.alpha_ptr = null ? nullptr : reinterpret_cast<const float*>(reinterpret_cast<char*>(alpha_cell) + 1);
      bad_args = true;
    }
  }
  if (use_args && mode == DGEMM_SCALARS_HOST && args.beta != 0.0f && !e.reads_c()) bad_args = true;
  std::vector<unsigned char> args_store;
  const dgemm_args_t* x_arg = use_args ? versioned(in, args, args_store) : nullptr;
  if (x_arg && x_arg->struct_size != sizeof args) {
    const bool ok_size = x_arg->struct_size > sizeof args &&
                         std::all_of(args_store.begin() + sizeof args, args_store.begin() + x_arg->struct_size,
                                     [](unsigned char c) { return c == 0; });
    if (!ok_size) bad_args = true;
  }
  if (!use_args && (e.bias_mode != dgemm::VectorMode::None || e.scale_mode != dgemm::VectorMode::None ||
                    e.zero_point))
    must_fail = true;

  size_t ws_need = 0;
  if (dgemm_plan_workspace_size(plan, &ws_need) != DGEMM_STATUS_SUCCESS) violated("workspace size", where);
  const std::size_t ws_shift = in.pick(8);
  size_t ws_size = ws_need;
  if (ws_need > 0 && in.one_in(8)) {
    ws_size = in.pick(unsigned(std::min<size_t>(ws_need, 255)));
    if (!must_fail) want_failure = DGEMM_STATUS_INSUFFICIENT_WORKSPACE;
    must_fail = true;
  }
  Guarded W(ws_size, 0x3C, ws_shift);
  // A and B may be NULL when nothing reads them; the shift keeps element alignment.
  const void* a_ptr = p.k > 0 ? A.data() : nullptr;
  const void* b_ptr = p.k > 0 ? B.data() : nullptr;
  const dgemm_status_t xs = dgemm_execute(plan, a_ptr, b_ptr, e.reads_c() ? C.data() : nullptr, D.data(), x_arg,
                                          ws_size ? W.data() : nullptr, ws_size, nullptr);
  if (!valid_status(xs)) violated("execute status out of range", where);
  if (p.empty_output()) must_fail = false;  // nothing is read: only the args themselves are checked
  if (bad_args) {
    must_fail = true;
    want_failure = DGEMM_STATUS_INVALID_ARGUMENT;
  }
  if (A.bytes != before_a || B.bytes != before_b || C.bytes != before_c || v.bias.bytes != before_bias ||
      v.scale.bytes != before_scale || v.zero.bytes != before_zero)
    violated("an input was modified", where);
  if (!W.guards_intact()) violated("written outside the workspace", where);
  if (xs != DGEMM_STATUS_SUCCESS) {
    if (D.bytes != before_d) violated("D written by a failing execute", where);
    if (dgemm_last_error()[0] == '\0') violated("execute failure without a message", where);
    if (!must_fail) violated("valid execute refused", where);
    if (must_fail && xs != want_failure) violated("wrong failure status", where);
    dgemm_destroy_plan(plan);
    return;
  }
  if (must_fail) violated("invalid execute arguments accepted", where);
  if (!D.guards_intact()) violated("written outside D", where);

  // Every element of D (and nothing else of its buffer) against the reference.
  double alpha = e.alpha, beta = e.beta;
  if (x_arg && mode == DGEMM_SCALARS_HOST) {
    alpha = args.alpha;
    beta = args.beta;
  } else if (x_arg && mode == DGEMM_SCALARS_DEVICE) {
    alpha = alpha_cell[0];
    beta = e.reads_c() ? beta_cell[0] : 0.0;
  }
  dgemm::ExecArgs rx;
  rx.a = A.data();
  rx.b = B.data();
  rx.c = C.data();
  rx.bias = v.bias.data();
  rx.scale = reinterpret_cast<const float*>(v.scale.data());
  rx.zero_point = reinterpret_cast<const int32_t*>(v.zero.data());
  std::vector<char> inside(std::size_t(nd) * dsz, 0);
  for (int64_t bt = 0; work && bt < p.batch_count; ++bt)
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) {
        const int64_t off = bt * p.stride_d + dgemm_test::ref_offset(p, i, j, p.ldd);
        std::memset(&inside[std::size_t(off) * dsz], 1, dsz);
        const double got = dgemm::load_as_double(p.d_type, D.data(), off);
        const dgemm_test::RefValue r = dgemm_test::reference_element(p, e, rx, alpha, beta, bt, i, j);
        const double want = dgemm_test::reference_quantize(p, e, rx, i, j, r.z);
        const double lo = dgemm_test::reference_quantize(p, e, rx, i, j, r.z - r.tol);
        const double hi = dgemm_test::reference_quantize(p, e, rx, i, j, r.z + r.tol);
        const bool same = (std::isnan(got) && std::isnan(want)) || got == want || got == lo || got == hi ||
                          (got >= std::min(lo, hi) && got <= std::max(lo, hi)) ||
                          (std::isnan(r.z) || std::isnan(lo) || std::isnan(hi));
        if (!same) {
          char msg[256];
          std::snprintf(msg, sizeof msg, "D[%" PRId64 "](%" PRId64 ", %" PRId64 ") = %g, reference %g (alpha %g beta %g)",
                        bt, i, j, got, want, alpha, beta);
          violated(msg, where);
        }
      }
  for (std::size_t i = 0; i < inside.size(); ++i)
    if (!inside[i] && D.bytes[Guarded::kGuard + i] != 0xCD) violated("a byte of D's buffer between elements was written", where);
  dgemm_destroy_plan(plan);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  run(in);
  return 0;
}
