// Grouped (mixture-of-experts) problems: the plan-time description a GemmProblem carries, and the
// one rule that turns the per-group row arrays read at execute time into row ranges. Every
// backend applies that rule (the CUDA kernels on the device, the CPU backend and the C boundary's
// host-side check here), so a bad array means the same thing everywhere.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dgemm {

// Same numbers as dgemm_group_layout_t (0 = not grouped).
enum class GroupLayout : int { None = 0, Contiguous = 1, Masked = 2 };

const char* group_layout_name(GroupLayout layout);

// Fixed at plan time. The number of groups is the problem's batch_count.
struct Grouping {
  GroupLayout layout = GroupLayout::None;
  int64_t m_alignment = 1;  // contiguous: every offset is a multiple of it
  // A planning hint: the rows a group is expected to have on average (0 = unknown). The kernels
  // never read it; the planner costs the tiles that many rows make (planner README, "grouped").
  int64_t expected_m = 0;

  bool grouped() const { return layout != GroupLayout::None; }
  bool contiguous() const { return layout == GroupLayout::Contiguous; }
  bool masked() const { return layout == GroupLayout::Masked; }
  // "" when not grouped, else e.g. " grouped=contiguous(align=128)"; part of the problem's key.
  std::string to_string() const;
};

// The status bits (same values as DGEMM_GROUP_STATUS_*), each judged on the raw values.
enum GroupStatus : uint32_t {
  kGroupNegative = 0x1,    // an offset or count < 0
  kGroupOutOfRange = 0x2,  // an offset or count > m
  kGroupDecreasing = 0x4,  // contiguous: offsets[i] < offsets[i - 1]
  kGroupUnaligned = 0x8,   // contiguous: an offset not a multiple of m_alignment
};

// The rows each group computes after the clipping rule of deepgemm.h: group g covers rows
// [begin[g], end[g]) of its own slot (masked) or of the shared matrices (contiguous).
struct GroupCheck {
  uint32_t status = 0;     // GroupStatus bits of every rule broken
  int64_t bad_index = -1;  // the first entry that broke a rule, its value and that rule's bit
  int64_t bad_value = 0;
  uint32_t bad_bit = 0;
};
struct GroupRows : GroupCheck {
  std::vector<int64_t> begin, end;
};

// groups = G, m = the problem's m; `offsets` (G + 1, contiguous) or `counts` (G, masked) are host
// memory. Never fails: bad values are clipped and reported in `status`.
GroupRows resolve_group_rows(const Grouping& grouping, int64_t groups, int64_t m, const int32_t* offsets,
                             const int32_t* counts);
// The same rule into caller memory (`begin` and `end` hold G entries each, or are both null to
// only check the values): it allocates nothing, for dgemm_execute.
GroupCheck resolve_group_rows(const Grouping& grouping, int64_t groups, int64_t m, const int32_t* offsets,
                              const int32_t* counts, int64_t* begin, int64_t* end);

// What a status bit means, for messages ("below the previous offset").
const char* group_status_text(uint32_t bit);

}  // namespace dgemm
