// The bodies of the C entry points that other entry points build on (dgemm_create_plan_many runs
// create_plan per problem, dgemm_execute_many checks every problem with prepare_execute before it
// runs any). Defined in deepgemm.cpp; they throw Error, and the C functions catch it.
#pragma once

#include <cstddef>

#include "core/problem.hpp"
#include "deepgemm/deepgemm.h"

namespace dgemm::api {

// dgemm_create_plan_ext without the exception firewall.
void create_plan(dgemm_context_t ctx, const dgemm_problem_t* problem, const dgemm_epilogue_t* epilogue,
                 const dgemm_plan_options_t* options, const void* ext, dgemm_plan_t* plan);

// Every check of dgemm_execute_ext, and the arguments the plan's executable will get in *out.
// Returns false when there is nothing to compute (m or n = 0): then nothing may be touched.
bool prepare_execute(dgemm_plan_t plan, const void* A, const void* B, const void* C, void* D,
                     const dgemm_args_t* args, const void* ext, void* workspace, size_t workspace_size,
                     void* stream, ExecArgs* out);

}  // namespace dgemm::api
