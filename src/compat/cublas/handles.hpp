// What this library keeps per cuBLAS handle, per cuBLASLt handle and per cuBLASLt descriptor.
//
// Handles are the real cuBLAS's handles, unchanged: cublasCreate forwards to the real cuBLAS and
// returns its handle, and this library keeps a side record keyed by the handle's address. So a
// program may pass the same handle to functions this library does not export (LD_PRELOAD mode:
// they go straight to the real cuBLAS) and every forwarded call works on the real handle. The
// record shadows the settings cuBLAS documents (stream, workspace, pointer and math modes: updated
// by our cublasSet* after the real call succeeds) and holds the handle's plans and workspace
// pools. A handle we never saw created has no record: its calls are forwarded.
//
// As cuBLAS documents, a handle may be used by several threads at once but must not be destroyed
// while in use; the record's mutex guards its plan cache and pools, and the records themselves
// live from the real create to the real destroy.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "compat/cublas/plan_cache.hpp"
#include "compat/cublas/route.hpp"

namespace dgemm_cublas {

struct HandleState {
  std::mutex mu;
  HandleModes modes;               // cublasSetPointerMode / cublasSetMathMode
  void* stream = nullptr;          // cublasSetStream
  void* user_ws = nullptr;         // cublasSetWorkspace (reset by cublasSetStream, as in cuBLAS)
  std::size_t user_ws_size = 0;
  PlanCache cache;
  // Workspace for plans that need one when the user's is too small: one pool per stream the handle
  // ran on (two streams must never share scratch memory), grown on the cold path, freed with the
  // handle. Outgrown pools may still be read by queued kernels: they are kept until then too.
  struct Pool {
    void* stream;
    void* ptr;
    std::size_t size;
  };
  std::vector<Pool> pools;
  std::vector<Pool> retired;

  HandleState();
  ~HandleState();
  // The pool of `stream` if it holds `bytes`, else nullptr. Caller holds mu.
  void* pool(void* stream, std::size_t bytes) const;
};

struct LtHandleState {
  std::mutex mu;
  PlanCache cache;
  LtHandleState();
};

// A destroy takes the record out before the real destroy (so that a handle created at the same
// address by another thread meanwhile gets a record of its own) and drops it after it (the pools
// are idle then), or puts it back if the real destroy failed. Records are shared pointers: one
// found by a call stays alive until the call ends, whatever other threads create or destroy;
// live handles at one address share a record (handles.cpp says why).
void register_handle(const void* handle);
std::shared_ptr<HandleState> take_handle(const void* handle);
void restore_handle(const void* handle, std::shared_ptr<HandleState> state);
std::shared_ptr<HandleState> find_handle(const void* handle);  // null if unknown

void register_lt_handle(const void* handle);
std::shared_ptr<LtHandleState> take_lt_handle(const void* handle);
void restore_lt_handle(const void* handle, std::shared_ptr<LtHandleState> state);
std::shared_ptr<LtHandleState> find_lt_handle(const void* handle);

// cuBLASLt descriptor shadows (route.hpp's LtDesc / LtLayout), keyed by descriptor address.
void shadow_desc(const void* desc, const LtDesc& value);
void forget_desc(const void* desc);
void shadow_desc_set(const void* desc, int attribute, const void* buf, std::size_t size);
void shadow_layout(const void* layout, const LtLayout& value);
void forget_layout(const void* layout);
void shadow_layout_set(const void* layout, int attribute, const void* buf, std::size_t size);
// All five at once (one lock); false if any is unknown.
bool find_lt_shadows(const void* desc, const void* a, const void* b, const void* c, const void* d, LtDesc* out_desc,
                     LtLayout* out_a, LtLayout* out_b, LtLayout* out_c, LtLayout* out_d);

// The DeepGEMM context of a device (-1: the CPU backend, test mode), made at first use and kept
// for the life of the process; nullptr if it cannot be made (the message is in *why).
dgemm_context_t context_for(int device, const char** why);

// Grows `state`'s pool for `stream` to at least `bytes` (the cold path: allocates). nullptr on
// failure.
void* grow_pool(HandleState& state, void* stream, std::size_t bytes);

}  // namespace dgemm_cublas
