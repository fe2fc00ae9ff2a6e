// Element types and what the rest of the library needs to know about each one.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dgemm {

// Same numbers as dgemm_dtype_t (checked by static_assert in src/api).
enum class DType : int { F32 = 0, F16 = 1, BF16 = 2, F8E4M3 = 3, F8E5M2 = 4, I8 = 5, I32 = 6 };
inline constexpr int kNumDTypes = 7;

constexpr std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::F32: case DType::I32: return 4;
    case DType::F16: case DType::BF16: return 2;
    case DType::F8E4M3: case DType::F8E5M2: case DType::I8: return 1;
  }
  return 0;
}

constexpr const char* dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::F8E4M3: return "e4m3";
    case DType::F8E5M2: return "e5m2";
    case DType::I8: return "i8";
    case DType::I32: return "i32";
  }
  return "?";
}

constexpr bool dtype_is_fp8(DType t) { return t == DType::F8E4M3 || t == DType::F8E5M2; }
constexpr bool dtype_is_integer(DType t) { return t == DType::I8 || t == DType::I32; }
constexpr bool dtype_is_float(DType t) { return !dtype_is_integer(t); }

// Parses "f32", "bf16", "e4m3", ... (the names above); returns false when unknown.
bool dtype_from_name(const char* name, DType* out);

}  // namespace dgemm
