// The position in a multi-stage shared-memory pipeline, shared by the sm80 (cp.async) and sm90
// (TMA + mbarrier) main loops: which stage of the ring, and the parity of the ring's current round.
#pragma once

namespace dg {

// The ring position of a multi-stage pipeline: which stage, and the parity of its current round
// (the mbarrier phase to wait for; cp.async pipelines use only the stage).
template <int kStages>
struct PipelineState {
  int stage = 0;
  unsigned phase = 0;
  __device__ __forceinline__ void advance() {
    if (++stage == kStages) {
      stage = 0;
      phase ^= 1u;
    }
  }
};

}  // namespace dg
