// Printing and parsing of kernel configurations.
#include "plan/kernel_config.hpp"

#include <sstream>

namespace dgemm {

const char* family_name(Family f) {
  switch (f) {
    case Family::Cpu: return "cpu";
    case Family::Sm80: return "sm80";
    case Family::Sm90: return "sm90";
    case Family::SmallM: return "small_m";
  }
  return "?";
}

bool family_from_name(const std::string& name, Family* out) {
  for (Family f : {Family::Cpu, Family::Sm80, Family::Sm90, Family::SmallM}) {
    if (name == family_name(f)) {
      *out = f;
      return true;
    }
  }
  return false;
}

std::string KernelConfig::name() const {
  std::ostringstream os;
  os << family_name(family);
  if (family == Family::Cpu) return os.str();
  os << "_" << block_m << "x" << block_n << "x" << block_k << "_s" << stages << "_t" << threads;
  if (cluster_m * cluster_n > 1) os << "_c" << cluster_m << "x" << cluster_n;
  if (split_k > 1) os << "_sk" << split_k;
  if (persistent) os << "_p";
  if (pack_a) os << "_packA";
  if (pack_b) os << "_packB";
  if (variant != 0) os << "_v" << variant;
  return os.str();
}

std::string KernelConfig::to_json() const {
  std::ostringstream os;
  os << "{\"name\":\"" << name() << "\",\"family\":\"" << family_name(family) << "\",\"block_m\":" << block_m
     << ",\"block_n\":" << block_n << ",\"block_k\":" << block_k << ",\"stages\":" << stages
     << ",\"threads\":" << threads << ",\"cluster_m\":" << cluster_m << ",\"cluster_n\":" << cluster_n
     << ",\"split_k\":" << split_k << ",\"swizzle_bytes\":" << swizzle_bytes
     << ",\"raster_group\":" << raster_group << ",\"persistent\":" << (persistent ? "true" : "false")
     << ",\"pack_a\":" << (pack_a ? "true" : "false") << ",\"pack_b\":" << (pack_b ? "true" : "false") << ",\"variant\":" << variant << "}";
  return os.str();
}

}  // namespace dgemm
