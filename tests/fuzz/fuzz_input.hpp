// Reading a fuzzer's bytes as typed values, for the targets in tests/fuzz. Past the end every
// read returns zero, and every target decodes zero as its most ordinary choice, so short inputs
// make ordinary calls and the fuzzer grows from there. (Our own few lines rather than
// FuzzedDataProvider, so that the targets also build with GCC as corpus-replay tests.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace dgemm_fuzz {

class Input {
 public:
  Input(const uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  template <class T>
  T take() {
    T v{};
    const std::size_t n = size_ - pos_ < sizeof v ? size_ - pos_ : sizeof v;
    if (n) std::memcpy(&v, data_ + pos_, n);
    pos_ += n;
    return v;
  }
  uint8_t byte() { return take<uint8_t>(); }
  // A value in [0, n) (n > 0).
  unsigned pick(unsigned n) { return byte() % n; }
  // True with probability about 1/n (never past the end of the input).
  bool one_in(unsigned n) { return pos_ < size_ && pick(n) == n - 1; }

 private:
  const uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

}  // namespace dgemm_fuzz
