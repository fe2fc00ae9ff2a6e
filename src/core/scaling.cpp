// Scale tensors: shapes, validation, decoding, and the output block-scale rule (see scaling.hpp).
#include "core/scaling.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "core/error.hpp"
#include "core/float_convert.hpp"
#include "core/problem.hpp"

namespace dgemm {

const char* scale_mode_name(ScaleMode mode) {
  switch (mode) {
    case ScaleMode::None: return "none";
    case ScaleMode::PerTensor: return "per_tensor";
    case ScaleMode::OuterVec: return "outer_vec";
    case ScaleMode::Vec128: return "vec128";
    case ScaleMode::Blk128x128: return "blk128x128";
  }
  return "?";
}

const char* scale_type_name(ScaleType type) { return type == ScaleType::F32 ? "f32" : "ue8m0"; }
const char* scale_layout_name(ScaleLayout layout) { return layout == ScaleLayout::MnMajor ? "mn" : "k"; }

int64_t ScaleDesc::rows(int64_t outer) const {
  switch (mode) {
    case ScaleMode::None: return 0;
    case ScaleMode::PerTensor: return 1;
    case ScaleMode::OuterVec:
    case ScaleMode::Vec128: return outer;
    case ScaleMode::Blk128x128: return (outer + kScaleBlock - 1) / kScaleBlock;
  }
  return 0;
}

int64_t ScaleDesc::cols(int64_t inner) const {
  if (mode == ScaleMode::None) return 0;
  return blocked() ? (inner + kScaleBlock - 1) / kScaleBlock : 1;
}

int64_t ScaleDesc::extent(int64_t outer, int64_t inner, int64_t batch_count) const {
  const int64_t r = rows(outer), c = cols(inner);
  if (r == 0 || c == 0) return 0;
  // The checks of resolve_scale_desc guarantee these do not overflow.
  const int64_t last = layout == ScaleLayout::MnMajor ? (r - 1) + (c - 1) * ld : (r - 1) * ld + (c - 1);
  return last + 1 + (batch_count - 1) * stride;
}

std::string ScaleDesc::to_string() const {
  if (!active()) return "none";
  std::ostringstream os;
  os << scale_mode_name(mode) << "(" << scale_type_name(type) << "," << scale_layout_name(layout) << ",ld=" << ld
     << ",stride=" << stride << ")";
  return os.str();
}

void resolve_scale_desc(ScaleDesc& s, const char* name, int64_t outer, int64_t inner, int64_t batch_count,
                        bool output) {
  if (int(s.mode) < 0 || int(s.mode) > 4)
    fail(Status::InvalidArgument, name, ".mode = ", int(s.mode), ": not a dgemm_scale_mode_t");
  if (int(s.type) < 0 || int(s.type) > 1)
    fail(Status::InvalidArgument, name, ".type = ", int(s.type), ": not a dgemm_scale_type_t");
  if (int(s.layout) < 0 || int(s.layout) > 1)
    fail(Status::InvalidArgument, name, ".layout = ", int(s.layout), ": not a dgemm_scale_layout_t");
  if (s.ld < 0) fail(Status::InvalidArgument, name, ".ld = ", s.ld, ": must be >= 0 (0 means packed)");
  if (s.stride < 0) fail(Status::InvalidArgument, name, ".stride = ", s.stride, ": batch strides must be >= 0");
  if (!s.active()) {
    s = ScaleDesc{};  // an inactive description is "none", whatever else it held
    return;
  }
  const int64_t r = s.rows(outer), c = s.cols(inner);
  const bool mn = s.layout == ScaleLayout::MnMajor;
  const int64_t need = std::max<int64_t>(1, mn ? r : c);
  if (s.ld == 0) s.ld = need;
  if (s.ld < need) {
    fail(Status::InvalidArgument, name, ".ld = ", s.ld, ": must be >= ", need, " for a ", r, " x ", c, " ",
         scale_mode_name(s.mode), " scale tensor stored ", mn ? "MN_MAJOR (ld >= rows)" : "K_MAJOR (ld >= cols)");
  }
  if (r == 0 || c == 0) return;  // nothing is ever addressed
  int64_t last = 0, tmp = 0;
  bool overflow = __builtin_mul_overflow(mn ? c - 1 : r - 1, s.ld, &last) ||
                  __builtin_add_overflow(last, (mn ? r : c) - 1, &last);
  const int64_t one = last + 1;
  if (batch_count > 1) {
    overflow = overflow || __builtin_mul_overflow(batch_count - 1, s.stride, &tmp) ||
               __builtin_add_overflow(last, tmp, &last);
  }
  overflow = overflow || __builtin_mul_overflow(last + 1, int64_t(scale_type_size(s.type)), &tmp);
  if (overflow) {
    fail(Status::InvalidArgument, name, " of ", r, " x ", c, " with ", name, ".ld = ", s.ld, ", batch_count = ",
         batch_count, " and ", name, ".stride = ", s.stride, " spans more elements than a 64-bit index can address");
  }
  if (output && batch_count > 1 && s.stride < one) {
    fail(Status::InvalidArgument, name, ".stride = ", s.stride, " with batch_count = ", batch_count,
         ": smaller than one scale tensor (", one, " elements), so the batches' scales would overlap");
  }
}

double load_scale(ScaleType t, const void* base, int64_t index) {
  if (t == ScaleType::F32) {
    float v;
    std::memcpy(&v, static_cast<const char*>(base) + index * 4, 4);
    return double(v);
  }
  const uint8_t e = static_cast<const uint8_t*>(base)[index];
  return e == 0xFF ? std::nan("") : std::ldexp(1.0, int(e) - 127);
}

double output_block_scale(double amax, DType d_type, ScaleType t) {
  const double fp8_max = d_type == DType::F8E4M3 ? kE4M3Max : kE5M2Max;
  const double min_scale = std::ldexp(1.0, -126);
  if (!(amax < std::ldexp(1.0, 128))) return std::nan("");  // NaN, or infinite in f32
  if (t == ScaleType::F32) return std::max(double(float(amax / fp8_max)), min_scale);
  // The least e with 2^e * fp8_max >= amax: frexp's estimate, then exact corrections (scaling by a
  // power of two is exact, so the comparisons are too).
  int e = 0;
  std::frexp(amax / fp8_max, &e);
  while (e > -126 && std::ldexp(fp8_max, e - 1) >= amax) --e;
  while (std::ldexp(fp8_max, e) < amax) ++e;
  return std::ldexp(1.0, std::max(e, -126));
}

void store_scale(ScaleType t, void* base, int64_t index, double s) {
  if (t == ScaleType::F32) {
    const float v = float(s);
    std::memcpy(static_cast<char*>(base) + index * 4, &v, 4);
    return;
  }
  // s is NaN or an exact power of two 2^(e - 1) in [2^-126, 2^120] (output_block_scale), whose
  // frexp is 0.5 * 2^e.
  uint8_t bits = 0xFF;
  if (!std::isnan(s)) {
    int e = 0;
    std::frexp(s, &e);
    bits = uint8_t(e - 1 + 127);
  }
  static_cast<uint8_t*>(base)[index] = bits;
}

void resolve_and_validate_scaling(GemmProblem& p, Epilogue& e) {
  resolve_scale_desc(p.a_scale, "a_scale", p.m, p.k, p.batch_count, false);
  resolve_scale_desc(p.b_scale, "b_scale", p.n, p.k, p.batch_count, false);
  ScaleDesc& d = e.d_scale;
  if (d.mode != ScaleMode::None && d.mode != ScaleMode::Vec128 && int(d.mode) >= 0 && int(d.mode) <= 4) {
    fail(Status::NotSupported, "d_scale.mode = ", scale_mode_name(d.mode),
         ": D is block-scaled per 1 x 128 block of a row (VEC128) or not at all (NONE)");
  }
  // A contiguous grouped problem has one D whose rows the groups share, so one tensor of D's
  // scales (deepgemm.h, "grouped problems": its outer index is the shared row).
  const bool shared_d = p.grouping.contiguous();
  if (shared_d && d.active() && d.stride != 0) {
    fail(Status::InvalidArgument, "d_scale.stride = ", d.stride,
         ": must be 0 for a contiguous grouped problem (the groups share D's rows, and so its scales' rows)");
  }
  resolve_scale_desc(d, "d_scale", p.m, p.n, shared_d ? 1 : p.batch_count, !shared_d);
  if (d.active() && !dtype_is_fp8(p.d_type)) {
    fail(Status::NotSupported, "d_scale.mode = vec128 with d_type = ", dtype_name(p.d_type),
         ": a block-scaled output is e4m3 or e5m2");
  }
}

bool needs_scaling(const GemmProblem& p, const Epilogue& e) {
  return p.a_scale.active() || p.b_scale.active() || e.d_scale.active() || e.amax_d;
}

std::string scaling_summary(const GemmProblem& p, const Epilogue& e) {
  std::string out;
  auto add = [&](const char* what, const char* mode) {
    out += (out.empty() ? "" : ", ") + std::string(what) + (mode ? std::string(" ") + mode : "");
  };
  if (p.a_scale.active()) add("a_scale", scale_mode_name(p.a_scale.mode));
  if (p.b_scale.active()) add("b_scale", scale_mode_name(p.b_scale.mode));
  if (e.d_scale.active()) add("d_scale", scale_mode_name(e.d_scale.mode));
  if (e.amax_d) add("amax_d", nullptr);
  return out;
}

}  // namespace dgemm
