// What every CUDA launcher does the same way, in one place: the kernel's view of a problem turned
// into the run-time parameters (DgemmParams) at plan time, the call's values bound into them at
// execute, the generated epilogue configuration, the tile grid the shared scheduler walks, and the
// split-K workspace layout (kernels/common/split_k.cuh).
#pragma once

#include <cstddef>
#include <string>

#include "core/kernel_config.hpp"
#include "core/kernel_view.hpp"
#include "core/problem.hpp"
#include "kernels/common/gemm_params.cuh"

namespace dgemm {
namespace cuda {

// Sizes, leading dimensions and batch strides of the view (pointers and scalars left empty).
DgemmParams plan_params(const GemmProblem& p, const KernelView& v);

// The call's operand pointers (in the kernel's order: KA, KB), C, D, epilogue scalars and vectors,
// and workspace, bound into a copy of the plan-time parameters.
DgemmParams bind_call(const DgemmParams& plan, const KernelView& v, const ExecArgs& x);

// The epilogue configuration struct for the JIT prelude (kernels/epilogue/epilogue.cuh), named
// `struct_name`, in the kernel's view: per-row / per-column vectors follow X's rows and columns,
// and X is stored transposed when the view says so.
std::string epilogue_struct(const std::string& struct_name, const GemmProblem& p, const Epilogue& e,
                            const KernelView& v);

// How an operand's input scale reaches the epilogue (kRowInScale / kColInScale): 0 not there (none,
// or a block mode the main loop applies), 1 one per tensor, 2 one per row of X / column of X.
int epilogue_in_scale(const ScaleDesc& s);

// The device type name of a DType in JIT sources ("dg::bf16", "float", "signed char", ...).
const char* device_type_name(DType t);

// The tiles of the view for a configuration (batches included, no K split: families that split
// K put the split count in themselves).
TileGrid tile_grid(const KernelView& v, int64_t batch_count, const KernelConfig& c);

// What the scheduler derives from the grid (m_units, group_m, and a multiply-and-shift pair per
// divisor), for kernels that decode units with TileScheduler::coords_fast (sm90). Inline, so that
// tests/cpu/test_fast_div.cpp checks this very arithmetic without a CUDA build.
inline TileDivs tile_divs(const TileGrid& g) {
  TileDivs d{};
  d.m_units = (g.num_m_blocks + g.cluster_m - 1) / g.cluster_m;
  d.group_m = g.raster_group / g.cluster_m;
  d.units = fast_div_for(d.m_units * g.num_n_blocks);
  d.batch = fast_div_for(g.batch_count);
  d.n = fast_div_for(g.num_n_blocks);
  const long long group_units = d.group_m > 1 ? (long long)d.group_m * g.num_n_blocks : 1;
  d.group = fast_div_for(group_units <= 0x7fffffffLL ? int(group_units) : 1);
  d.group_m_div = fast_div_for(d.group_m > 1 ? d.group_m : 1);
  return d;
}

// Bytes of f32 partials a split-K plan needs: batch x splits x rows x (cols rounded up to 4).
std::size_t split_k_workspace_bytes(const KernelView& v, int64_t batch_count, int splits);

}  // namespace cuda
}  // namespace dgemm
