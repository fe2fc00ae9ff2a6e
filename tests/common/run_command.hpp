// The `deepgemm run` command line that reproduces a test's problem: every field of the problem and
// epilogue that the tool's flags can express (src/tools/cli_options.cpp has the grammar; DGEMM_1.1
// f32 scales in the layouts its --a-scale/--b-scale/--d-scale make), then a shell comment naming what
// they cannot ("# not expressible: misalign=1"), so that the line still runs when pasted and a
// reader knows what it leaves out. The GPU tests print it with every failure ("repro: deepgemm
// run ..."). Plain C++ over the core types (no CUDA, no Boost), so CPU tests use it too;
// tests/cpu/test_run_command.cpp parses lines back with the tool's own parser and checks that they
// give the same problem and epilogue, field by field.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "core/problem.hpp"

namespace dgemm_test {

// What a line carries besides the problem and the epilogue.
struct RunExtras {
  std::string force;            // --force-kernel: a family ("sm90") or a configuration name; "" = the planner chooses
  std::string device = "cuda";  // --device
  int misalign = 0;             // elements the test added to the operand pointers (not expressible)
  dgemm::ScalarMode scalars = dgemm::ScalarMode::FromPlan;  // execute-time scalars (not expressible)
};

namespace run_command_detail {

// Shortest text that reads back as the same float (9 significant digits always do); nan/inf as
// strtod reads them.
inline std::string float_text(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", double(v));
  return buf;
}

// The tool's names of a vector mode (--bias, --scale); "" when it has none.
inline const char* vector_flag(dgemm::VectorMode m, bool allow_tensor) {
  switch (m) {
    case dgemm::VectorMode::None: return "none";
    case dgemm::VectorMode::PerRow: return "row";
    case dgemm::VectorMode::PerColumn: return "col";
    case dgemm::VectorMode::PerTensor: return allow_tensor ? "tensor" : "";
  }
  return "";
}

// The tool's name of a scale mode (--a-scale, --b-scale, --d-scale) when the description is what
// its flag makes (src/tools/cli_options.cpp, ScalingOptions::for_problem): f32; vec128 MN-major
// with ld = rows rounded up to a multiple of 4, blk128 K-major, the others MN-major, all three
// packed; `stride` between batches. "" otherwise.
inline const char* scale_flag(const dgemm::ScaleDesc& s, int64_t outer, int64_t inner, int64_t stride) {
  using namespace dgemm;
  const ScaleLayout layout = s.mode == ScaleMode::Blk128x128 ? ScaleLayout::KMajor : ScaleLayout::MnMajor;
  const int64_t packed = std::max<int64_t>(1, layout == ScaleLayout::MnMajor ? s.rows(outer) : s.cols(inner));
  const int64_t tool_ld = s.mode == ScaleMode::Vec128 ? std::max<int64_t>(1, (outer + 3) / 4 * 4) : packed;
  const int64_t ld = s.ld == 0 ? packed : s.ld;
  if (s.type != ScaleType::F32 || s.layout != layout || ld != tool_ld || s.stride != stride) return "";
  switch (s.mode) {
    case ScaleMode::None: return "none";
    case ScaleMode::PerTensor: return "tensor";
    case ScaleMode::OuterVec: return "outer";
    case ScaleMode::Vec128: return "vec128";
    case ScaleMode::Blk128x128: return "blk128";
  }
  return "";
}

}  // namespace run_command_detail

// "deepgemm run --device cuda --m .. --n .. --k .. --dtype .. --out-dtype .. [flags that differ
// from the tool's defaults] [--force-kernel NAME] [  # not expressible: ...]". Leading dimensions
// and batch strides are given only when they are not the packed values the tool derives; m, n, k and
// the types always are.
inline std::string run_command(const dgemm::GemmProblem& p, const dgemm::Epilogue& e, const RunExtras& x = {}) {
  using namespace dgemm;
  using run_command_detail::float_text;
  using run_command_detail::scale_flag;
  using run_command_detail::vector_flag;
  std::string cmd = "deepgemm run";
  std::vector<std::string> notes;
  auto flag = [&](const std::string& name, const std::string& value) {
    cmd += " --" + name;
    if (!value.empty()) cmd += " " + value;
  };
  if (!x.device.empty()) flag("device", x.device);
  flag("m", std::to_string(p.m));
  flag("n", std::to_string(p.n));
  flag("k", std::to_string(p.k));

  // Types, against the tool's defaults: D = the input type (i32 for i8, bf16 for fp8), C = D,
  // compute i32 for i8 inputs and f32 otherwise.
  if (p.a_type == p.b_type) {
    flag("dtype", dtype_name(p.a_type));
  } else {
    flag("a-dtype", dtype_name(p.a_type));
    flag("b-dtype", dtype_name(p.b_type));
  }
  flag("out-dtype", dtype_name(p.d_type));
  if (p.c_type != p.d_type) flag("c-dtype", dtype_name(p.c_type));
  const DType cli_compute = p.a_type == DType::I8 ? DType::I32 : DType::F32;
  if (p.compute_type != cli_compute) notes.push_back(std::string("compute=") + dtype_name(p.compute_type));

  // Layout.
  if (p.op_a == Op::T) flag("trans-a", "");
  if (p.op_b == Op::T) flag("trans-b", "");
  if (p.order == Order::ColMajor) flag("order", "col");
  struct Ld {
    const char* name;
    int64_t ld, rows, cols;
  };
  const Ld lds[] = {{"lda", p.lda, p.a_rows(), p.a_cols()}, {"ldb", p.ldb, p.b_rows(), p.b_cols()},
                    {"ldc", p.ldc, p.m, p.n}, {"ldd", p.ldd, p.m, p.n}};
  int64_t given[4] = {0, 0, 0, 0};  // the --ld* values on the line (0: not given, packed)
  for (int i = 0; i < 4; ++i) {
    const Ld& l = lds[i];
    if (l.ld != 0 && l.ld != p.min_ld(l.rows, l.cols)) {
      given[i] = l.ld;
      flag(l.name, std::to_string(l.ld));
    }
  }
  if (p.batch_count != 1) flag("batch", std::to_string(p.batch_count));
  if (p.batch_count > 1) {
    // The stride the tool derives without --stride-*: one stored matrix, its outer extent times
    // the given ld or else its inner extent (cli_options.cpp, "packed batches").
    const bool row = p.order == Order::RowMajor;
    const int64_t strides[] = {p.stride_a, p.stride_b, p.stride_c, p.stride_d};
    const char* names[] = {"stride-a", "stride-b", "stride-c", "stride-d"};
    for (int i = 0; i < 4; ++i) {
      const int64_t outer = row ? lds[i].rows : lds[i].cols, inner = row ? lds[i].cols : lds[i].rows;
      if (strides[i] != outer * (given[i] ? given[i] : inner)) flag(names[i], std::to_string(strides[i]));
    }
  }
  if (p.grouping.grouped()) notes.push_back(p.grouping.to_string().substr(1));  // " grouped=..."
  // Input scales: shared by the batches (stride 0) as the tool makes them.
  for (auto [name, desc, outer] : {std::tuple{"a-scale", &p.a_scale, p.m}, std::tuple{"b-scale", &p.b_scale, p.n}}) {
    if (!desc->active()) continue;
    const char* mode = scale_flag(*desc, outer, p.k, 0);
    if (*mode) flag(name, mode);
    else notes.push_back(std::string(name[0] == 'a' ? "a_scale=" : "b_scale=") + desc->to_string());
  }

  // Epilogue.
  if (e.alpha != 1.0f) flag("alpha", float_text(e.alpha));  // NaN too
  if (e.beta != 0.0f || std::signbit(e.beta)) flag("beta", float_text(e.beta));  // -0 is a different key
  if (e.bias_mode != VectorMode::None) {
    const char* b = vector_flag(e.bias_mode, false);
    if (*b) flag("bias", b);
    else notes.push_back(std::string("bias=") + vector_mode_name(e.bias_mode));
  }
  if (e.bias_type != DType::F32) flag("bias-dtype", dtype_name(e.bias_type));
  if (e.activation != Activation::None) flag("act", activation_name(e.activation));
  if (e.scale_mode != VectorMode::None) flag("scale", vector_flag(e.scale_mode, true));
  if (e.zero_point) flag("zero-point", "");
  if (!e.saturate) flag("no-saturate", "");
  if (e.d_scale.active()) {
    // The tool's D scales: laid out as a vec128 A scale, one tensor after the other.
    const int64_t stride = p.batch_count > 1 ? std::max<int64_t>(1, (p.m + 3) / 4 * 4) * ((p.n + 127) / 128) : 0;
    const char* mode = e.d_scale.mode == ScaleMode::Vec128 ? scale_flag(e.d_scale, p.m, p.n, stride) : "";
    if (*mode) flag("d-scale", mode);
    else notes.push_back("d_scale=" + e.d_scale.to_string());
  }
  if (e.amax_d) flag("amax-d", "");

  if (!x.force.empty()) flag("force-kernel", x.force);
  if (x.misalign != 0) notes.push_back("misalign=" + std::to_string(x.misalign));
  if (x.scalars == ScalarMode::Host) notes.push_back("scalars=host");
  if (x.scalars == ScalarMode::Device) notes.push_back("scalars=device");
  if (!notes.empty()) {
    cmd += "  # not expressible:";
    for (const std::string& n : notes) cmd += " " + n;
  }
  return cmd;
}

}  // namespace dgemm_test
