// Command-line options shared by the tool's subcommands: a small flag parser and the flags that
// describe a GEMM problem and its epilogue (--m/--n/--k, types, layout, epilogue), turned into the
// public API's descriptor structs.
#pragma once

#include <climits>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "deepgemm/deepgemm.h"

namespace dgemm::tools {

// "--name value", "--name=value" and bare "--flag" arguments. Unknown names are errors, reported
// by `check_all_used`; so is a flag given twice. Every bad value throws std::invalid_argument
// naming the flag and the value (main turns it into kExitUsage, commands.hpp).
class Flags {
 public:
  Flags(int argc, char** argv);
  bool has(const std::string& name) const;
  std::string get(const std::string& name, const std::string& fallback) const;
  // The whole value must be a base-10 integer in [lo, hi]; a flag given without a value is an
  // error, not its default.
  long long get_int(const std::string& name, long long fallback, long long lo = LLONG_MIN,
                    long long hi = LLONG_MAX) const;
  double get_double(const std::string& name, double fallback) const;  // finite numbers only
  // One of `choices`; the error lists them.
  std::string get_choice(const std::string& name, const std::string& fallback,
                         std::initializer_list<const char*> choices) const;
  bool get_bool(const std::string& name) const;  // a bare flag, or =1/true/0/false
  // Throws std::invalid_argument naming the first flag that no getter asked for.
  void check_all_used() const;

 private:
  std::map<std::string, std::string> values_;
  mutable std::map<std::string, bool> used_;
};

// Problem and epilogue from the flags:
//   --m --n --k (default 1024)  --dtype T (A and B; default bf16)  --a-dtype/--b-dtype
//   --out-dtype T (default: the input type, i32 for i8)  --c-dtype T (default: out type)
//   --trans-a --trans-b  --order row|col  --lda/--ldb/--ldc/--ldd  --batch B
//   --stride-a/--stride-b/--stride-c/--stride-d S (default packed; only with --batch > 1)
//   --alpha X --beta X  --bias none|row|col  --bias-dtype T  --act none|relu|gelu_tanh|gelu_erf|silu
//   --scale none|tensor|row|col  --zero-point  --no-saturate
struct GemmOptions {
  dgemm_problem_t problem;
  dgemm_epilogue_t epilogue;
};
GemmOptions parse_gemm_options(const Flags& flags);
const char* gemm_options_help();

// DGEMM_1.1 scaling from the flags; the same flags mean the same for plan, run and warm:
//   --a-scale/--b-scale none|tensor|outer|vec128|blk128  f32 scales of A / B, shared by every
//       batch; vec128 MN-major with ld = m / n rounded up to a multiple of 4 (DeepGEMM's
//       TMA-aligned layout), blk128 K-major and packed (deepgemm-bench's fp8t and fp8b rows)
//   --d-scale none|vec128  f32 1 x 128 block scales of an FP8 D, computed by the epilogue
//       (DeepGEMM's output quantization), laid out as a vec128 A scale, one tensor per batch
struct ScalingOptions {
  dgemm_scaling_t scaling;  // the modes and layouts; for_problem sets ld and stride
  bool active = false;      // any mode other than none: plans need the extension
  // The scaling for `problem`: the leading dimensions above, D's batch stride, and for a grouped
  // problem the input scales' group strides (one tensor per group where the operand has one).
  dgemm_scaling_t for_problem(const dgemm_problem_t& problem, bool grouped = false) const;
};
ScalingOptions parse_scaling_options(const Flags& flags);
const char* scaling_options_help();

// A grouped (mixture-of-experts) problem from the flags, for plan and warm (DGEMM_1.1 grouped
// problems: the group rows come at run time, so planning needs only the layout):
//   --groups G  --group-layout contiguous|masked (default contiguous)  --group-align A (contiguous;
//   default 1). B is G weights of n x k (stride n * k, as stored: op(B) from --trans-b); masked: A
//   and D are G slots of m rows; contiguous: they are m rows the groups share.
struct GroupingOptions {
  int64_t groups = 0;  // 0: not grouped
  bool masked = false;
  int64_t align = 1;
  int64_t expected_m = 0;  // the planning hint (0: none)
  // Sets the problem's batch count and strides for the layout (nothing when not grouped).
  void apply(dgemm_problem_t* problem) const;
  // The plan-time extension (valid when grouped).
  dgemm_grouped_t extension() const;
};
GroupingOptions parse_grouping_options(const Flags& flags);
const char* grouping_options_help();

// --device: "auto", "cpu", "cuda" or "cuda:N"; throws std::invalid_argument naming the value.
void parse_device(const std::string& value, dgemm_device_kind_t* kind, int* index);

// "bf16" -> DGEMM_DTYPE_BF16 etc.; throws std::invalid_argument naming the flag on an unknown name.
dgemm_dtype_t parse_dtype(const std::string& flag, const std::string& name);
const char* dtype_label(dgemm_dtype_t t);

}  // namespace dgemm::tools
