// The C boundary of DGEMM_1.1 scaling: converts a dgemm_scaling_t (DGEMM_EXT_SCALING) into the
// problem's and epilogue's scale descriptions, and a dgemm_scale_args_t (DGEMM_EXT_SCALE_ARGS)
// into the execute-time pointers, with the checks that belong here (struct_size, reserved words,
// enum ranges, required and aligned pointers). The meaning lives in core/scaling.
#pragma once

#include <cstdint>

#include "api/convert.hpp"
#include "api/extensions.hpp"
#include "core/error.hpp"
#include "core/problem.hpp"
#include "core/scaling.hpp"
#include "deepgemm/deepgemm.h"

namespace dgemm::api {

static_assert(int(ScaleMode::Blk128x128) == DGEMM_SCALE_BLK128x128, "scale mode numbers differ");
static_assert(int(ScaleType::UE8M0) == DGEMM_SCALE_TYPE_UE8M0, "scale type numbers differ");
static_assert(int(ScaleLayout::KMajor) == DGEMM_SCALE_K_MAJOR, "scale layout numbers differ");

inline ScaleDesc convert_scale_desc(const dgemm_scale_desc_t& d, const char* name) {
  if (d.reserved0 != 0) fail(Status::InvalidArgument, "scaling->", name, ".reserved0 = ", d.reserved0, ": must be 0");
  ScaleDesc s;
  const std::string field = std::string("scaling->") + name;
  s.mode = checked_enum<ScaleMode>(enum_value(d.mode), 4, (field + ".mode").c_str(), "dgemm_scale_mode_t");
  s.type = checked_enum<ScaleType>(enum_value(d.type), 1, (field + ".type").c_str(), "dgemm_scale_type_t");
  s.layout =
      checked_enum<ScaleLayout>(enum_value(d.layout), 1, (field + ".layout").c_str(), "dgemm_scale_layout_t");
  s.ld = d.ld;
  s.stride = d.stride;
  return s;
}

// DGEMM_EXT_SCALING (may be null: no scaling) into p and e, then the core's checks.
inline void apply_scaling(const dgemm_ext_header_t* h, GemmProblem& p, Epilogue& e) {
  if (h == nullptr) return;
  const dgemm_scaling_t copy = read_extension<dgemm_scaling_t>(h, "scaling");
  const dgemm_scaling_t* s = &copy;
  if (s->flags & ~uint32_t(DGEMM_SCALING_AMAX_D))
    fail(Status::InvalidArgument, "scaling->flags = 0x", std::hex, s->flags, ": unknown bits");
  if (s->reserved0 != 0) fail(Status::InvalidArgument, "scaling->reserved0 = ", s->reserved0, ": must be 0");
  p.a_scale = convert_scale_desc(s->a_scale, "a_scale");
  p.b_scale = convert_scale_desc(s->b_scale, "b_scale");
  e.d_scale = convert_scale_desc(s->d_scale, "d_scale");
  e.amax_d = (s->flags & DGEMM_SCALING_AMAX_D) != 0;
  resolve_and_validate_scaling(p, e);
}

inline void check_scale_pointer(const void* ptr, const ScaleDesc& d, const char* name) {
  if (ptr == nullptr)
    fail(Status::InvalidArgument, name, " is NULL but the plan has a ", scale_mode_name(d.mode), " scale tensor");
  const std::size_t size = scale_type_size(d.type);
  if (reinterpret_cast<std::uintptr_t>(ptr) % size != 0)
    fail(Status::InvalidArgument, name, " = ", ptr, ": not aligned to its element size (", size, " bytes)");
}

// DGEMM_EXT_SCALE_ARGS (may be null) into x, for a plan of p and e: required exactly when the
// plan has scaling; its pointers are checked unless the output is empty (nothing is then read).
inline void apply_scale_args(const dgemm_ext_header_t* h, const GemmProblem& p, const Epilogue& e, ExecArgs& x) {
  if (!needs_scaling(p, e)) {
    if (h) fail(Status::InvalidArgument, "ext: DGEMM_EXT_SCALE_ARGS given, but the plan has no scaling (made without DGEMM_EXT_SCALING)");
    return;
  }
  if (h == nullptr) {
    fail(Status::InvalidArgument, "ext: the plan has scaling (", scaling_summary(p, e),
         ") but no DGEMM_EXT_SCALE_ARGS was given (use dgemm_execute_ext)");
  }
  const dgemm_scale_args_t copy = read_extension<dgemm_scale_args_t>(h, "scale_args");
  const dgemm_scale_args_t* s = &copy;
  if (p.empty_output()) return;
  if (p.k > 0 && p.a_scale.active()) check_scale_pointer(s->a_scale, p.a_scale, "scale_args->a_scale");
  if (p.k > 0 && p.b_scale.active()) check_scale_pointer(s->b_scale, p.b_scale, "scale_args->b_scale");
  if (e.d_scale.active()) check_scale_pointer(s->d_scale, e.d_scale, "scale_args->d_scale");
  if (e.amax_d) {
    if (s->amax_d == nullptr) fail(Status::InvalidArgument, "scale_args->amax_d is NULL but the plan has DGEMM_SCALING_AMAX_D");
    if (reinterpret_cast<std::uintptr_t>(s->amax_d) % alignof(float) != 0)
      fail(Status::InvalidArgument, "scale_args->amax_d = ", static_cast<const void*>(s->amax_d),
           ": not aligned to its element size (4 bytes)");
  }
  x.a_scale = p.a_scale.active() ? s->a_scale : nullptr;
  x.b_scale = p.b_scale.active() ? s->b_scale : nullptr;
  x.d_scale = e.d_scale.active() ? s->d_scale : nullptr;
  x.amax_d = e.amax_d ? s->amax_d : nullptr;
}

}  // namespace dgemm::api
