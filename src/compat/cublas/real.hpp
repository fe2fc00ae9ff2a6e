// The real cuBLAS and cuBLASLt, loaded with dlopen at their first use (never linked), and the
// thread-local mark that keeps calls the real cuBLAS makes back into our exports from being routed.
#pragma once

namespace dgemm_cublas {

enum class Lib { Cublas, CublasLt };

// The real library's definition of `name`, or nullptr when the library cannot be loaded or lacks
// the symbol (said once on stderr). Which library:
//   DEEPGEMM_CUBLAS_LIBRARY / DEEPGEMM_CUBLASLT_LIBRARY   a path or soname, if set;
//   else the libcublas.so.13 / .so.12 already in the process (in LD_PRELOAD mode the one the
//        program linked: its handles are the ones the program passes to functions we do not export);
//   else the first of libcublas.so.13, libcublas.so.12 that loads (libcublasLt likewise, the same
//        major as the libcublas in use first).
void* real_symbol(Lib lib, const char* name);

// While a ForwardScope lives, the calling thread is inside the real cuBLAS: cuBLAS calls its
// cuBLASLt through the dynamic linker, so those calls reach our exports and must go straight on.
struct ForwardScope {
  ForwardScope();
  ~ForwardScope();
  ForwardScope(const ForwardScope&) = delete;
  ForwardScope& operator=(const ForwardScope&) = delete;
};
bool forwarding();

// True if `code` lies in the real libcublas (not cuBLASLt): cuBLAS's own cublasLtMatmul calls for
// functions this library does not export (cublasDgemm, ...) reach our cublasLtMatmul through the
// dynamic linker in LD_PRELOAD mode; they go straight to cuBLASLt, uncounted. Asked only for
// calls whose handle is unknown (cuBLAS's internal handle always is), never on the routed path.
bool inside_real_cublas(const void* code);

}  // namespace dgemm_cublas
