// The registry of kernel-family models the planner consults, in order.
#pragma once

#include <vector>

#include "plan/planner.hpp"

namespace dgemm {

const std::vector<const FamilyModel*>& family_models();

// Each family's model (src/plan/family_<name>.cpp).
const FamilyModel& cpu_family_model();
const FamilyModel& sm80_family_model();
const FamilyModel& sm90_family_model();
const FamilyModel& small_m_family_model();

}  // namespace dgemm
