// What the C API fuzz targets (fuzz_c_api, fuzz_c_api_v11) share besides the guarded buffers:
// how a broken promise ends the run, the CPU context they plan on, and the range of statuses.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "api/convert.hpp"
#include "deepgemm/deepgemm.h"

namespace dgemm_fuzz {

[[noreturn]] inline void violated(const std::string& what, const std::string& context) {
  std::fprintf(stderr, "PROMISE VIOLATED: %s\n  %s\n  last error: %s\n", what.c_str(), context.c_str(),
               dgemm_last_error());
  std::abort();
}

inline dgemm_context_t context() {
  static dgemm_context_t ctx = [] {
    dgemm_context_t c = nullptr;
    if (dgemm_context_create(DGEMM_DEVICE_CPU, 0, &c) != DGEMM_STATUS_SUCCESS) violated("CPU context", "");
    return c;
  }();
  return ctx;
}

inline bool valid_status(dgemm_status_t st) {
  const int v = dgemm::api::enum_value(st);
  return v >= DGEMM_STATUS_SUCCESS && v <= DGEMM_STATUS_INTERNAL_ERROR;
}

}  // namespace dgemm_fuzz
