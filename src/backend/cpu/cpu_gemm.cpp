// PLACEHOLDER naive reference, replaced by the real CPU backend.
#include "backend/cpu/cpu_gemm.hpp"
#include "core/error.hpp"
namespace dgemm {
void cpu_gemm(const GemmProblem&, const Epilogue&, const ExecArgs&) {
  fail(Status::NotSupported, "cpu_gemm not implemented yet");
}
}  // namespace dgemm
