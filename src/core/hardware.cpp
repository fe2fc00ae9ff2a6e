// The description of the host CPU, used when plans run on the reference backend.
#include "core/hardware.hpp"

#include <thread>

namespace dgemm {

HardwareDesc cpu_hardware() {
  HardwareDesc hw;
  hw.name = "cpu";
  hw.vendor = Vendor::Cpu;
  unsigned cores = std::thread::hardware_concurrency();
  hw.sm_count = cores ? int(cores) : 1;
  hw.can_run_kernels = true;
  return hw;
}

}  // namespace dgemm
