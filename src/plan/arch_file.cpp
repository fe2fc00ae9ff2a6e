// YAML hardware descriptions. (Placeholder until the planner issue lands: every file is refused.)
#include "plan/arch_file.hpp"

#include "core/error.hpp"

namespace dgemm {

HardwareDesc apply_arch_file(const HardwareDesc&, const std::string& path) {
  fail(Status::ArchFileError, "arch_file = \"", path, "\": hardware description files are not supported yet");
}

}  // namespace dgemm
