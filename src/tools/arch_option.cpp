// The --arch flag (see arch_option.hpp).
#include "tools/arch_option.hpp"

#include <sstream>
#include <stdexcept>
#include <vector>

#include "backend/backend.hpp"
#include "plan/arch_file.hpp"

namespace dgemm::tools {
namespace {

HardwareDesc detected(std::string* note) {
  std::string why;
  if (auto backend = make_cuda_backend(0, &why)) return backend->hardware();
  if (note) *note = "no CUDA device (" + (why.empty() ? std::string("not built with CUDA") : why) + "): planning for the CPU";
  return cpu_hardware();
}

}  // namespace

HardwareDesc resolve_arch(const std::string& spec, std::string* note) {
  std::vector<std::string> parts;
  std::stringstream ss(spec.empty() ? std::string("auto") : spec);
  for (std::string part; std::getline(ss, part, ',');)
    if (!part.empty()) parts.push_back(part);
  if (parts.empty()) parts.push_back("auto");

  HardwareDesc hw;
  std::size_t first = 1;
  if (parts[0] == "auto") {
    hw = detected(note);
  } else if (parts[0] == "cpu") {
    hw = cpu_hardware();
  } else if (builtin_arch_text(parts[0]) || parts.size() > 1) {
    // A whole machine (built-in or file) does not need the detected one.
    hw = apply_arch_file(cpu_hardware(), parts[0]);
  } else {
    // A single file: whole, or overrides of the detected device.
    hw = apply_arch_file(detected(note), parts[0]);
  }
  for (std::size_t i = first; i < parts.size(); ++i) hw = apply_arch_file(hw, parts[i]);
  return hw;
}

std::string describe_hardware(const HardwareDesc& hw) {
  std::ostringstream os;
  os << hw.name << ": ";
  if (hw.vendor == Vendor::Cpu) {
    os << "host CPU, " << hw.sm_count << " cores (reference backend)";
    return os.str();
  }
  if (hw.vendor == Vendor::Amd) os << "gfx" << hw.cc_major << "." << hw.cc_minor;
  else os << "sm_" << hw.cc_major << hw.cc_minor;
  os << ", " << hw.sm_count
     << (hw.vendor == Vendor::Amd ? " CUs, " : " SMs, ") << hw.smem_per_block_optin / 1024 << " KB smem/block, "
     << hw.mem_bandwidth_gbs << " GB/s, bf16 " << hw.peak_tflops_bf16 << " TFLOP/s"
     << (hw.can_run_kernels ? "" : " (planning only)");
  return os.str();
}

void apply_force_option(const std::string& name, PlanRequest* request) {
  Family fam;
  if (family_from_name(name, &fam) && fam != Family::Cpu) {
    request->force = fam;
  } else if (name.find('_') != std::string::npos && name.rfind("cpu", 0) != 0) {
    request->force_config = name;
  } else {
    throw std::invalid_argument("--force = '" + name + "': expected sm80, sm90, small_m or a configuration name");
  }
}

}  // namespace dgemm::tools
