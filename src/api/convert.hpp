// Conversion of the public C structs into the core value types, with the checks that belong to
// the C boundary (struct_size, reserved fields, enum ranges). Used by the C entry points and by
// tools that accept the same structs.
#pragma once

#include <cstddef>
#include <cstring>
#include <type_traits>

#include "core/error.hpp"
#include "core/problem.hpp"
#include "deepgemm/deepgemm.h"

namespace dgemm::api {

template <class T>
inline void require_non_null(const T* p, const char* name) {
  if (p == nullptr) fail(Status::InvalidArgument, name, " is NULL");
}

// The start of every 1.0 *_init function: refuses NULL (naming the parameter `name`), zeroes the
// struct (zero means "off" for every field) and records this library's size.
template <class Struct>
inline void init_struct(Struct* s, const char* name) {
  require_non_null(s, name);
  std::memset(s, 0, sizeof *s);
  s->struct_size = sizeof *s;
}

// Each public struct's size in the release that introduced it: a caller built against that
// release passes this much, never less. A struct that grows must pin its first size here (the
// default is today's size) and never change it; tests/abi pins the 1.0 layouts as well.
template <class Struct>
inline constexpr std::size_t kFirstStructSize = sizeof(Struct);
template <>
inline constexpr std::size_t kFirstStructSize<dgemm_problem_t> = 200;
template <>
inline constexpr std::size_t kFirstStructSize<dgemm_epilogue_t> = 96;
template <>
inline constexpr std::size_t kFirstStructSize<dgemm_plan_options_t> = 88;
template <>
inline constexpr std::size_t kFirstStructSize<dgemm_args_t> = 120;
static_assert(sizeof(dgemm_problem_t) >= 200 && sizeof(dgemm_epilogue_t) >= 96 && sizeof(dgemm_plan_options_t) >= 88 &&
                  sizeof(dgemm_args_t) >= 120,
              "a public struct shrank: that breaks every caller built against 1.0");

// No version of a public struct will ever be this large: a bigger struct_size is garbage, and
// reading that far past the caller's struct could fault.
constexpr std::size_t kMaxStructSize = 4096;

// A public struct as this library understands it, whatever the header the caller was built
// against: its size (`size`, read from the field `size_field` names) may be anything from the
// struct's first size up. The bytes the caller's size covers are copied into a zeroed struct, so
// fields added after the caller's release read as zero (every field added later means "off" when
// zero); bytes beyond our struct, from a newer caller, must be zero, since a caller asking for
// something this library does not know must get an error, not silence. Then the reserved words
// must be zero. Throws naming the struct and the field.
template <class Struct>
inline Struct read_struct(const void* s, std::size_t size, const char* name, const char* size_field,
                          std::size_t first_size = kFirstStructSize<Struct>) {
  static_assert(std::is_trivially_copyable_v<Struct>, "public structs are plain C structs");
  if (size < first_size || size > kMaxStructSize) {
    fail(Status::InvalidArgument, name, size_field, " = ", size, ": expected at least ", first_size,
         " (this library's is ", sizeof(Struct), "; initialize the struct with its *_init function)");
  }
  Struct out;
  std::memset(&out, 0, sizeof out);
  std::memcpy(&out, s, size < sizeof out ? size : sizeof out);
  const auto* bytes = static_cast<const unsigned char*>(s);
  for (std::size_t i = sizeof out; i < size; ++i) {
    if (bytes[i] != 0) {
      fail(Status::InvalidArgument, name, " byte ", i, " = ", int(bytes[i]), ": a field this library (", sizeof out,
           "-byte struct) does not know must be 0");
    }
  }
  for (std::size_t i = 0; i < sizeof(out.reserved) / sizeof(out.reserved[0]); ++i) {
    if (out.reserved[i] != 0) fail(Status::InvalidArgument, name, "->reserved[", i, "] = ", out.reserved[i], ": must be 0");
  }
  return out;
}

// The 1.0 structs, whose size is their first field.
template <class Struct>
inline Struct read_struct(const Struct* s, const char* name, std::size_t first_size = kFirstStructSize<Struct>) {
  return read_struct<Struct>(s, s->struct_size, name, "->struct_size", first_size);
}

// The integer a caller stored in an enum-typed field or parameter. Loading a value outside the
// enumerators through the enum type is undefined behaviour in C++ (UBSan flags it), and callers
// may store anything, so the bytes are read as an int and range-checked afterwards.
template <class Enum>
inline int enum_value(const Enum& field) {
  static_assert(std::is_enum_v<Enum> && sizeof(Enum) == sizeof(int), "C enums are int-sized");
  int v;
  std::memcpy(&v, &field, sizeof v);
  return v;
}

template <class Enum>
inline Enum checked_enum(int value, int max, const char* name, const char* type) {
  if (value < 0 || value > max) fail(Status::InvalidArgument, name, " = ", value, ": not a ", type);
  return static_cast<Enum>(value);
}

// Checks and converts; throws Error naming the field. Leading dimensions come back resolved.
// `grouping` (from a DGEMM_EXT_GROUPED extension) takes part in the validation.
inline GemmProblem convert_problem(const dgemm_problem_t* caller, const Grouping& grouping = Grouping()) {
  const dgemm_problem_t q = read_struct(caller, "problem");
  const dgemm_problem_t* p = &q;
  GemmProblem g;
  g.grouping = grouping;
  g.m = p->m;
  g.n = p->n;
  g.k = p->k;
  g.a_type = checked_enum<DType>(enum_value(p->a_type), kNumDTypes - 1, "problem->a_type", "dgemm_dtype_t");
  g.b_type = checked_enum<DType>(enum_value(p->b_type), kNumDTypes - 1, "problem->b_type", "dgemm_dtype_t");
  g.c_type = checked_enum<DType>(enum_value(p->c_type), kNumDTypes - 1, "problem->c_type", "dgemm_dtype_t");
  g.d_type = checked_enum<DType>(enum_value(p->d_type), kNumDTypes - 1, "problem->d_type", "dgemm_dtype_t");
  g.compute_type =
      checked_enum<DType>(enum_value(p->compute_type), kNumDTypes - 1, "problem->compute_type", "dgemm_dtype_t");
  g.op_a = checked_enum<Op>(enum_value(p->op_a), 1, "problem->op_a", "dgemm_op_t");
  g.op_b = checked_enum<Op>(enum_value(p->op_b), 1, "problem->op_b", "dgemm_op_t");
  g.order = checked_enum<Order>(enum_value(p->order), 1, "problem->order", "dgemm_order_t");
  g.lda = p->lda;
  g.ldb = p->ldb;
  g.ldc = p->ldc;
  g.ldd = p->ldd;
  g.batch_count = p->batch_count;
  g.stride_a = p->stride_a;
  g.stride_b = p->stride_b;
  g.stride_c = p->stride_c;
  g.stride_d = p->stride_d;
  for (auto [name, v] : {std::pair{"problem->lda", g.lda}, std::pair{"problem->ldb", g.ldb},
                         std::pair{"problem->ldc", g.ldc}, std::pair{"problem->ldd", g.ldd}}) {
    if (v < 0) fail(Status::InvalidArgument, name, " = ", v, ": must be >= 0 (0 means packed)");
  }
  g.resolve_and_validate();
  return g;
}

// NULL means the identity epilogue.
inline Epilogue convert_epilogue(const dgemm_epilogue_t* caller, const GemmProblem& p) {
  Epilogue out;
  if (caller == nullptr) return out;
  const dgemm_epilogue_t copy = read_struct(caller, "epilogue");
  const dgemm_epilogue_t* e = &copy;
  constexpr uint32_t kKnownFlags = DGEMM_EPILOGUE_SATURATE | DGEMM_EPILOGUE_ZERO_POINT;
  if (e->flags & ~kKnownFlags) fail(Status::InvalidArgument, "epilogue->flags = 0x", std::hex, e->flags, ": unknown bits");
  out.alpha = e->alpha;
  out.beta = e->beta;
  out.bias_mode =
      checked_enum<VectorMode>(enum_value(e->bias_mode), 3, "epilogue->bias_mode", "dgemm_vector_mode_t");
  out.bias_type = checked_enum<DType>(enum_value(e->bias_type), kNumDTypes - 1, "epilogue->bias_type", "dgemm_dtype_t");
  out.activation =
      checked_enum<Activation>(enum_value(e->activation), 4, "epilogue->activation", "dgemm_activation_t");
  out.scale_mode =
      checked_enum<VectorMode>(enum_value(e->scale_mode), 3, "epilogue->scale_mode", "dgemm_vector_mode_t");
  out.saturate = (e->flags & DGEMM_EPILOGUE_SATURATE) != 0;
  out.zero_point = (e->flags & DGEMM_EPILOGUE_ZERO_POINT) != 0;
  out.validate(p);
  return out;
}

}  // namespace dgemm::api
