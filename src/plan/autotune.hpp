// Autotuning (plan option DGEMM_PLAN_AUTOTUNE): time the planner's best few candidates on the
// device, keep the fastest, and remember the winner on disk per device and problem class so that
// the next process plans instantly. The planner never launches anything: the timing is an
// interface (CandidateTimer) that a backend implements; this file holds the selection rule and
// the memory, both testable without a GPU.
//
// Selection rule: the planner's choice is the default; a challenger replaces it only when it is
// faster by more than `noise` (so autotuning never picks a plan slower than the default by more
// than the measurement noise), and a candidate that fails to run is never chosen.
#pragma once

#include <string>

#include "core/hardware.hpp"
#include "core/problem.hpp"
#include "plan/planner.hpp"

namespace dgemm {

class CandidateTimer {
 public:
  virtual ~CandidateTimer() = default;
  // Median time (microseconds) of `config` on the device for the problem, warm, on fresh random
  // inputs; a negative value when the candidate cannot run (compile or launch failure).
  virtual double time_us(const GemmProblem& p, const Epilogue& e, const KernelConfig& config) = 0;
  // Identifies the device for the on-disk memory: name, compute capability, SM count, clocks,
  // driver and library versions: anything whose change should invalidate a remembered winner.
  virtual std::string device_key() const = 0;
};

struct AutotuneOptions {
  int top_k = 4;          // candidates timed: the planner's choice and the best runners-up
  double noise = 0.03;    // a challenger must be faster than the default by more than this fraction
  std::string memory_dir; // where winners are remembered; "" = do not remember
};

// $DEEPGEMM_CACHE_DIR/autotune (default ~/.cache/deepgemm/autotune); "" when the cache is off
// (DEEPGEMM_CACHE_DIR=off) or there is no home folder.
std::string default_autotune_dir();

// The class of problems that share a tuned choice: types, transposes, order, epilogue, the
// alignment of the leading dimensions, and m, n, k rounded up to powers of two.
std::string problem_class_key(const GemmProblem& p, const Epilogue& e);

struct AutotuneResult {
  PlanDecision decision;     // chosen = the winner (runners_up keep the others)
  bool remembered = false;   // the winner came from the disk memory, nothing was timed
  bool changed = false;      // the winner is not the planner's choice
  double default_us = -1;    // measured time of the planner's choice (-1 when not timed)
  double winner_us = -1;     // measured time of the winner
};

AutotuneResult autotune(const PlanDecision& planned, const GemmProblem& p, const Epilogue& e, CandidateTimer& timer,
                        const AutotuneOptions& options);

}  // namespace dgemm
