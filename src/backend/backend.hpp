// The interface between the planner's decision and the code that runs it. A backend turns a
// KernelConfig into an Executable (compiling and loading what it needs); the Executable launches.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "core/hardware.hpp"
#include "core/problem.hpp"
#include "core/kernel_config.hpp"

namespace dgemm {

// One prepared GEMM. run() allocates nothing and never synchronizes; it may be called
// concurrently from several threads.
class Executable {
 public:
  virtual ~Executable() = default;
  virtual std::size_t workspace_size() const = 0;
  // Arguments were validated by the caller (non-null where needed, workspace large enough).
  virtual void run(const ExecArgs& args) const = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;        // "cpu", "cuda"
  virtual const HardwareDesc& hardware() const = 0;
  // Builds an executable for the planner's choice. `fallback` (may be null) is the planner's
  // configuration for calls whose pointers `config` cannot take (PlanDecision::fallback).
  // Throws Error (NotSupported, CompileError, ...).
  virtual std::unique_ptr<Executable> prepare(const GemmProblem& problem, const Epilogue& epilogue,
                                              const KernelConfig& config, const KernelConfig* fallback = nullptr) = 0;
};

class CandidateTimer;  // src/plan/autotune.hpp

std::unique_ptr<Backend> make_cpu_backend();
// Returns nullptr (and sets *why) when no usable CUDA device / driver is present. Builds without
// CUDA support always return nullptr.
std::unique_ptr<Backend> make_cuda_backend(int device_index, std::string* why);

// Times candidates on the backend's device for autotuning (DGEMM_PLAN_AUTOTUNE); nullptr when the
// backend has nothing to tune (the CPU backend, builds without CUDA).
std::unique_ptr<CandidateTimer> make_candidate_timer(Backend& backend, int device_index);

}  // namespace dgemm
