// Hardware descriptions from YAML files: whole machines we do not have (src/plan/arch/*.yaml,
// embedded in the library and installed to share/deepgemm/arch) and overrides of fields of a
// detected device (for example `shared_mem_per_block: 82KB` to plan for a shared GPU).
//
// Format (every key optional in an override; see src/plan/arch/h200.yaml for a whole machine):
//   extends: h200                 start from a built-in description instead of `base`
//   name: "..."                   vendor: nvidia|amd|cpu     compute_capability: "9.0"
//   sm_count, warp_size, max_warps_per_sm, max_blocks_per_sm, max_threads_per_block,
//   registers_per_sm, max_registers_per_thread, shared_mem_banks, shared_mem_bank_bytes: integers
//   shared_mem_per_sm, shared_mem_per_block, l1_size, l2_size: bytes, with an optional B, KB/KiB,
//     MB/MiB or GB/GiB suffix (all binary: 82KB = 83968 bytes)
//   memory_bandwidth_gbs, l2_bandwidth_gbs, clock_mhz: numbers (GB/s, MHz)
//   peak_tflops: {f32, f16, bf16, fp8, i8}    dense rates, TFLOP/s (TOP/s for i8)
//   mma_shapes: [{a_type, acc_type, m, n, k, instruction}, ...]   replaces the whole list
//   has_tma, has_wgmma, can_run_kernels: booleans
// A file that sets `vendor` describes a whole machine: it starts from defaults, not from `base`,
// and must give name, compute_capability, sm_count, the shared-memory sizes, the memory bandwidth
// and peak_tflops. Any other file overrides only the fields it names.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/hardware.hpp"

namespace dgemm {

// `path` is a YAML file, or, when no such file exists, the name of a built-in description
// ("h200", "h200.yaml"; see builtin_arch_names()). Throws Error(ArchFileError) naming the file,
// the line and the field on an unknown field, a wrong type or a bad value. Only a regular file
// of at most 1 MiB is read (a FIFO, device or directory is refused without waiting); YAML
// aliases, more than 10000 values and nesting deeper than 16 are refused while parsing.
HardwareDesc apply_arch_file(const HardwareDesc& base, const std::string& path);

// The same on YAML text; `source` names it in errors.
HardwareDesc apply_arch_text(const HardwareDesc& base, const std::string& text, const std::string& source);

// A whole-machine YAML description of `hw` that apply_arch_text reads back unchanged (`deepgemm
// plan --arch auto --show-arch` writes the detected device this way, a start for a new file).
std::string arch_to_yaml(const HardwareDesc& hw);

// Names of the built-in descriptions ("a100", "h100", "h200", "l40s", "mi300x").
std::vector<std::string> builtin_arch_names();
// The built-in description `name` (case-insensitive, ".yaml" optional); nullptr when unknown.
const char* builtin_arch_text(const std::string& name);

// The embedded files, generated at build time from src/plan/arch/*.yaml (src/deps.cmake).
struct BuiltinArch {
  const char* name;
  const char* text;
};
extern const BuiltinArch kBuiltinArchs[];
extern const std::size_t kNumBuiltinArchs;

}  // namespace dgemm
