// Flag parsing and the problem/epilogue flags shared by the tool's subcommands.
#include "tools/cli_options.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <utility>

namespace dgemm::tools {

namespace {
// The value `v` of --name read whole by strtod (decimal, hex, inf, nan; no blanks, nothing after).
// Whether strtod reported ERANGE goes to `range_error`: the callers judge overflow differently.
double parse_number(const std::string& name, const std::string& v, bool* range_error) {
  if (v.empty()) throw std::invalid_argument("--" + name + " needs a value (a number)");
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(v.c_str(), &end);
  if (*end != '\0' || end == v.c_str() || std::isspace(static_cast<unsigned char>(v[0])))
    throw std::invalid_argument("--" + name + " = '" + v + "' is not a number");
  *range_error = errno == ERANGE;
  return x;
}
}  // namespace

Flags::Flags(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) throw std::invalid_argument("unexpected argument '" + arg + "' (flags start with --)");
    arg = arg.substr(2);
    auto eq = arg.find('=');
    std::string name = arg.substr(0, eq), value;
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) {
      value = argv[++i];
    }  // else a bare flag: ""
    if (!values_.emplace(name, value).second) throw std::invalid_argument("--" + name + " is given twice");
  }
}

bool Flags::has(const std::string& name) const {
  used_[name] = true;
  return values_.count(name) != 0;
}

std::string Flags::get(const std::string& name, const std::string& fallback) const {
  used_[name] = true;
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

long long Flags::get_int(const std::string& name, long long fallback, long long lo, long long hi) const {
  if (!has(name)) return fallback;
  const std::string v = get(name, "");
  if (v.empty()) throw std::invalid_argument("--" + name + " needs a value (an integer)");
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  // strtoll skips leading blanks and accepts a lone sign: neither is an integer here.
  if (*end != '\0' || !(std::isdigit(static_cast<unsigned char>(v[0])) || v[0] == '-' || v[0] == '+') ||
      end == v.c_str())
    throw std::invalid_argument("--" + name + " = '" + v + "' is not an integer");
  if (errno == ERANGE || x < lo || x > hi) {
    throw std::invalid_argument("--" + name + " = '" + v + "' is out of range [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "]");
  }
  return x;
}

double Flags::get_double(const std::string& name, double fallback) const {
  if (!has(name)) return fallback;
  const std::string v = get(name, "");
  bool range_error = false;
  const double x = parse_number(name, v, &range_error);
  if (range_error || !std::isfinite(x))
    throw std::invalid_argument("--" + name + " = '" + v + "' is not a finite number");
  return x;
}

std::string Flags::get_choice(const std::string& name, const std::string& fallback,
                              std::initializer_list<const char*> choices) const {
  const std::string v = get(name, fallback);
  std::string list;
  for (const char* c : choices) {
    if (v == c) return v;
    list += (list.empty() ? "" : ", ") + std::string(c);
  }
  throw std::invalid_argument("--" + name + " = '" + v + "': expected one of " + list);
}

bool Flags::get_bool(const std::string& name) const {
  if (!has(name)) return false;
  std::string v = get(name, "");
  if (v.empty() || v == "1" || v == "true") return true;
  if (v == "0" || v == "false") return false;
  throw std::invalid_argument("--" + name + " = '" + v + "' is not a boolean");
}

void Flags::check_all_used() const {
  for (const auto& kv : values_) {
    if (!used_.count(kv.first)) throw std::invalid_argument("unknown flag --" + kv.first);
  }
}

namespace {
struct DtypeName {
  const char* name;
  dgemm_dtype_t type;
};
constexpr DtypeName kDtypes[] = {{"f32", DGEMM_DTYPE_F32},    {"f16", DGEMM_DTYPE_F16},
                                 {"bf16", DGEMM_DTYPE_BF16},  {"e4m3", DGEMM_DTYPE_F8_E4M3},
                                 {"e5m2", DGEMM_DTYPE_F8_E5M2}, {"i8", DGEMM_DTYPE_I8},
                                 {"i32", DGEMM_DTYPE_I32}};

dgemm_vector_mode_t parse_vector_mode(const std::string& flag, const std::string& v, bool allow_tensor) {
  if (v == "none") return DGEMM_VECTOR_NONE;
  if (v == "row") return DGEMM_VECTOR_PER_ROW;
  if (v == "col" || v == "column") return DGEMM_VECTOR_PER_COLUMN;
  if (allow_tensor && v == "tensor") return DGEMM_VECTOR_PER_TENSOR;
  throw std::invalid_argument("--" + flag + " = '" + v + "': expected none, row, col" + (allow_tensor ? ", tensor" : ""));
}

// A scalar of the epilogue: any float the library takes, inf and nan included (BLAS semantics:
// they propagate; GPU test repro lines print them); a finite number must stay finite as a float
// (3.40282347e+38, FLT_MAX printed to 9 digits, rounds to FLT_MAX and is accepted).
float float_flag(const Flags& f, const std::string& name, double fallback) {
  if (!f.has(name)) return float(fallback);
  const std::string v = f.get(name, "");
  bool range_error = false;
  const double x = parse_number(name, v, &range_error);
  // A literal beyond double's range (1e999) is a mistake, not a request for infinity ("inf" is).
  if (range_error && std::isinf(x))
    throw std::invalid_argument("--" + name + " = '" + v + "' is not a finite number (write inf for infinity)");
  // Finite doubles below FLT_MAX + half an ulp (2^103) round to a finite float; converting one
  // beyond that would be undefined behaviour, so compare first.
  if (std::isfinite(x) && std::fabs(x) >= double(std::numeric_limits<float>::max()) + std::ldexp(1.0, 103))
    throw std::invalid_argument("--" + name + " = '" + v + "' does not fit a float (|x| <= 3.4028235e38)");
  return float(x);
}
}  // namespace

void parse_device(const std::string& value, dgemm_device_kind_t* kind, int* index) {
  *index = 0;
  if (value == "auto") {
    *kind = DGEMM_DEVICE_AUTO;
  } else if (value == "cpu") {
    *kind = DGEMM_DEVICE_CPU;
  } else if (value == "cuda") {
    *kind = DGEMM_DEVICE_CUDA;
  } else if (value.rfind("cuda:", 0) == 0 && value.size() > 5 && value.size() <= 5 + 9 &&
             value.find_first_not_of("0123456789", 5) == std::string::npos) {
    *kind = DGEMM_DEVICE_CUDA;
    *index = std::stoi(value.substr(5));  // at most 9 digits: fits an int
  } else {
    throw std::invalid_argument("--device = '" + value + "': expected auto, cpu, cuda or cuda:N (N a device number)");
  }
}

dgemm_dtype_t parse_dtype(const std::string& flag, const std::string& name) {
  for (const auto& d : kDtypes) {
    if (name == d.name) return d.type;
  }
  throw std::invalid_argument("--" + flag + " = '" + name + "': expected f32, f16, bf16, e4m3, e5m2, i8 or i32");
}

const char* dtype_label(dgemm_dtype_t t) {
  for (const auto& d : kDtypes) {
    if (d.type == t) return d.name;
  }
  return "?";
}

namespace {
// Packed batch strides (each matrix right after the previous one, as stored) of B, and of A, C
// and D when `a_c_d` (else 0: a contiguous grouped problem shares one A, C and D).
void set_packed_strides(dgemm_problem_t* p, bool a_c_d) {
  const bool row = p->order == DGEMM_ORDER_ROW_MAJOR;
  auto packed = [&](int64_t rows, int64_t cols, int64_t ld) {
    return (row ? rows : cols) * (ld ? ld : (row ? cols : rows));
  };
  const int64_t ar = p->op_a == DGEMM_OP_N ? p->m : p->k, ac = p->op_a == DGEMM_OP_N ? p->k : p->m;
  const int64_t br = p->op_b == DGEMM_OP_N ? p->k : p->n, bc = p->op_b == DGEMM_OP_N ? p->n : p->k;
  p->stride_b = packed(br, bc, p->ldb);
  p->stride_a = a_c_d ? packed(ar, ac, p->lda) : 0;
  p->stride_c = a_c_d ? packed(p->m, p->n, p->ldc) : 0;
  p->stride_d = a_c_d ? packed(p->m, p->n, p->ldd) : 0;
}
}  // namespace

GemmOptions parse_gemm_options(const Flags& f) {
  GemmOptions o;
  dgemm_problem_init(&o.problem);
  dgemm_epilogue_init(&o.epilogue);
  dgemm_problem_t& p = o.problem;
  p.m = f.get_int("m", 1024, 0);
  p.n = f.get_int("n", 1024, 0);
  p.k = f.get_int("k", 1024, 0);
  dgemm_dtype_t in = parse_dtype("dtype", f.get("dtype", "bf16"));
  p.a_type = f.has("a-dtype") ? parse_dtype("a-dtype", f.get("a-dtype", "")) : in;
  p.b_type = f.has("b-dtype") ? parse_dtype("b-dtype", f.get("b-dtype", "")) : in;
  bool integer = p.a_type == DGEMM_DTYPE_I8;
  p.compute_type = integer ? DGEMM_DTYPE_I32 : DGEMM_DTYPE_F32;
  dgemm_dtype_t out_default = integer ? DGEMM_DTYPE_I32 : (p.a_type == DGEMM_DTYPE_F8_E4M3 || p.a_type == DGEMM_DTYPE_F8_E5M2 ? DGEMM_DTYPE_BF16 : p.a_type);
  p.d_type = f.has("out-dtype") ? parse_dtype("out-dtype", f.get("out-dtype", "")) : out_default;
  p.c_type = f.has("c-dtype") ? parse_dtype("c-dtype", f.get("c-dtype", "")) : p.d_type;
  p.op_a = f.get_bool("trans-a") ? DGEMM_OP_T : DGEMM_OP_N;
  p.op_b = f.get_bool("trans-b") ? DGEMM_OP_T : DGEMM_OP_N;
  const std::string order = f.get_choice("order", "row", {"row", "col"});
  p.order = order == "row" ? DGEMM_ORDER_ROW_MAJOR : DGEMM_ORDER_COL_MAJOR;
  p.lda = f.get_int("lda", 0, 0);
  p.ldb = f.get_int("ldb", 0, 0);
  p.ldc = f.get_int("ldc", 0, 0);
  p.ldd = f.get_int("ldd", 0, 0);
  p.batch_count = f.get_int("batch", 1, 1);
  if (p.batch_count > 1) set_packed_strides(&p, true);
  // Explicit batch strides (gaps between batches, 0 = one matrix every batch shares): what the
  // GPU tests' batched cases use, so their repro lines can say it. Negative or batch-less strides
  // are refused here, naming the flag; the library checks the rest (overlapping D, overflow).
  for (auto [flag, stride] : {std::pair{"stride-a", &p.stride_a}, std::pair{"stride-b", &p.stride_b},
                              std::pair{"stride-c", &p.stride_c}, std::pair{"stride-d", &p.stride_d}}) {
    if (!f.has(flag)) continue;
    // A bare flag would otherwise read as 0, which means "shared", not "packed".
    if (f.get(flag, "").empty()) throw std::invalid_argument("--" + std::string(flag) + " needs a value (elements)");
    const long long v = f.get_int(flag, 0);
    const std::string given = "--" + std::string(flag) + " = " + std::to_string(v);
    if (p.batch_count <= 1) throw std::invalid_argument(given + ": a batch stride needs --batch B > 1");
    if (v < 0) throw std::invalid_argument(given + ": batch strides must be >= 0 (0: every batch shares one matrix)");
    *stride = v;
  }
  dgemm_epilogue_t& e = o.epilogue;
  e.alpha = float_flag(f, "alpha", 1.0);
  e.beta = float_flag(f, "beta", 0.0);
  e.bias_mode = parse_vector_mode("bias", f.get("bias", "none"), false);
  e.bias_type = f.has("bias-dtype") ? parse_dtype("bias-dtype", f.get("bias-dtype", "")) : DGEMM_DTYPE_F32;
  std::string act = f.get("act", "none");
  if (act == "none") e.activation = DGEMM_ACT_NONE;
  else if (act == "relu") e.activation = DGEMM_ACT_RELU;
  else if (act == "gelu_tanh") e.activation = DGEMM_ACT_GELU_TANH;
  else if (act == "gelu_erf" || act == "gelu") e.activation = DGEMM_ACT_GELU_ERF;  // torch's gelu: erf
  else if (act == "silu") e.activation = DGEMM_ACT_SILU;
  else throw std::invalid_argument("--act = '" + act + "': expected none, relu, gelu (= gelu_erf), gelu_tanh or silu");
  e.scale_mode = parse_vector_mode("scale", f.get("scale", "none"), true);
  if (f.get_bool("zero-point")) e.flags |= DGEMM_EPILOGUE_ZERO_POINT;
  if (f.get_bool("no-saturate")) e.flags &= ~DGEMM_EPILOGUE_SATURATE;
  return o;
}

const char* gemm_options_help() {
  return "  --m M --n N --k K            problem size (default 1024 each)\n"
         "  --dtype T                    A and B type: f32 f16 bf16 e4m3 e5m2 i8 (default bf16)\n"
         "  --a-dtype T --b-dtype T      override A or B type (mixed e4m3/e5m2)\n"
         "  --out-dtype T --c-dtype T    D and C types (default: the input type; i32 for i8)\n"
         "  --trans-a --trans-b          op(A) = A^T, op(B) = B^T\n"
         "  --order row|col              storage order of every matrix (default row)\n"
         "  --lda/--ldb/--ldc/--ldd L    leading dimensions (default packed)\n"
         "  --batch B                    strided batches (default: packed, each right after the previous)\n"
         "  --stride-a S --stride-b S    batch strides in elements (default packed; 0: one matrix\n"
         "  --stride-c S --stride-d S    every batch shares; only with --batch B > 1)\n"
         "  --alpha X --beta X           scalars (beta != 0 reads C)\n"
         "  --bias none|row|col          bias vector per row (m) or per column (n); --bias-dtype T\n"
         "  --act none|relu|gelu|gelu_tanh|silu  (gelu = gelu_erf, torch's default)\n"
         "  --scale none|tensor|row|col  output scale; --zero-point (i8 out); --no-saturate (fp8 out)\n";
}

GroupingOptions parse_grouping_options(const Flags& f) {
  GroupingOptions o;
  if (!f.has("groups")) {
    for (const char* flag : {"group-layout", "group-align", "group-expected-m"})
      if (f.has(flag)) throw std::invalid_argument("--" + std::string(flag) + " needs --groups G");
    return o;
  }
  o.groups = f.get_int("groups", 1, 1, 1 << 20);
  o.masked = f.get_choice("group-layout", "contiguous", {"contiguous", "masked"}) == "masked";
  o.align = f.get_int("group-align", 1, 1, 1 << 20);
  if (o.masked && o.align != 1) throw std::invalid_argument("--group-align: only for --group-layout contiguous");
  o.expected_m = f.get_int("group-expected-m", 0, 0, INT32_MAX);
  if (f.has("batch")) throw std::invalid_argument("--batch: a grouped problem's batches are its --groups");
  return o;
}

void GroupingOptions::apply(dgemm_problem_t* p) const {
  if (groups == 0) return;
  p->batch_count = groups;
  set_packed_strides(p, masked);  // contiguous: one A, C and D the groups share
}

dgemm_grouped_t GroupingOptions::extension() const {
  dgemm_grouped_t g;
  dgemm_grouped_init(&g);
  g.layout = masked ? DGEMM_GROUP_MASKED : DGEMM_GROUP_CONTIGUOUS;
  g.m_alignment = align;
  g.expected_m = expected_m;
  return g;
}

const char* grouping_options_help() {
  return "  --groups G                   a grouped (mixture-of-experts) problem of G groups: B holds G\n"
         "                               weights of n x k; --group-layout contiguous (A and D: m rows the\n"
         "                               groups share; --group-align A rows) or masked (G slots of m rows);\n"
         "                               --group-expected-m E: the rows a group has on average, a hint for\n"
         "                               the planner (default 0: unknown, costed as full slots / m rows)\n";
}

namespace {
dgemm_scale_mode_t parse_scale_mode(const Flags& f, const char* flag, bool output) {
  const std::string v = output ? f.get_choice(flag, "none", {"none", "vec128"})
                               : f.get_choice(flag, "none", {"none", "tensor", "outer", "vec128", "blk128"});
  return v == "tensor"   ? DGEMM_SCALE_PER_TENSOR
         : v == "outer"  ? DGEMM_SCALE_OUTER_VEC
         : v == "vec128" ? DGEMM_SCALE_VEC128
         : v == "blk128" ? DGEMM_SCALE_BLK128x128
                         : DGEMM_SCALE_NONE;
}
}  // namespace

ScalingOptions parse_scaling_options(const Flags& f) {
  ScalingOptions o;
  dgemm_scaling_init(&o.scaling);
  dgemm_scaling_t& s = o.scaling;
  s.a_scale.mode = parse_scale_mode(f, "a-scale", false);
  s.b_scale.mode = parse_scale_mode(f, "b-scale", false);
  s.d_scale.mode = parse_scale_mode(f, "d-scale", true);
  // DeepGEMM's B layout: each 128 x 128 block's K blocks contiguous.
  for (dgemm_scale_desc_t* d : {&s.a_scale, &s.b_scale})
    if (d->mode == DGEMM_SCALE_BLK128x128) d->layout = DGEMM_SCALE_K_MAJOR;
  // UE8M0 (power-of-two bytes, DeepGEMM's and the MX formats'): the block modes' only other type.
  if (f.get_choice("scale-type", "f32", {"f32", "ue8m0"}) == "ue8m0")
    for (dgemm_scale_desc_t* d : {&s.a_scale, &s.b_scale, &s.d_scale})
      if (d->mode == DGEMM_SCALE_VEC128 || d->mode == DGEMM_SCALE_BLK128x128) d->type = DGEMM_SCALE_TYPE_UE8M0;
  if (f.get_bool("amax-d")) s.flags |= DGEMM_SCALING_AMAX_D;
  o.active = s.a_scale.mode != DGEMM_SCALE_NONE || s.b_scale.mode != DGEMM_SCALE_NONE ||
             s.d_scale.mode != DGEMM_SCALE_NONE || s.flags != 0;
  return o;
}

dgemm_scaling_t ScalingOptions::for_problem(const dgemm_problem_t& p, bool grouped) const {
  dgemm_scaling_t s = scaling;
  // 1 x 128 scales in DeepGEMM's "MN-major TMA-aligned" layout (deepgemm-bench's): the rows
  // padded to 16 bytes (4 f32 or 16 UE8M0 scales), as the sm90 kernels read them with TMA.
  auto tma_aligned = [](int64_t rows, const dgemm_scale_desc_t& d) {
    const int64_t per_16 = d.type == DGEMM_SCALE_TYPE_UE8M0 ? 16 : 4;
    return (rows + per_16 - 1) / per_16 * per_16;
  };
  if (s.a_scale.mode == DGEMM_SCALE_VEC128) s.a_scale.ld = tma_aligned(p.m, s.a_scale);
  if (s.b_scale.mode == DGEMM_SCALE_VEC128) s.b_scale.ld = tma_aligned(p.n, s.b_scale);
  // A grouped problem's input scales follow their operand: one tensor per group (per expert, per
  // masked slot) where the operand has one per group (a batch stride), one shared tensor where it
  // is shared (a contiguous A, whose rows the groups share). A strided batch's stay shared, as
  // the flags have always said (and as `deepgemm run` lines round-trip).
  const int64_t kb = (p.k + 127) / 128;
  auto natural = [&](const dgemm_scale_desc_t& d, int64_t outer) -> int64_t {
    switch (d.mode) {
      case DGEMM_SCALE_PER_TENSOR: return 1;
      case DGEMM_SCALE_OUTER_VEC: return outer;
      case DGEMM_SCALE_VEC128: return d.ld * kb;                  // MN-major, ld rows
      case DGEMM_SCALE_BLK128x128: return (outer + 127) / 128 * kb;  // K-major, packed
      default: return 0;
    }
  };
  if (grouped && p.batch_count > 1 && p.stride_a != 0) s.a_scale.stride = natural(s.a_scale, p.m);
  if (grouped && p.batch_count > 1 && p.stride_b != 0) s.b_scale.stride = natural(s.b_scale, p.n);
  if (s.d_scale.mode == DGEMM_SCALE_VEC128) {
    s.d_scale.ld = tma_aligned(p.m, s.d_scale);
    // Written tensors cannot be shared: one after the other.
    if (p.batch_count > 1) s.d_scale.stride = std::max<int64_t>(s.d_scale.ld, 1) * ((p.n + 127) / 128);
  }
  return s;
}

const char* scaling_options_help() {
  return "  --a-scale/--b-scale none|tensor|outer|vec128|blk128  f32 input scales of A / B (DGEMM_1.1),\n"
         "                               shared by every batch (grouped: one per group where the operand\n"
         "                               has one, e.g. B's per expert): tensor, outer (per row of op(A) / column\n"
         "                               of op(B)), vec128 (1 x 128: MN-major, ld = m / n rounded up to a\n"
         "                               multiple of 4, DeepGEMM's TMA-aligned layout), blk128 (128 x 128:\n"
         "                               K-major, packed); deepgemm-bench's fp8t (tensor, tensor) and fp8b\n"
         "                               (vec128, blk128) rows\n"
         "  --scale-type f32|ue8m0       the type of the vec128 / blk128 scales (default f32)\n"
         "  --amax-d                     also write max |y| of D (before the output scale), DGEMM_SCALING_AMAX_D\n"
         "  --d-scale none|vec128        an e4m3/e5m2 D quantized per 1 x 128 block of a row, with f32 scales\n"
         "                               the epilogue computes (laid out as a vec128 A scale, one tensor per\n"
         "                               batch): deepgemm-bench's fp8q rows\n";
}

}  // namespace dgemm::tools
