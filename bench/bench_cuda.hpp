// CUDA-side helpers shared by deepgemm-bench's modes (bench_main.cpp: single GEMMs;
// bench_grouped.cpp: grouped GEMMs): errors as exceptions, owned device buffers, and the timing
// method of bench/README.md (contenders captured as CUDA graphs of N launches, interleaved
// repetitions, median per launch).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench_device.hpp"

namespace bench {

struct CudaFailure {
  std::string what;
};

inline void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw CudaFailure{std::string(what) + ": " + cudaGetErrorString(e)};
}

inline void check_int(int e, const char* what) { check_cuda(static_cast<cudaError_t>(e), what); }

// Device memory owned by the benchmark; freed when the row's buffers go.
struct DeviceBuffer {
  void* ptr = nullptr;
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) { check_cuda(cudaMalloc(&ptr, bytes ? bytes : 1), "cudaMalloc"); }
  ~DeviceBuffer() {
    if (ptr) cudaFree(ptr);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr(o.ptr) { o.ptr = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr, o.ptr);
    return *this;
  }
};

// One contender: a launcher of its work on input set `set`, timed as N launches per sample.
struct Contender {
  std::string name;  // "ours", "runner_up", "cublas", "cublaslt", ...
  std::function<std::string(int set)> launch;  // "" or the error
  void* out = nullptr;                         // its D buffer
  cudaGraphExec_t graph = nullptr;
  std::vector<double> samples_us;  // per launch
  std::string error;
  Comparison check;
  bool checked = false;
  ElemType out_type = ElemType::BF16;  // of its D
  bool verify = true;                  // computes the row's problem (else: timed only)
  ~Contender() {
    if (graph) cudaGraphExecDestroy(graph);
  }
};

// Captures `count` launches rotating over `sets` into a graph; nullptr if capture is not possible
// (then the contender is timed with back-to-back launches).
inline cudaGraphExec_t capture(Contender& c, cudaStream_t stream, int count, int sets) {
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) return nullptr;
  std::string err;
  for (int i = 0; i < count && err.empty(); ++i) err = c.launch(i % sets);
  cudaGraph_t graph = nullptr;
  cudaError_t e = cudaStreamEndCapture(stream, &graph);
  cudaGetLastError();  // a failed capture leaves a (non-sticky) error behind; clear it
  cudaGraphExec_t exec = nullptr;
  if (err.empty() && e == cudaSuccess && graph) {
    if (cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) exec = nullptr;
  }
  if (graph) cudaGraphDestroy(graph);
  cudaGetLastError();
  return exec;
}

inline void run_batch(Contender& c, cudaStream_t stream, int count, int sets) {
  if (c.graph) {
    check_cuda(cudaGraphLaunch(c.graph, stream), "cudaGraphLaunch");
    return;
  }
  for (int i = 0; i < count; ++i) {
    std::string err = c.launch(i % sets);
    if (!err.empty()) throw CudaFailure{c.name + ": " + err};
  }
}

struct TimingPlan {
  int launches = 0;   // per sample
  std::string mode;   // "graph", "mixed" or "stream"
  std::string notes;  // contenders that could not be captured
};

// Times every contender (samples_us gets `reps` samples each): launches per sample for about
// target_us of the first one's work (a multiple of `sets`), each captured as a graph when
// use_graph, warmed up, then interleaved repetitions that start with a different contender each
// time so that clock or thermal drift hits all alike.
inline TimingPlan time_contenders(std::vector<std::unique_ptr<Contender>>& contenders, cudaStream_t stream,
                                  cudaEvent_t ev_start, cudaEvent_t ev_stop, int reps, double target_us, int sets,
                                  bool use_graph) {
  TimingPlan plan;
  Contender& first = *contenders.front();
  for (int i = 0; i < 3; ++i) run_batch(first, stream, 1, 1);  // warm-up (module load, clocks)
  check_cuda(cudaEventRecord(ev_start, stream), "cudaEventRecord");
  run_batch(first, stream, 5, sets);
  check_cuda(cudaEventRecord(ev_stop, stream), "cudaEventRecord");
  check_cuda(cudaEventSynchronize(ev_stop), "cudaEventSynchronize");
  float ms = 0;
  check_cuda(cudaEventElapsedTime(&ms, ev_start, ev_stop), "cudaEventElapsedTime");
  double est_us = std::max(1.0, 1000.0 * ms / 5);
  int count = static_cast<int>(std::ceil(target_us / est_us));
  count = std::max(count, 2);
  count = std::min(count, 2000);
  count = (count + sets - 1) / sets * sets;
  plan.launches = count;
  bool all_graphs = true;
  for (auto& c : contenders) {
    if (use_graph) c->graph = capture(*c, stream, count, sets);
    if (!c->graph) all_graphs = false;
    // dgemm_execute promises to be capturable: say so when it was not.
    if (use_graph && !c->graph) plan.notes += c->name + " could not be captured in a CUDA graph; ";
    run_batch(*c, stream, count, sets);  // warm-up at the timed length
  }
  check_cuda(cudaStreamSynchronize(stream), "warm-up");
  plan.mode = all_graphs ? "graph" : (use_graph ? "mixed" : "stream");
  const size_t nc = contenders.size();
  for (int r = 0; r < reps; ++r) {
    for (size_t i = 0; i < nc; ++i) {
      Contender& c = *contenders[(i + r) % nc];
      check_cuda(cudaEventRecord(ev_start, stream), "cudaEventRecord");
      run_batch(c, stream, count, sets);
      check_cuda(cudaEventRecord(ev_stop, stream), "cudaEventRecord");
      check_cuda(cudaEventSynchronize(ev_stop), "cudaEventSynchronize");
      check_cuda(cudaEventElapsedTime(&ms, ev_start, ev_stop), "cudaEventElapsedTime");
      c.samples_us.push_back(1000.0 * ms / count);
    }
  }
  check_cuda(cudaGetLastError(), "timing");
  return plan;
}

}  // namespace bench
