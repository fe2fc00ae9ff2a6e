// Fuzz target: the kernel cache's entry decoder on arbitrary bytes (what a damaged or planted
// file holds). It must refuse or accept without reading out of bounds or allocating more than
// the input holds, and whatever it accepts must be exactly what encode_cache_entry writes for
// that content (the format has one encoding, so nothing else slips through).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "backend/cuda/kernel_cache_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string kKey = "0123456789abcdef0123456789abcdef";
  dgemm::jit::CacheEntry entry;
  if (!dgemm::jit::decode_cache_entry(reinterpret_cast<const char*>(data), size, kKey, &entry)) return 0;
  const std::string again = dgemm::jit::encode_cache_entry(kKey, entry.cubin, entry.log);
  if (again != std::string(reinterpret_cast<const char*>(data), size)) {
    std::fprintf(stderr, "PROMISE VIOLATED: an entry was accepted that is not the encoding of its content\n");
    std::abort();
  }
  return 0;
}
