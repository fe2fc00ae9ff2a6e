// The --arch flag of `deepgemm plan` and `deepgemm gen`: which machine to plan for.
#pragma once

#include <string>

#include "core/hardware.hpp"

namespace dgemm::tools {

// "auto" (the first CUDA device, else the CPU description), "cpu", a built-in name ("h200"), a
// YAML file, or a comma-separated list applied left to right ("h200,cap.yaml": an H200 with the
// overrides of cap.yaml; a partial file alone overrides the detected device). *note gets a line
// for the user when auto found no GPU. Throws dgemm::Error on a bad file.
HardwareDesc resolve_arch(const std::string& spec, std::string* note);

// One line: "NVIDIA H200 SXM 141GB: sm_90, 132 SMs, 227 KB smem/block, 4800 GB/s, bf16 989 TFLOP/s".
std::string describe_hardware(const HardwareDesc& hw);

}  // namespace dgemm::tools
