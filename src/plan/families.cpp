// Registration of the kernel-family models. A new family adds its model here.
#include "plan/families.hpp"

namespace dgemm {

const std::vector<const FamilyModel*>& family_models() {
  static const std::vector<const FamilyModel*> models = {&cpu_family_model(), &sm80_family_model(),
                                                             &sm90_family_model(), &small_m_family_model()};
  return models;
}

}  // namespace dgemm
