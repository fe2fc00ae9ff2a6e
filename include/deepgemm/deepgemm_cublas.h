/*
 * deepgemm_cublas.h - the few functions of libdeepgemm_cublas.so.1 that are not cuBLAS's.
 *
 * libdeepgemm_cublas.so.1 exports cuBLAS's GEMM entry points (cublasGemmEx, cublasLtMatmul, ...)
 * with cuBLAS's exact signatures, runs the calls DeepGEMM supports as DeepGEMM plans and forwards
 * everything else to the real cuBLAS (see README.md, "Drop-in for cuBLAS"). This header is for
 * programs that want to see what the library routed. A program written against cuBLAS alone
 * does not need it: it can look the functions up with dlsym(RTLD_DEFAULT, "deepgemm_cublas_counters")
 * and so work the same with or without the library.
 *
 * ABI: version node DEEPGEMM_CUBLAS_1.0. The counters struct begins with struct_size and only
 * grows at the end; reason numbers are fixed forever.
 */
#ifndef DEEPGEMM_DEEPGEMM_CUBLAS_H
#define DEEPGEMM_DEEPGEMM_CUBLAS_H

#include <stdint.h>

#include "deepgemm/deepgemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Why a GEMM call went where it went. DEEPGEMM_CUBLAS_ROUTED is "ran as a DeepGEMM plan"; every
 * other value is a reason for forwarding the call to the real cuBLAS. */
typedef enum deepgemm_cublas_reason_t {
    DEEPGEMM_CUBLAS_ROUTED = 0,
    DEEPGEMM_CUBLAS_DISABLED = 1,         /* DEEPGEMM_CUBLAS=off */
    DEEPGEMM_CUBLAS_UNKNOWN_HANDLE = 2,   /* handle or descriptor not created through this library
                                             (in LD_PRELOAD mode also cuBLAS's own internal
                                             cuBLASLt calls, e.g. from cublasDgemm) */
    DEEPGEMM_CUBLAS_INVALID = 3,          /* arguments cuBLAS rejects: it reports its own status */
    DEEPGEMM_CUBLAS_EMPTY = 4,            /* m, n, k or the batch count is 0 */
    DEEPGEMM_CUBLAS_TYPE = 5,             /* A/B/C type combination */
    DEEPGEMM_CUBLAS_COMPUTE_TYPE = 6,     /* compute or scale type (TF32, pedantic, f64, i32, ...) */
    DEEPGEMM_CUBLAS_MATH_MODE = 7,        /* cublasSetMathMode (pedantic, or reduced precision for f32) */
    DEEPGEMM_CUBLAS_POINTER_MODE = 8,     /* alpha/beta where our plans cannot read them */
    DEEPGEMM_CUBLAS_LAYOUT = 9,           /* order, strides, pointer-array batches, C/D aliasing */
    DEEPGEMM_CUBLAS_ALIGNMENT = 10,       /* a pointer not aligned to its element size */
    DEEPGEMM_CUBLAS_EPILOGUE = 11,        /* cuBLASLt epilogue or descriptor attribute we do not map */
    DEEPGEMM_CUBLAS_NO_DEVICE = 12,       /* no CUDA context current on the calling thread, no driver */
    DEEPGEMM_CUBLAS_PLAN = 13,            /* dgemm_create_plan refused the problem (cached per shape) */
    DEEPGEMM_CUBLAS_WORKSPACE = 14,       /* the plan needs more workspace than the call can give */
    DEEPGEMM_CUBLAS_CAPTURE = 15,         /* stream capture in progress and no plan ready yet */
    DEEPGEMM_CUBLAS_EXECUTE = 16,         /* dgemm_execute failed (nothing was enqueued) */
    DEEPGEMM_CUBLAS_INTERNAL = 17,        /* an error inside this library (e.g. out of host memory) */
    DEEPGEMM_CUBLAS_REASON_COUNT = 18
} deepgemm_cublas_reason_t;

#define DEEPGEMM_CUBLAS_MAX_REASONS 32 /* size of deepgemm_cublas_counters_t.by_reason */

typedef struct deepgemm_cublas_counters_t {
    uint32_t struct_size;      /* set by the caller to sizeof(deepgemm_cublas_counters_t) */
    uint32_t reserved0;
    uint64_t calls;            /* GEMM entry-point calls (cublas*gemm*, cublasLtMatmul) */
    uint64_t routed;           /* of those, run as DeepGEMM plans */
    uint64_t fallback;         /* of those, forwarded to the real cuBLAS */
    uint64_t plans_created;    /* plans made (plan cache misses that succeeded) */
    uint64_t plans_refused;    /* shapes dgemm_create_plan refused (remembered per shape) */
    uint64_t plan_cache_hits;
    uint64_t plans_evicted;    /* plans dropped because a handle's cache was full */
    uint64_t pool_bytes;       /* device memory held in per-handle workspace pools now */
    uint64_t by_reason[DEEPGEMM_CUBLAS_MAX_REASONS]; /* calls per deepgemm_cublas_reason_t */
    uint64_t reserved[8];
} deepgemm_cublas_counters_t;

/*! deepgemm_cublas_counters() :
 *  Copies the process-wide counters into *out (at most out->struct_size bytes).
 *  @return 0; -1 when out is NULL or out->struct_size is smaller than the first version. */
DGEMM_API int deepgemm_cublas_counters(deepgemm_cublas_counters_t *out);

/*! deepgemm_cublas_reset_counters() : sets every counter except pool_bytes to zero. */
DGEMM_API void deepgemm_cublas_reset_counters(void);

/*! deepgemm_cublas_reason_string() :
 *  @return a static name for a reason ("TYPE"), or "UNKNOWN"; never NULL. */
DGEMM_API const char *deepgemm_cublas_reason_string(int reason);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DEEPGEMM_DEEPGEMM_CUBLAS_H */
