/* probe_real: a program linked against the real cuBLAS / cuBLASLt (libcublas.so.13 here), run
 * with and without libdeepgemm_cublas.so.1 in LD_PRELOAD. Needs no GPU: it only checks where
 * the dynamic linker bound cuBLAS's names and that a call the library forwards returns exactly
 * the real cuBLAS's status.
 *
 *   probe_real preload   expects cublasGemmEx, cublasLtMatmul, cublasCreate_v2 bound to the
 *                        interposer, a NULL-handle cublasGemmEx counted as forwarded
 *                        (UNKNOWN_HANDLE), and its status equal to the real function's
 *   probe_real plain     expects them bound to the real cuBLAS and no interposer in the process
 * Exit 0 on success, 1 with a message naming the check otherwise. */
#define _GNU_SOURCE
#include <cublasLt.h>
#include <cublas_v2.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "deepgemm/deepgemm_cublas.h"

static int failures = 0;
#define CHECK(cond, ...)                      \
  do {                                        \
    if (!(cond)) {                            \
      fprintf(stderr, "probe_real: FAIL: "); \
      fprintf(stderr, __VA_ARGS__);           \
      fprintf(stderr, "\n");                  \
      ++failures;                             \
    }                                         \
  } while (0)

static const char* object_of(void* fn) {
  Dl_info info;
  if (!dladdr(fn, &info) || !info.dli_fname) return "?";
  return info.dli_fname;
}

static cublasStatus_t null_handle_gemm(void* fn) {
  typedef cublasStatus_t (*GemmEx)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                   const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                                   cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
  static const float one = 1.0f, zero = 0.0f;
  static unsigned short a[16], b[16], c[16];
  return ((GemmEx)fn)(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, a, CUDA_R_16F, 4, b, CUDA_R_16F, 4, &zero, c,
                      CUDA_R_16F, 4, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

int main(int argc, char** argv) {
  const int preload = argc > 1 && strcmp(argv[1], "preload") == 0;
  /* Addresses through the program's own references: what the dynamic linker bound them to. */
  const char* gemm = object_of((void*)&cublasGemmEx);
  const char* lt = object_of((void*)&cublasLtMatmul);
  const char* create = object_of((void*)&cublasCreate_v2);
  printf("cublasGemmEx -> %s\ncublasLtMatmul -> %s\ncublasCreate_v2 -> %s\n", gemm, lt, create);
  typedef int (*CountersFn)(deepgemm_cublas_counters_t*);
  CountersFn counters = (CountersFn)dlsym(RTLD_DEFAULT, "deepgemm_cublas_counters");

  /* The real function, whatever the interposition: looked up in the real library itself. */
  void* real_lib = dlopen("libcublas.so.13", RTLD_NOW | RTLD_NOLOAD);
  if (!real_lib) real_lib = dlopen("libcublas.so.12", RTLD_NOW | RTLD_NOLOAD);
  CHECK(real_lib != NULL, "the real libcublas is not in the process");
  void* real_gemm = real_lib ? dlsym(real_lib, "cublasGemmEx") : NULL;
  const cublasStatus_t expected = real_gemm ? null_handle_gemm(real_gemm) : CUBLAS_STATUS_SUCCESS;
  const cublasStatus_t got = null_handle_gemm((void*)&cublasGemmEx);
  printf("cublasGemmEx(NULL handle): %d (real cuBLAS: %d)\n", (int)got, (int)expected);
  CHECK(got == expected, "status %d differs from the real cuBLAS's %d", (int)got, (int)expected);
  CHECK(got != CUBLAS_STATUS_SUCCESS, "a NULL handle was accepted");

  if (preload) {
    CHECK(strstr(gemm, "libdeepgemm_cublas") != NULL, "cublasGemmEx bound to %s, not the interposer", gemm);
    CHECK(strstr(lt, "libdeepgemm_cublas") != NULL, "cublasLtMatmul bound to %s, not the interposer", lt);
    CHECK(strstr(create, "libdeepgemm_cublas") != NULL, "cublasCreate_v2 bound to %s, not the interposer", create);
    CHECK(counters != NULL, "deepgemm_cublas_counters not found");
    if (counters) {
      deepgemm_cublas_counters_t c;
      memset(&c, 0, sizeof(c));
      c.struct_size = sizeof(c);
      CHECK(counters(&c) == 0, "deepgemm_cublas_counters failed");
      printf("counters: calls %llu routed %llu fallback %llu unknown-handle %llu\n", (unsigned long long)c.calls,
             (unsigned long long)c.routed, (unsigned long long)c.fallback,
             (unsigned long long)c.by_reason[DEEPGEMM_CUBLAS_UNKNOWN_HANDLE]);
      /* One call through the interposer; the direct call to the real function is not seen. */
      CHECK(c.calls == 1 && c.fallback == 1 && c.routed == 0 && c.by_reason[DEEPGEMM_CUBLAS_UNKNOWN_HANDLE] == 1,
            "counters: calls %llu fallback %llu (expected 1 forwarded UNKNOWN_HANDLE call)", (unsigned long long)c.calls,
            (unsigned long long)c.fallback);
    }
  } else {
    CHECK(strstr(gemm, "libcublas.so") != NULL, "cublasGemmEx bound to %s, not the real cuBLAS", gemm);
    CHECK(strstr(lt, "libcublasLt.so") != NULL, "cublasLtMatmul bound to %s, not the real cuBLASLt", lt);
    CHECK(counters == NULL, "the interposer is in the process without LD_PRELOAD");
  }
  printf("probe_real %s: %s\n", preload ? "preload" : "plain", failures ? "FAIL" : "ok");
  return failures ? 1 : 0;
}
