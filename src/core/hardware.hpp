// What the planner needs to know about a machine. Filled from the device's properties at run time
// (src/backend/cuda), from a YAML file for machines we do not have (src/plan/arch_file), or as the
// CPU description for the reference backend.
#pragma once

#include <string>
#include <vector>

#include "core/dtype.hpp"

namespace dgemm {

enum class Vendor : int { Cpu = 0, Nvidia = 1, Amd = 2 };

// One tensor-core (matrix) instruction shape for a pair of operand types.
struct MmaShape {
  DType a_type = DType::BF16;
  DType acc_type = DType::F32;
  int m = 0, n = 0, k = 0;
  std::string instruction;  // "mma.sync", "wgmma", "mfma"
};

struct HardwareDesc {
  std::string name = "cpu";
  Vendor vendor = Vendor::Cpu;
  int cc_major = 0, cc_minor = 0;     // compute capability (NVIDIA); gfx major/minor for AMD
  int sm_count = 1;                   // streaming multiprocessors (CPU: cores)
  int warp_size = 32;
  int max_warps_per_sm = 64;
  int max_blocks_per_sm = 32;
  int max_threads_per_block = 1024;
  int regs_per_sm = 65536;            // 32-bit registers
  int max_regs_per_thread = 255;
  long smem_per_sm = 0;               // bytes
  long smem_per_block_optin = 0;      // bytes a block may use after opting in
  int smem_banks = 32;
  int smem_bank_bytes = 4;
  long l1_bytes = 0;
  long l2_bytes = 0;
  double mem_bandwidth_gbs = 0;       // GB/s
  double clock_mhz = 0;               // SM clock
  // Peak dense rates in TFLOP/s (TOP/s for int8) by input type; 0 = no tensor-core support.
  double peak_tflops_f32 = 0, peak_tflops_f16 = 0, peak_tflops_bf16 = 0, peak_tflops_fp8 = 0, peak_tops_i8 = 0;
  std::vector<MmaShape> mma_shapes;
  bool has_tma = false;               // Hopper bulk tensor copies
  bool has_wgmma = false;             // sm_90a warpgroup MMA
  bool can_run_kernels = false;       // false for planning-only descriptions (e.g. AMD)
  // Appended for the cost model (0 = unknown: the model estimates it from sm_count and clock_mhz).
  double l2_bandwidth_gbs = 0;        // L2 -> SM read bandwidth, whole chip, GB/s

  int cc() const { return cc_major * 10 + cc_minor; }
};

// The description of the machine this process runs on when it uses the CPU backend.
HardwareDesc cpu_hardware();

}  // namespace dgemm
