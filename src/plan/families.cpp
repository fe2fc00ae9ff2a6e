// Registration of the kernel-family models: one line per family in core/families.def.
#include "plan/families.hpp"

namespace dgemm {

const std::vector<const FamilyModel*>& family_models() {
  static const std::vector<const FamilyModel*> models = {
#define DGEMM_FAMILY(Enumerator, name, model, launcher) &model(),
#include "core/families.def"
#undef DGEMM_FAMILY
  };
  return models;
}

const FamilyModel* family_model(Family family) {
  for (const FamilyModel* m : family_models())
    if (m->family() == family) return m;
  return nullptr;
}

}  // namespace dgemm
