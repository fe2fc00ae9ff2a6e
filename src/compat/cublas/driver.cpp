// CUDA driver calls through dlopen (see driver.hpp). The signatures are the driver API's
// (CUresult = int, CUdevice = int, CUdeviceptr = unsigned long long, CUstream = void*); declaring
// them here keeps this layer free of cuda.h and of a link-time dependency on libcuda.
#include "compat/cublas/driver.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "compat/cublas/observe.hpp"

namespace dgemm_cublas {
namespace {

struct Driver {
  int (*ctx_get_device)(int*) = nullptr;
  int (*mem_alloc)(unsigned long long*, std::size_t) = nullptr;
  int (*mem_free)(unsigned long long) = nullptr;
  int (*stream_is_capturing)(void*, int*) = nullptr;  // CUstreamCaptureStatus: 0 = none
};

const Driver& driver() {
  static const Driver d = [] {
    Driver out;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return out;
    out.ctx_get_device = reinterpret_cast<int (*)(int*)>(dlsym(lib, "cuCtxGetDevice"));
    out.mem_alloc = reinterpret_cast<int (*)(unsigned long long*, std::size_t)>(dlsym(lib, "cuMemAlloc_v2"));
    out.mem_free = reinterpret_cast<int (*)(unsigned long long)>(dlsym(lib, "cuMemFree_v2"));
    out.stream_is_capturing = reinterpret_cast<int (*)(void*, int*)>(dlsym(lib, "cuStreamIsCapturing"));
    return out;
  }();
  return d;
}

}  // namespace

bool current_device(int* device) {
  if (settings().cpu) {
    *device = -1;
    return true;
  }
  const Driver& d = driver();
  return d.ctx_get_device && d.ctx_get_device(device) == 0;
}

void* pool_alloc(std::size_t bytes) {
  if (settings().cpu) return std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  const Driver& d = driver();
  unsigned long long ptr = 0;
  if (!d.mem_alloc || d.mem_alloc(&ptr, bytes) != 0) return nullptr;
  return reinterpret_cast<void*>(ptr);
}

void pool_free(void* ptr) {
  if (!ptr) return;
  if (settings().cpu) {
    std::free(ptr);
    return;
  }
  const Driver& d = driver();
  if (d.mem_free) d.mem_free(reinterpret_cast<unsigned long long>(ptr));
}

bool stream_capturing(void* stream) {
  if (settings().cpu) return false;
  const Driver& d = driver();
  int status = 0;
  if (!d.stream_is_capturing || d.stream_is_capturing(stream, &status) != 0) return true;
  return status != 0;
}

}  // namespace dgemm_cublas
