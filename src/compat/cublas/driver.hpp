// The few CUDA driver calls this layer needs (loaded from libcuda.so.1 at first use, never
// linked): which device the calling thread works on, device memory for per-handle workspace
// pools, and whether a stream is capturing. In test mode (DEEPGEMM_CUBLAS_DEVICE=cpu) the same
// calls answer for the CPU backend: device -1, host memory, never capturing.
#pragma once

#include <cstddef>

namespace dgemm_cublas {

// The CUDA ordinal of the calling thread's current context, -1 in test mode; false if there is
// none (no driver, or no context current on this thread yet).
bool current_device(int* device);

// Memory for a workspace pool on the current device (host memory in test mode); nullptr on failure.
void* pool_alloc(std::size_t bytes);
void pool_free(void* ptr);

// True unless the driver says the stream is not capturing (errors count as capturing: the caller
// then stays off every path that could allocate or compile).
bool stream_capturing(void* stream);

}  // namespace dgemm_cublas
