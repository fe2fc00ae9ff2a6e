// The registry of kernel-family models the planner consults: core/families.def's model column.
#pragma once

#include <vector>

#include "plan/planner.hpp"

namespace dgemm {

// Every family's model, in the order of core/families.def.
const std::vector<const FamilyModel*>& family_models();
// The model of one family (never null for a registered family).
const FamilyModel* family_model(Family family);

// Each family's model (src/plan/family_<name>.cpp).
#define DGEMM_FAMILY(Enumerator, name, model, launcher) const FamilyModel& model();
#include "core/families.def"
#undef DGEMM_FAMILY

}  // namespace dgemm
