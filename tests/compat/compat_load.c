/* compat_load LIBRARY [missing]: loading libdeepgemm_cublas.so.1 needs no cuBLAS (and no CUDA
 * driver) until a call is forwarded. dlopens LIBRARY, checks /proc/self/maps holds neither
 * libcublas nor libcuda, uses the library's own functions, then makes a cublasGemmEx call that is
 * forwarded (NULL handle) and checks that only now the real libcublas is mapped and that the
 * call returned the real cuBLAS's status for a NULL handle (CUBLAS_STATUS_NOT_INITIALIZED).
 * With "missing" (run with DEEPGEMM_CUBLAS_LIBRARY pointing nowhere): the forwarded call returns
 * CUBLAS_STATUS_NOT_INITIALIZED without crashing and no libcublas is mapped.
 * Exit 0 on success, 1 on a failed check, 77 when the toolkit has no libcublas to load. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mapped(const char* name) {
  FILE* f = fopen("/proc/self/maps", "r");
  char line[4096];
  int found = 0;
  if (!f) return -1;
  while (fgets(line, sizeof(line), f))
    if (strstr(line, name)) found = 1;
  fclose(f);
  return found;
}

typedef int (*GemmEx)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int,
                      const void*, void*, int, int, int, int);

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: compat_load LIBRARY [missing]\n");
    return 2;
  }
  const int missing = argc > 2 && strcmp(argv[2], "missing") == 0;
  int failures = 0;
#define CHECK(cond, msg)                                \
  do {                                                  \
    if (!(cond)) {                                      \
      fprintf(stderr, "compat_load: FAIL: %s\n", msg); \
      ++failures;                                       \
    }                                                   \
  } while (0)
  if (!missing) {
    void* probe = dlopen("libcublas.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!probe) probe = dlopen("libcublas.so.12", RTLD_NOW | RTLD_LOCAL);
    if (!probe) {
      printf("compat_load: no libcublas.so.13/.12 on the library path: skipped\n");
      return 77;
    }
    /* Only asked whether it exists: unload it again before the real test. */
    dlclose(probe);
    CHECK(mapped("libcublas") == 0, "libcublas stayed mapped after the probe (cannot test)");
  }

  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "compat_load: dlopen %s: %s\n", argv[1], dlerror());
    return 1;
  }
  CHECK(mapped("libcublas") == 0, "libcublas mapped just by loading the library");
  CHECK(mapped("libcuda.so") == 0, "libcuda mapped just by loading the library");
  const char* (*reason)(int) = (const char* (*)(int))dlsym(lib, "deepgemm_cublas_reason_string");
  CHECK(reason && strcmp(reason(5), "TYPE") == 0, "deepgemm_cublas_reason_string");
  CHECK(mapped("libcublas") == 0, "libcublas mapped by the library's own functions");

  GemmEx gemm = (GemmEx)dlsym(lib, "cublasGemmEx");
  CHECK(gemm != NULL, "no cublasGemmEx");
  if (gemm) {
    static const float one = 1.0f, zero = 0.0f;
    static unsigned short a[16], b[16], c[16];
    /* 2 = CUDA_R_16F, 68 = CUBLAS_COMPUTE_32F, -1 = CUBLAS_GEMM_DEFAULT */
    const int st = gemm(NULL, 0, 0, 4, 4, 4, &one, a, 2, 4, b, 2, 4, &zero, c, 2, 4, 68, -1);
    printf("cublasGemmEx(NULL handle) = %d; libcublas mapped: %d; libcuda mapped: %d\n", st, mapped("libcublas"),
           mapped("libcuda.so"));
    CHECK(st == 1, "status is not CUBLAS_STATUS_NOT_INITIALIZED");
    if (missing) {
      CHECK(mapped("libcublas") == 0, "a libcublas was mapped although DEEPGEMM_CUBLAS_LIBRARY points nowhere");
    } else {
      CHECK(mapped("libcublas") == 1, "the forwarded call did not load the real libcublas");
    }
    CHECK(mapped("libcuda.so") == 0, "a forwarded call loaded the CUDA driver");
  }
  printf("compat_load%s: %s\n", missing ? " missing" : "", failures ? "FAIL" : "ok");
  return failures ? 1 : 0;
}
