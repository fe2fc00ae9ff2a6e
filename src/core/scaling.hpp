// Input scaling of A and B (per tensor, per row/column, 1 x 128 and 128 x 128 blocks; f32 or UE8M0
// scales) and the block scales of a quantized FP8 output: the plan-time description of one scale
// tensor, its addressing, its validation, and the rule that turns a block's amax into its output
// scale. The meaning of every mode is defined in include/deepgemm/deepgemm.h ("DGEMM_1.1: input
// scaling"); the CPU backend computes it and the GPU kernels will follow the same definitions.
#pragma once

#include <cstdint>
#include <string>

#include "core/dtype.hpp"

namespace dgemm {

// Same numbers as dgemm_scale_mode_t / dgemm_scale_type_t / dgemm_scale_layout_t.
enum class ScaleMode : int { None = 0, PerTensor = 1, OuterVec = 2, Vec128 = 3, Blk128x128 = 4 };
enum class ScaleType : int { F32 = 0, UE8M0 = 1 };
enum class ScaleLayout : int { MnMajor = 0, KMajor = 1 };

// The K block (and the 128 x 128 block edge) of every block mode.
inline constexpr int64_t kScaleBlock = 128;

const char* scale_mode_name(ScaleMode mode);
const char* scale_type_name(ScaleType type);
const char* scale_layout_name(ScaleLayout layout);
constexpr std::size_t scale_type_size(ScaleType t) { return t == ScaleType::F32 ? 4 : 1; }

// One scale tensor: a matrix of rows (outer index groups: i, j, i / 128 or j / 128) by columns
// (K blocks; for D's scales, blocks of 128 columns of D), as the header's table says.
struct ScaleDesc {
  ScaleMode mode = ScaleMode::None;
  ScaleType type = ScaleType::F32;
  ScaleLayout layout = ScaleLayout::MnMajor;
  int64_t ld = 0;      // resolved (never 0) once validated
  int64_t stride = 0;  // between batches, in elements; 0 = shared

  bool active() const { return mode != ScaleMode::None; }
  // Block modes vary along K, so they multiply inside the sum over K.
  bool blocked() const { return mode == ScaleMode::Vec128 || mode == ScaleMode::Blk128x128; }

  // Shape of one batch's tensor for an operand with `outer` rows (m or n) and `inner` K extent.
  int64_t rows(int64_t outer) const;
  int64_t cols(int64_t inner) const;
  // Element offset (from the batch's base) of the scale covering outer index o and inner index p.
  int64_t index(int64_t o, int64_t p) const {
    const int64_t r = mode == ScaleMode::PerTensor ? 0 : mode == ScaleMode::Blk128x128 ? o / kScaleBlock : o;
    const int64_t c = blocked() ? p / kScaleBlock : 0;
    return layout == ScaleLayout::MnMajor ? r + c * ld : r * ld + c;
  }
  // Elements spanned from the base pointer over `batch_count` batches (0 when the shape is empty).
  int64_t extent(int64_t outer, int64_t inner, int64_t batch_count) const;

  // e.g. "vec128(f32,mn,ld=64,stride=0)"; "none" when inactive.
  std::string to_string() const;
};

// Replaces ld = 0 with the packed value and checks the description of tensor `name` (such as
// "a_scale") for an operand of outer x inner, batch_count batches. `output` tensors are written,
// so their batches must not overlap. Throws Error naming the field ("a_scale.ld = 3: ...").
void resolve_scale_desc(ScaleDesc& s, const char* name, int64_t outer, int64_t inner, int64_t batch_count,
                        bool output);

// Value of element `index` of a scale array of type t (UE8M0: 2^(e - 127), 0xFF = NaN). Exact.
double load_scale(ScaleType t, const void* base, int64_t index);

// The block scale of a quantized FP8 output (header: "Block-scaled output") for a block whose
// largest magnitude is amax, D of type d_type (e4m3 / e5m2), scale type t: s, exactly as stored
// (NaN for a non-finite block). store_scale writes it in type t.
double output_block_scale(double amax, DType d_type, ScaleType t);
void store_scale(ScaleType t, void* base, int64_t index, double s);

// max(a, |v|) that propagates NaN (once NaN, stays NaN), as the amax of the header is defined.
inline double amax_update(double a, double v) {
  const double m = v < 0 ? -v : v;
  return (m > a || m != m) && a == a ? m : a;
}

}  // namespace dgemm
