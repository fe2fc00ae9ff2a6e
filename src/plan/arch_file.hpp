// Hardware descriptions from YAML files: whole machines we do not have (src/plan/arch/*.yaml) and
// overrides of fields of a detected device (for example a shared-memory cap).
#pragma once

#include <string>

#include "core/hardware.hpp"

namespace dgemm {

// Reads a YAML description. A file that names a whole machine replaces `base`; a file with only
// some fields overrides those fields of `base`. Throws Error(ArchFileError) naming the file, line
// and field on any problem.
HardwareDesc apply_arch_file(const HardwareDesc& base, const std::string& path);

}  // namespace dgemm
