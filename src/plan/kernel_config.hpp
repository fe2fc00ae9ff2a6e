// The planner's choice: which kernel family and which compile-time configuration. Kept apart from
// the problem (GemmProblem) as DeepGEMM keeps GemmDesc apart from GemmConfig.
#pragma once

#include <string>

namespace dgemm {

enum class Family : int {
  Cpu = 0,     // reference backend
  Sm80 = 1,    // mma.sync + cp.async (Ampere and newer)
  Sm90 = 2,    // TMA + wgmma, warp-specialized, persistent (sm_90a)
  SmallM = 3,  // decode-sized M, weight streaming
};

const char* family_name(Family f);
bool family_from_name(const std::string& name, Family* out);

struct KernelConfig {
  Family family = Family::Cpu;
  int block_m = 0, block_n = 0, block_k = 0;
  int stages = 0;
  int threads = 0;       // threads per block
  int cluster_m = 1, cluster_n = 1;
  int split_k = 1;
  int swizzle_bytes = 0; // shared-memory swizzle span (0 = none)
  int raster_group = 0;  // grouped rasterization width in tiles (0 = row order)
  bool persistent = false;
  bool pack_a = false, pack_b = false;  // copy the operand to an aligned workspace first
  int variant = 0;       // family-specific kernel variant (sm80: 1 = fragment-pipelined main loop)

  // Compact name, e.g. "sm80_128x128x32_s3_t256".
  std::string name() const;
  // JSON object with every field.
  std::string to_json() const;
};

}  // namespace dgemm
