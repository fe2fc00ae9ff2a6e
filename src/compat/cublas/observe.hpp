// Settings read from the environment once, the process-wide counters behind
// deepgemm_cublas_counters(), and the one-line-per-distinct-call-shape log.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "deepgemm/deepgemm_cublas.h"

namespace dgemm_cublas {

struct Settings {
  bool enabled = true;              // DEEPGEMM_CUBLAS=off turns routing off (every call forwarded)
  bool log = false;                 // DEEPGEMM_CUBLAS_LOG=1: one stderr line per distinct call shape
  bool cpu = false;                 // DEEPGEMM_CUBLAS_DEVICE=cpu: plans on the CPU backend (tests only:
                                    // operands must then be host memory)
  std::size_t plan_cache = 256;     // DEEPGEMM_CUBLAS_PLAN_CACHE: plans kept per handle (>= 1)
};
const Settings& settings();

struct Counters {
  std::atomic<uint64_t> calls{0}, routed{0}, fallback{0};
  std::atomic<uint64_t> plans_created{0}, plans_refused{0}, plan_cache_hits{0}, plans_evicted{0};
  std::atomic<uint64_t> pool_bytes{0};
  std::atomic<uint64_t> by_reason[DEEPGEMM_CUBLAS_MAX_REASONS] = {};
};
Counters& counters();

// Counts one GEMM call's outcome.
void count(deepgemm_cublas_reason_t reason);

// True the first time `shape` (a hash of the call's shape and outcome) is seen, when logging is on.
bool first_time(uint64_t shape);
// Writes one log line ("deepgemm_cublas: " + text) to stderr.
void log_line(const std::string& text);

const char* reason_name(int reason);

}  // namespace dgemm_cublas
