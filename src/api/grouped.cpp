// Grouped problems at the C boundary: dgemm_grouped_t (plan time) and dgemm_group_args_t
// (execute time). What the arrays mean, and the rule for bad values, is core/grouping's.
#include "api/grouped.hpp"

#include <cstring>

#include "api/convert.hpp"
#include "api/extensions.hpp"
#include "api/handles.hpp"
#include "core/error.hpp"

namespace dgemm::api {

static_assert(int(GroupLayout::Contiguous) == DGEMM_GROUP_CONTIGUOUS && int(GroupLayout::Masked) == DGEMM_GROUP_MASKED,
              "group layout numbers differ");
static_assert(kGroupNegative == DGEMM_GROUP_STATUS_NEGATIVE && kGroupOutOfRange == DGEMM_GROUP_STATUS_OUT_OF_RANGE &&
                  kGroupDecreasing == DGEMM_GROUP_STATUS_DECREASING && kGroupUnaligned == DGEMM_GROUP_STATUS_UNALIGNED,
              "group status bits differ");

void grouped_init(dgemm_grouped_t* g) {
  init_extension(g, "g", DGEMM_EXT_GROUPED);
  g->layout = DGEMM_GROUP_CONTIGUOUS;
  g->m_alignment = 1;
}

void group_args_init(dgemm_group_args_t* a) {
  init_extension(a, "a", DGEMM_EXT_GROUP_ARGS);
}

Grouping convert_grouped(const dgemm_ext_header_t* ext) {
  Grouping g;
  if (ext == nullptr) return g;
  const dgemm_grouped_t copy = read_extension<dgemm_grouped_t>(ext, "grouped");
  const dgemm_grouped_t* s = &copy;
  if (s->reserved0 != 0) fail(Status::InvalidArgument, "grouped->reserved0 = ", s->reserved0, ": must be 0");
  const int layout = enum_value(s->layout);  // read as an int: the caller may have stored anything
  if (layout != DGEMM_GROUP_CONTIGUOUS && layout != DGEMM_GROUP_MASKED)
    fail(Status::InvalidArgument, "grouped->layout = ", layout,
         ": not a dgemm_group_layout_t (DGEMM_GROUP_CONTIGUOUS or DGEMM_GROUP_MASKED)");
  g.layout = static_cast<GroupLayout>(layout);
  g.m_alignment = s->m_alignment;
  g.expected_m = s->expected_m;
  return g;
}

namespace {

void check_int32_aligned(const void* ptr, const char* name) {
  if (reinterpret_cast<std::uintptr_t>(ptr) % 4 != 0)
    fail(Status::InvalidArgument, name, " = ", ptr, ": not aligned to 4 bytes");
}

}  // namespace

void convert_group_args(const dgemm_plan& plan, const dgemm_ext_header_t* ext, ExecArgs* x) {
  const GemmProblem& p = plan.problem;
  const Grouping& grouping = p.grouping;
  if (!grouping.grouped()) {
    if (ext) fail(Status::InvalidArgument, "ext: DGEMM_EXT_GROUP_ARGS given, but the plan is not grouped");
    return;
  }
  if (ext == nullptr)
    fail(Status::InvalidArgument, "ext: the plan is grouped (", group_layout_name(grouping.layout),
         "), so its execute needs a dgemm_group_args_t (DGEMM_EXT_GROUP_ARGS) in the chain");
  const dgemm_group_args_t copy = read_extension<dgemm_group_args_t>(ext, "group_args");
  const dgemm_group_args_t* a = &copy;
  const bool contiguous = grouping.contiguous();
  const int32_t* array = contiguous ? a->offsets : a->counts;
  const char* name = contiguous ? "group_args->offsets" : "group_args->counts";
  if (array == nullptr)
    fail(Status::InvalidArgument, name, " is NULL but the plan's layout is ", group_layout_name(grouping.layout));
  if ((contiguous ? a->counts : a->offsets) != nullptr)
    fail(Status::InvalidArgument, contiguous ? "group_args->counts" : "group_args->offsets",
         " is not NULL but the plan's layout is ", group_layout_name(grouping.layout), " (it reads only ", name, ")");
  check_int32_aligned(array, name);
  check_int32_aligned(a->status, "group_args->status");

  if (std::strcmp(plan.ctx->backend->name(), "cpu") == 0) {
    // Host memory: the values can be checked before anything is written.
    const GroupCheck rows = resolve_group_rows(grouping, p.batch_count, p.m, a->offsets, a->counts, nullptr, nullptr);
    if (rows.status != 0) {
      fail(Status::InvalidArgument, name, "[", rows.bad_index, "] = ", rows.bad_value, ": ",
           group_status_text(rows.bad_bit), " (m = ", p.m, ", G = ", p.batch_count,
           contiguous ? "; offsets must satisfy 0 <= offsets[0] <= ... <= offsets[G] <= m, each a multiple of "
                        "m_alignment = "
                      : "; counts must be in [0, m]",
           contiguous ? std::to_string(grouping.m_alignment) : std::string(), ")");
    }
  }
  x->group_offsets = a->offsets;
  x->group_counts = a->counts;
  x->group_status = a->status;
}

}  // namespace dgemm::api
