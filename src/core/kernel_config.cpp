// Printing and parsing of kernel configurations.
#include "core/kernel_config.hpp"

#include <sstream>

namespace dgemm {

namespace {
struct FamilyEntry {
  Family family;
  const char* name;
};
constexpr FamilyEntry kFamilies[] = {
#define DGEMM_FAMILY(Enumerator, name, model, launcher) {Family::Enumerator, name},
#include "core/families.def"
#undef DGEMM_FAMILY
};
}  // namespace

const char* family_name(Family f) {
  for (const FamilyEntry& e : kFamilies)
    if (e.family == f) return e.name;
  return "?";
}

bool family_from_name(const std::string& name, Family* out) {
  for (const FamilyEntry& e : kFamilies) {
    if (name == e.name) {
      *out = e.family;
      return true;
    }
  }
  return false;
}

std::string family_names() {
  std::string s;
  for (const FamilyEntry& e : kFamilies) s += (s.empty() ? "" : ", ") + std::string(e.name);
  return s;
}

std::string KernelConfig::name() const {
  std::ostringstream os;
  os << family_name(family);
  if (family == Family::Cpu) return os.str();
  os << "_" << block_m << "x" << block_n;
  if (block_k > 0) os << "x" << block_k;
  if (stages > 0) os << "_s" << stages;
  if (loads_in_flight > 0) os << "_l" << loads_in_flight;
  os << "_t" << threads;
  if (blocks_per_sm > 1) os << "_b" << blocks_per_sm;
  if (cluster_m > 1) os << "_c" << cluster_m;
  if (cluster_n > 1) os << "_cn" << cluster_n;
  if (cluster_k > 1) os << "_ck" << cluster_k;
  if (split_k > 1) os << "_sk" << split_k;
  if (swap_ab) os << "_swap";
  if (raster_group != 8 && block_k > 0) os << "_r" << raster_group;
  if (persistent) os << "_p";
  if (pack_a) os << (pack_a_t ? "_packAt" : "_packA");
  if (pack_b) os << (pack_b_t ? "_packBt" : "_packB");
  if (variant != 0) os << "_v" << variant;
  if (stream_k) os << "_streamk";
  if (tma_store) os << "_ts";
  return os.str();
}

std::string KernelConfig::to_json() const {
  auto b = [](bool v) { return v ? "true" : "false"; };
  std::ostringstream os;
  os << "{\"name\":\"" << name() << "\",\"family\":\"" << family_name(family) << "\",\"block_m\":" << block_m
     << ",\"block_n\":" << block_n << ",\"block_k\":" << block_k << ",\"stages\":" << stages
     << ",\"loads_in_flight\":" << loads_in_flight << ",\"threads\":" << threads << ",\"blocks_per_sm\":" << blocks_per_sm << ",\"cluster_m\":" << cluster_m << ",\"cluster_n\":" << cluster_n
     << ",\"cluster_k\":" << cluster_k << ",\"split_k\":" << split_k << ",\"swap_ab\":" << b(swap_ab)
     << ",\"swizzle_bytes\":" << swizzle_bytes << ",\"raster_group\":" << raster_group
     << ",\"persistent\":" << b(persistent) << ",\"pack_a\":" << b(pack_a) << ",\"pack_b\":" << b(pack_b)
     << ",\"pack_a_t\":" << b(pack_a_t) << ",\"pack_b_t\":" << b(pack_b_t)
     << ",\"variant\":" << variant << ",\"stream_k\":" << b(stream_k)
     << ",\"tma_store\":" << b(tma_store) << "}";
  return os.str();
}

}  // namespace dgemm
