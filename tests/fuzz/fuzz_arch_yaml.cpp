// Fuzz target: the YAML hardware-description reader on arbitrary text. It must return a
// description or throw Error(ArchFileError) naming the file, never anything else, quickly and in
// bounded memory (aliases, size and depth are refused while parsing); and a description it
// returns must survive arch_to_yaml -> apply_arch_text unchanged.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/error.hpp"
#include "plan/arch_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  dgemm::HardwareDesc hw;
  try {
    hw = dgemm::apply_arch_text(dgemm::cpu_hardware(), text, "fuzz.yaml");
  } catch (const dgemm::Error& e) {
    if (e.status() != dgemm::Status::ArchFileError || std::string(e.what()).rfind("fuzz.yaml", 0) != 0) {
      std::fprintf(stderr, "PROMISE VIOLATED: status %d, message '%s'\n", int(e.status()), e.what());
      std::abort();
    }
    return 0;
  }
  const std::string yaml = dgemm::arch_to_yaml(hw);
  const std::string again = dgemm::arch_to_yaml(dgemm::apply_arch_text(dgemm::HardwareDesc{}, yaml, "round-trip"));
  if (again != yaml) {
    std::fprintf(stderr, "PROMISE VIOLATED: the description changed through YAML:\n%s\n---\n%s\n", yaml.c_str(),
                 again.c_str());
    std::abort();
  }
  return 0;
}
