// The launcher registry: core/families.def's launcher column.
#include "backend/cuda/launcher.hpp"

namespace dgemm {
namespace cuda {

// Each family's launcher (src/backend/cuda/<family>_gemm.cpp); `none` for families without one.
#define DGEMM_FAMILY(Enumerator, name, model, launcher) const Launcher* launcher();
#include "core/families.def"
#undef DGEMM_FAMILY
const Launcher* none() { return nullptr; }

const Launcher* launcher_for(Family family) {
  switch (family) {
#define DGEMM_FAMILY(Enumerator, name, model, launcher) \
  case Family::Enumerator:                              \
    return launcher();
#include "core/families.def"
#undef DGEMM_FAMILY
  }
  return nullptr;
}

std::vector<jit::CompileRequest> plan_compile_requests(const GemmProblem& p, const Epilogue& e, const KernelConfig& c,
                                                       const KernelConfig* fallback, const std::string& arch) {
  std::vector<jit::CompileRequest> out;
  for (const KernelConfig* k : {&c, fallback}) {
    if (!k) continue;
    if (const Launcher* l = launcher_for(k->family)) {
      std::vector<jit::CompileRequest> r = l->compile_requests(p, e, *k, arch);
      out.insert(out.end(), r.begin(), r.end());
    }
  }
  return out;
}

}  // namespace cuda
}  // namespace dgemm
