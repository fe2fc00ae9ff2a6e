// The clipping rule for per-group row arrays (deepgemm.h, "Bad per-group values").
#include "core/grouping.hpp"

#include <algorithm>
#include <sstream>

namespace dgemm {

const char* group_layout_name(GroupLayout layout) {
  switch (layout) {
    case GroupLayout::None: return "none";
    case GroupLayout::Contiguous: return "contiguous";
    case GroupLayout::Masked: return "masked";
  }
  return "?";
}

std::string Grouping::to_string() const {
  if (!grouped()) return "";
  std::ostringstream os;
  os << " grouped=" << group_layout_name(layout);
  if (contiguous()) os << "(align=" << m_alignment << ")";
  if (expected_m > 0) os << " expected_m=" << expected_m;
  return os.str();
}

const char* group_status_text(uint32_t bit) {
  switch (bit) {
    case kGroupNegative: return "negative";
    case kGroupOutOfRange: return "greater than m";
    case kGroupDecreasing: return "below the previous offset";
    case kGroupUnaligned: return "not a multiple of m_alignment";
  }
  return "?";
}

GroupCheck resolve_group_rows(const Grouping& grouping, int64_t groups, int64_t m, const int32_t* offsets,
                              const int32_t* counts, int64_t* begin, int64_t* end) {
  GroupCheck r;
  auto flag = [&](int64_t index, int64_t value, uint32_t bit) {
    if (r.bad_index < 0) {
      r.bad_index = index;
      r.bad_value = value;
      r.bad_bit = bit;
    }
    r.status |= bit;
  };
  if (grouping.masked()) {
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t c = counts[g];
      if (c < 0) flag(g, c, kGroupNegative);
      if (c > m) flag(g, c, kGroupOutOfRange);
      if (begin) begin[g] = 0;
      if (end) end[g] = std::clamp<int64_t>(c, 0, m);
    }
    return r;
  }
  // Contiguous: a running clamp keeps the bounds non-decreasing and inside [0, m]; rounding down
  // to the alignment keeps them there too, because m and the previous bound are multiples of it.
  const int64_t align = grouping.m_alignment;
  int64_t bound = 0;
  for (int64_t i = 0; i <= groups; ++i) {
    const int64_t v = offsets[i];
    if (v < 0) flag(i, v, kGroupNegative);
    if (v > m) flag(i, v, kGroupOutOfRange);
    if (i > 0 && v < offsets[i - 1]) flag(i, v, kGroupDecreasing);
    if (v % align != 0) flag(i, v, kGroupUnaligned);
    int64_t next = std::clamp<int64_t>(v, bound, m);
    next -= next % align;
    if (i > 0) {
      if (begin) begin[i - 1] = bound;
      if (end) end[i - 1] = next;
    }
    bound = next;
  }
  return r;
}

GroupRows resolve_group_rows(const Grouping& grouping, int64_t groups, int64_t m, const int32_t* offsets,
                             const int32_t* counts) {
  GroupRows r;
  r.begin.resize(std::size_t(groups));
  r.end.resize(std::size_t(groups));
  static_cast<GroupCheck&>(r) = resolve_group_rows(grouping, groups, m, offsets, counts, r.begin.data(), r.end.data());
  return r;
}

}  // namespace dgemm
