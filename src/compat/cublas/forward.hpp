// What every exported cuBLAS / cuBLASLt function uses: the real function's address (resolved once
// per call site), the forwarding call (marked, so that cuBLAS's calls back into our exports go
// straight on), and the two versioned names each export gets (see exports.def).
#pragma once

#include <cublas_api.h>

#include "compat/cublas/real.hpp"

namespace dgemm_cublas {

// Calls the real function at `sym` with our own parameters, unchanged: the function type is
// rebuilt from them, and they have the exact types of cuBLAS's declaration (the compiler checks
// each exported definition against the cuBLAS header's extern "C" declaration). Without a real
// cuBLAS the answer is CUBLAS_STATUS_NOT_INITIALIZED, cuBLAS's own "could not be set up" (the
// reason is on stderr).
template <class... Args>
cublasStatus_t forward(void* sym, Args... args) {
  if (sym == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  ForwardScope scope;
  return reinterpret_cast<cublasStatus_t (*)(Args...)>(sym)(args...);
}

// Runs this library's bookkeeping around a cuBLAS call (handle records, descriptor shadows) so
// that nothing it throws crosses the C boundary; what failed then is simply unknown, and calls
// that need it are forwarded.
template <class F>
void quietly(F&& f) noexcept {
  try {
    f();
  } catch (...) {
  }
}

// Forwards a call that creates or changes a real object, then, when the real function accepted it
// and the program (not the real library calling back) made it, runs `record` quietly: how this
// library's handle records and descriptor shadows follow the real objects.
template <class Record, class... Args>
cublasStatus_t forward_and_record(void* sym, Record&& record, Args... args) {
  const bool outer = !forwarding();
  const cublasStatus_t st = forward(sym, args...);
  if (st == CUBLAS_STATUS_SUCCESS && outer) quietly(record);
  return st;
}

}  // namespace dgemm_cublas

// The address of the real library's `name`, looked up at the first call through this site.
#define DGC_REAL(lib, name)                                                                    \
  ([]() -> void* {                                                                             \
    static void* const sym = ::dgemm_cublas::real_symbol(::dgemm_cublas::Lib::lib, #name);     \
    return sym;                                                                                \
  }())

// Exports `name` (a function defined in the same file) as name@@NODE13 and name@NODE12, through
// assembler aliases: the plain name stays local (the version script's `local: *`). Assembler,
// not the alias attribute, because C++ sees several cublasGemmEx (the header adds inline overloads).
#define DGC_EXPORT_AS(name, node12, node13)                                                  \
  __asm__(".globl dgc12_" #name "\n.type dgc12_" #name ", @function\n.set dgc12_" #name ", " #name \
          "\n.symver dgc12_" #name ", " #name "@" node12 "\n.globl dgc13_" #name "\n.type dgc13_" #name \
          ", @function\n.set dgc13_" #name ", " #name "\n.symver dgc13_" #name ", " #name "@@" node13 "\n");
