// The planner's choice: which kernel family and which compile-time configuration. Kept apart from
// the problem (GemmProblem) as DeepGEMM keeps GemmDesc apart from GemmConfig. Lives in core because
// both the planner (which fills it) and the backends (which build the kernel it names) need it.
#pragma once

#include <string>

namespace dgemm {

// Numbered in the order of core/families.def (the one registration of a family).
enum class Family : int {
#define DGEMM_FAMILY(Enumerator, name, model, launcher) Enumerator,
#include "core/families.def"
#undef DGEMM_FAMILY
};

const char* family_name(Family f);
bool family_from_name(const std::string& name, Family* out);
// "cpu, sm80, sm90, small_m": for messages.
std::string family_names();

// Every field means one thing in every family; a field a family does not use stays at its default.
struct KernelConfig {
  Family family = Family::Cpu;
  // Tile of the kernel's own output (the problem as the kernel sees it: core/kernel_view.hpp) and
  // the K step of one pipeline stage. small_m: block_m = the rows it holds accumulators for, no K step.
  int block_m = 0, block_n = 0, block_k = 0;
  int stages = 0;           // sm80, sm90: depth of the shared-memory operand ring
  int loads_in_flight = 0;  // small_m: 16-byte weight loads each thread keeps in flight per column
  int threads = 0;          // threads per block
  int blocks_per_sm = 1;    // sm90: CTAs the kernel is built to fit per SM (__launch_bounds__ minimum)
  int cluster_m = 1;        // sm90: CTAs of a cluster on vertically adjacent tiles sharing B (TMA multicast)
  int cluster_n = 1;        // sm90: CTAs of a cluster on horizontally adjacent tiles sharing A (TMA multicast)
  int cluster_k = 1;        // sm90: CTAs of a cluster splitting one tile's K, reduced in distributed shared memory
  int split_k = 1;          // sm80, small_m: CTAs splitting K, f32 partials through the workspace + a reduce kernel
  bool swap_ab = false;     // sm90: computes D^T = op(B)^T op(A)^T, so a small M becomes the MMA's N
  int swizzle_bytes = 0;    // shared-memory swizzle span (0 = none)
  int raster_group = 0;     // M blocks per grouped-rasterization group; 0 = row order (N fastest)
  bool persistent = false;  // a grid of resident CTAs walks the tiles
  bool pack_a = false, pack_b = false;  // copy the operand to an aligned workspace first
  // sm90: the packed copy of an MN-major operand is its transpose, K-major (core/tma_rules.hpp),
  // so that the kernel reads both operands as a tn problem does.
  bool pack_a_t = false, pack_b_t = false;
  int variant = 0;          // sm80: 1 = fragment-pipelined main loop; sm90: 1 = ping-pong consumer warpgroups
  bool stream_k = false;    // sm90: the tiles of a partial last wave shared out by K blocks (core/stream_k.hpp)
  // sm90, grouped problems: the epilogue through shared memory and TMA stores, as every other
  // kernel with a 16-bit D has it where it fits (contiguous groups aligned to BLOCK_M only: TMA
  // cannot stop at a group's last row). Named, since grouped kernels keep the register epilogue
  // unless asked.
  bool tma_store = false;

  // Compact name, e.g. "sm80_128x128x32_s3_t256"; `force_kernel` accepts it.
  std::string name() const;
  // JSON object with every field.
  std::string to_json() const;
  bool operator==(const KernelConfig& o) const { return name() == o.name(); }
};

}  // namespace dgemm
