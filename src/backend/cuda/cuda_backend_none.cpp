// Builds without CUDA support: no CUDA backend, every context falls back to the CPU.
#include "backend/backend.hpp"
#include "plan/autotune.hpp"

namespace dgemm {

std::unique_ptr<Backend> make_cuda_backend(int, std::string* why) {
  if (why) *why = "this build of DeepGEMM has no CUDA support";
  return nullptr;
}

std::unique_ptr<CandidateTimer> make_candidate_timer(Backend&, int) { return nullptr; }

}  // namespace dgemm
