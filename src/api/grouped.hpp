// The C boundary of grouped problems (deepgemm.h, "DGEMM_1.1: grouped problems"): converts the
// plan-time dgemm_grouped_t and the execute-time dgemm_group_args_t, with every host-side check,
// and the dgemm_create_plan_many / dgemm_execute_many bodies. Throws Error naming the field.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/problem.hpp"
#include "deepgemm/deepgemm.h"

struct dgemm_plan;

namespace dgemm::api {

void grouped_init(dgemm_grouped_t* g);
void group_args_init(dgemm_group_args_t* a);

// The grouping a DGEMM_EXT_GROUPED extension asks for (none for NULL). The layout-dependent
// rules that need the problem are GemmProblem::resolve_and_validate's.
Grouping convert_grouped(const dgemm_ext_header_t* ext);

// Checks the DGEMM_EXT_GROUP_ARGS extension against the plan (required iff the plan is grouped)
// and copies its pointers into *x. On a CPU context the arrays are host memory and every value is
// checked; a CUDA plan checks the pointers only (the kernel applies the clipping rule).
void convert_group_args(const dgemm_plan& plan, const dgemm_ext_header_t* ext, ExecArgs* x);

// dgemm_create_plan_many and dgemm_execute_many (api/plan_many.cpp).
void create_plan_many(dgemm_context_t ctx, int64_t count, const dgemm_problem_t* problems,
                      const dgemm_epilogue_t* epilogues, const dgemm_plan_options_t* options, dgemm_plan_t* plan);
void execute_many(dgemm_plan_t plan, const void* const* A, const void* const* B, const void* const* C,
                  void* const* D, const dgemm_args_t* args, void* workspace, size_t workspace_size, void* stream);

}  // namespace dgemm::api
