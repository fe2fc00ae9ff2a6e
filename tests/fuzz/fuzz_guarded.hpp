// A buffer between guard bands, for the C API fuzz targets in tests/fuzz: n bytes starting
// `shift` bytes past an aligned address (to test any alignment), with kGuard bytes of a fixed
// pattern on both sides that nothing may write.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <vector>

namespace dgemm_fuzz {

struct Guarded {
  static constexpr std::size_t kGuard = 64;
  static constexpr unsigned char kPattern = 0xA5;
  std::vector<unsigned char> bytes;
  std::size_t size, shift;
  explicit Guarded(std::size_t n, unsigned char fill = 0, std::size_t at = 0)
      : bytes(n + 2 * kGuard + at, kPattern), size(n), shift(at) {
    if (n > (std::size_t(1) << 32)) std::abort();  // the harnesses only make small buffers
    std::fill(bytes.begin() + std::ptrdiff_t(kGuard + shift), bytes.begin() + std::ptrdiff_t(kGuard + shift + n), fill);
  }
  unsigned char* data(std::size_t offset = 0) { return bytes.data() + kGuard + shift + offset; }
  bool guards_intact() const {
    for (std::size_t i = 0; i < bytes.size(); ++i)
      if ((i < kGuard + shift || i >= kGuard + shift + size) && bytes[i] != kPattern) return false;
    return true;
  }
};

}  // namespace dgemm_fuzz
