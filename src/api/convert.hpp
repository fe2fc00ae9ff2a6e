// Conversion of the public C structs into the core value types, with the checks that belong to
// the C boundary (struct_size, reserved fields, enum ranges). Used by the C entry points and by
// tools that accept the same structs.
#pragma once

#include "core/error.hpp"
#include "core/problem.hpp"
#include "deepgemm/deepgemm.h"

namespace dgemm::api {

template <class T>
inline void require_non_null(const T* p, const char* name) {
  if (p == nullptr) fail(Status::InvalidArgument, name, " is NULL");
}

// A public struct must come from its *_init function (or a compatible layout): struct_size at
// least the 1.0 size and at most ours, and reserved words zero.
template <class Struct>
inline void check_struct(const Struct* s, const char* name) {
  if (s->struct_size != sizeof(Struct)) {
    fail(Status::InvalidArgument, name, "->struct_size = ", s->struct_size, ": expected ", sizeof(Struct),
         " (initialize the struct with its *_init function)");
  }
  for (std::size_t i = 0; i < sizeof(s->reserved) / sizeof(s->reserved[0]); ++i) {
    if (s->reserved[i] != 0) fail(Status::InvalidArgument, name, "->reserved[", i, "] = ", s->reserved[i], ": must be 0");
  }
}

template <class Enum>
inline Enum checked_enum(int value, int max, const char* name, const char* type) {
  if (value < 0 || value > max) fail(Status::InvalidArgument, name, " = ", value, ": not a ", type);
  return static_cast<Enum>(value);
}

// Checks and converts; throws Error naming the field. Leading dimensions come back resolved.
// `grouping` (from a DGEMM_EXT_GROUPED extension) takes part in the validation.
inline GemmProblem convert_problem(const dgemm_problem_t* p, const Grouping& grouping = Grouping()) {
  check_struct(p, "problem");
  GemmProblem g;
  g.grouping = grouping;
  g.m = p->m;
  g.n = p->n;
  g.k = p->k;
  g.a_type = checked_enum<DType>(p->a_type, kNumDTypes - 1, "problem->a_type", "dgemm_dtype_t");
  g.b_type = checked_enum<DType>(p->b_type, kNumDTypes - 1, "problem->b_type", "dgemm_dtype_t");
  g.c_type = checked_enum<DType>(p->c_type, kNumDTypes - 1, "problem->c_type", "dgemm_dtype_t");
  g.d_type = checked_enum<DType>(p->d_type, kNumDTypes - 1, "problem->d_type", "dgemm_dtype_t");
  g.compute_type = checked_enum<DType>(p->compute_type, kNumDTypes - 1, "problem->compute_type", "dgemm_dtype_t");
  g.op_a = checked_enum<Op>(p->op_a, 1, "problem->op_a", "dgemm_op_t");
  g.op_b = checked_enum<Op>(p->op_b, 1, "problem->op_b", "dgemm_op_t");
  g.order = checked_enum<Order>(p->order, 1, "problem->order", "dgemm_order_t");
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
inline Epilogue convert_epilogue(const dgemm_epilogue_t* e, const GemmProblem& p) {
  Epilogue out;
  if (e == nullptr) return out;
  check_struct(e, "epilogue");
  constexpr uint32_t kKnownFlags = DGEMM_EPILOGUE_SATURATE | DGEMM_EPILOGUE_ZERO_POINT;
  if (e->flags & ~kKnownFlags) fail(Status::InvalidArgument, "epilogue->flags = 0x", std::hex, e->flags, ": unknown bits");
  out.alpha = e->alpha;
  out.beta = e->beta;
  out.bias_mode = checked_enum<VectorMode>(e->bias_mode, 3, "epilogue->bias_mode", "dgemm_vector_mode_t");
  out.bias_type = checked_enum<DType>(e->bias_type, kNumDTypes - 1, "epilogue->bias_type", "dgemm_dtype_t");
  out.activation = checked_enum<Activation>(e->activation, 4, "epilogue->activation", "dgemm_activation_t");
  out.scale_mode = checked_enum<VectorMode>(e->scale_mode, 3, "epilogue->scale_mode", "dgemm_vector_mode_t");
  out.saturate = (e->flags & DGEMM_EPILOGUE_SATURATE) != 0;
  out.zero_point = (e->flags & DGEMM_EPILOGUE_ZERO_POINT) != 0;
  out.validate(p);
  return out;
}

}  // namespace dgemm::api
