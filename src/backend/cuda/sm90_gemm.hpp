// Host side of the sm90 family (device code: src/kernels/sm90/sm90_gemm.cuh): the JIT source of a
// plan's kernel and the launcher (launcher.hpp). Exposed so that tests and tools can generate and
// compile the exact source a plan would use without a GPU.
#pragma once

#include <string>

#include "backend/cuda/jit.hpp"
#include "core/kernel_config.hpp"
#include "core/problem.hpp"

namespace dgemm {
namespace cuda {

// The name of the GEMM kernel each sm90 module holds (and of the packing kernel, when it packs).
inline constexpr const char* kSm90Kernel = "dgemm_sm90_gemm";
inline constexpr const char* kSm90PackKernel = "dgemm_sm90_pack";
inline constexpr int kSm90BlockK = 64;

// Threads per block: the producer warpgroup and the consumer warpgroups (one for BLOCK_M = 64, two
// for 128 and 256).
int sm90_threads(const KernelConfig& config);
// Dynamic shared memory of `config`'s kernel for a problem: the stage ring (with per-stage block
// scales), the split-K parking tile, the barriers, the tile's 128 x 128 block scales and 1 KB
// alignment slack (mirrors dg::sm90::Gemm::kSmemBytes and its run-time part).
int sm90_smem_bytes(const KernelConfig& config, const GemmProblem& p, const Epilogue* e = nullptr);
// Boxes of 64 rows x 128 bytes (64 columns of a 16-bit X, 128 of an FP8 one, 32 of an i32 one)
// each consumer warpgroup stages at a time when the epilogue stores X through shared memory and
// TMA (dg::sm90 kStoreChunks): 0 when the kernel stores from registers only (an output that is
// not 16-bit, nor a block-scaled FP8 D, nor i8 sums stored exactly as i32 — the last two need the
// epilogue `e` — or is stored transposed, grouped problems, tiles whose warpgroups own more than
// 64 rows or whose width is not whole boxes, or no shared memory left beside the stage ring). The
// largest divisor of BLOCK_N / box columns that fits.
int sm90_store_chunks(const KernelConfig& config, const GemmProblem& p, const Epilogue* e = nullptr);
// Whether the kernel stores a transposed 16-bit X (X(i, j) at D[j * ldd + i]: the swap-AB view) through
// shared memory and TMA on each CTA's last tile, staging in the idle stage ring (dg::sm90
// kTransStage): a 16-bit D that is not block-scaled, one m64 atom per consumer warpgroup (BLOCK_M
// 64 or 128) and 16 or more columns, cooperative warpgroups, not grouped, no stream-K, no cluster
// along M. Its D map's boxes are 64 X rows by sm90_trans_box_cols(config) X columns.
bool sm90_trans_staged(const KernelConfig& config, const GemmProblem& p, const Epilogue* e = nullptr);
int sm90_trans_box_cols(const KernelConfig& config);

// How an operand's input scale enters the main loop (dg::sm90 kScale*): 0 not at all (none, or
// applied by the epilogue), 1 VEC128 (per row, loaded with each stage), 2 BLK128x128 (per tile).
int sm90_mainloop_scale(const ScaleDesc& s);

jit::CompileRequest sm90_compile_request(const GemmProblem& p, const Epilogue& e, const KernelConfig& config,
                                         const std::string& arch);

}  // namespace cuda
}  // namespace dgemm
