// The planner flags the tool's subcommands share: --arch (which machine to plan for) and the
// --force of `deepgemm gen` and `deepgemm warm` (which family or configuration to plan with).
#pragma once

#include <string>

#include "core/hardware.hpp"
#include "plan/planner.hpp"

namespace dgemm::tools {

// "auto" (the first CUDA device, else the CPU description), "cpu", a built-in name ("h200"), a
// YAML file, or a comma-separated list applied left to right ("h200,cap.yaml": an H200 with the
// overrides of cap.yaml; a partial file alone overrides the detected device). *note gets a line
// for the user when auto found no GPU. Throws dgemm::Error on a bad file.
HardwareDesc resolve_arch(const std::string& spec, std::string* note);

// One line: "NVIDIA H200 SXM 141GB: sm_90, 132 SMs, 227 KB smem/block, 4800 GB/s, bf16 989 TFLOP/s".
std::string describe_hardware(const HardwareDesc& hw);

// --force NAME: a family (sm80, sm90, small_m) sets request->force; a configuration name as
// `deepgemm plan --all` prints it sets request->force_config (the planner keeps only that one).
// Throws std::invalid_argument naming the value otherwise.
void apply_force_option(const std::string& name, PlanRequest* request);

}  // namespace dgemm::tools
