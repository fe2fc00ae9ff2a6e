/*
 * deepgemm.h - the public C API of DeepGEMM (libdeepgemm.so.1).
 *
 * DeepGEMM computes, for every batch index b,
 *
 *     D = quantize( act( alpha * op(A) @ op(B) + beta * C + bias ) )
 *
 * with everything after the matrix product fused into the kernel's epilogue. The header is C99
 * and C++ and needs no CUDA header: streams and device pointers are plain `void *`.
 *
 * Usage in three steps:
 *   1. dgemm_context_create()     pick a device (auto, a CUDA device, or the CPU backend).
 *   2. dgemm_create_plan()        validate the problem, choose and compile a kernel (expensive,
 *                                 once per problem shape).
 *   3. dgemm_execute()            launch it (cheap, no allocation, no synchronization, safe to call
 *                                 from several threads on one plan and to capture in a CUDA graph).
 *
 * Every function returns a dgemm_status_t. On failure, dgemm_last_error() returns a message for
 * the calling thread that names the offending argument and its value, and no output is touched.
 * No C++ exception ever leaves the library.
 *
 * ABI: every function below is exported in version node DGEMM_1.0. Public structs begin with a
 * `struct_size` field, only ever grow at the end, and must be set up with their *_init function
 * so that binaries built against this header keep working with later 1.x libraries: a library
 * accepts any struct_size from the struct's first release up, reads only the bytes that size
 * covers (fields the caller does not know act as zero, i.e. off), and refuses a struct whose
 * bytes beyond the fields it knows are not zero (INVALID_ARGUMENT naming the byte).
 */
#ifndef DEEPGEMM_DEEPGEMM_H
#define DEEPGEMM_DEEPGEMM_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define DGEMM_API
#elif defined(__GNUC__) && __GNUC__ >= 4
#define DGEMM_API __attribute__((visibility("default")))
#else
#define DGEMM_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* Version. The build derives the soname (libdeepgemm.so.MAJOR) and pkg-config Version from these. */
#define DGEMM_VERSION_MAJOR 1
#define DGEMM_VERSION_MINOR 1
#define DGEMM_VERSION_PATCH 0
#define DGEMM_VERSION_NUMBER (DGEMM_VERSION_MAJOR * 10000 + DGEMM_VERSION_MINOR * 100 + DGEMM_VERSION_PATCH)

/*! dgemm_version() :
 *  @return DGEMM_VERSION_NUMBER of the library actually loaded. Compare it with the header's
 *          macro to detect a header/library mismatch. */
DGEMM_API unsigned dgemm_version(void);

/*! dgemm_version_string() :
 *  @return "MAJOR.MINOR.PATCH" of the loaded library; static storage, never NULL. */
DGEMM_API const char *dgemm_version_string(void);

/* ------------------------------------------------------------------------------------------ */
/* Status codes. Numbers are fixed forever; a retired code is renamed *_OBSOLETE, never reused. */
typedef enum dgemm_status_t {
    DGEMM_STATUS_SUCCESS = 0,
    DGEMM_STATUS_INVALID_ARGUMENT = 1,      /* a NULL, out-of-range or inconsistent argument */
    DGEMM_STATUS_NOT_SUPPORTED = 2,         /* valid request this build/device cannot do (e.g. a type combination) */
    DGEMM_STATUS_OUT_OF_MEMORY = 3,         /* host or device allocation failed (plan/context creation only) */
    DGEMM_STATUS_INSUFFICIENT_WORKSPACE = 4,/* dgemm_execute given less workspace than the plan needs */
    DGEMM_STATUS_CONTEXT_MISMATCH = 5,      /* a plan used outside its context's device */
    DGEMM_STATUS_NO_DEVICE = 6,             /* a CUDA device was requested and none is usable */
    DGEMM_STATUS_DEVICE_ERROR = 7,          /* the CUDA runtime or driver reported an error */
    DGEMM_STATUS_COMPILE_ERROR = 8,         /* run-time kernel compilation (NVRTC) failed */
    DGEMM_STATUS_ARCH_FILE_ERROR = 9,       /* a hardware description file could not be read or parsed */
    DGEMM_STATUS_INTERNAL_ERROR = 10        /* a bug in DeepGEMM; the message says where */
} dgemm_status_t;

/*! dgemm_status_string() :
 *  @return a static, human-readable name for a status ("DGEMM_STATUS_INVALID_ARGUMENT"), or
 *          "DGEMM_STATUS_UNKNOWN" for a number that is not a status. Never NULL. */
DGEMM_API const char *dgemm_status_string(dgemm_status_t status);

/*! dgemm_last_error() :
 *  @return the detailed message of the last failing call made by this thread ("" if the last
 *          call succeeded). Valid until this thread's next DeepGEMM call. Never NULL. */
DGEMM_API const char *dgemm_last_error(void);

/* ------------------------------------------------------------------------------------------ */
/* Element types. Values are fixed. */
typedef enum dgemm_dtype_t {
    DGEMM_DTYPE_F32 = 0,
    DGEMM_DTYPE_F16 = 1,      /* IEEE binary16 */
    DGEMM_DTYPE_BF16 = 2,     /* bfloat16 */
    DGEMM_DTYPE_F8_E4M3 = 3,  /* OCP FP8 E4M3 (finite only, max 448, NaN = 0x7f/0xff) */
    DGEMM_DTYPE_F8_E5M2 = 4,  /* OCP FP8 E5M2 (IEEE-like, has inf) */
    DGEMM_DTYPE_I8 = 5,       /* signed 8-bit integer */
    DGEMM_DTYPE_I32 = 6       /* signed 32-bit integer (outputs and integer accumulation only) */
} dgemm_dtype_t;

/* op(X): X as stored (N) or its transpose (T). */
typedef enum dgemm_op_t { DGEMM_OP_N = 0, DGEMM_OP_T = 1 } dgemm_op_t;

/* Storage order of every matrix of the problem (A, B, C and D).
 * Row-major (C, NumPy, PyTorch): element (i, j) of a matrix with leading dimension ld is at
 * X[i * ld + j]. Column-major (BLAS, cuBLAS): it is at X[i + j * ld]. */
typedef enum dgemm_order_t { DGEMM_ORDER_ROW_MAJOR = 0, DGEMM_ORDER_COL_MAJOR = 1 } dgemm_order_t;

/* ------------------------------------------------------------------------------------------ */
/* Context: the device a plan runs on, and its caches. */
typedef struct dgemm_context *dgemm_context_t;

typedef enum dgemm_device_kind_t {
    DGEMM_DEVICE_AUTO = 0,  /* the first usable CUDA GPU, else the CPU backend */
    DGEMM_DEVICE_CUDA = 1,  /* the CUDA device with index device_index; DGEMM_STATUS_NO_DEVICE if absent */
    DGEMM_DEVICE_CPU = 2    /* the CPU reference backend (operands in host memory) */
} dgemm_device_kind_t;

/*! dgemm_context_create() :
 *  Creates a context on a device.
 *  @param kind          DGEMM_DEVICE_AUTO, DGEMM_DEVICE_CUDA or DGEMM_DEVICE_CPU.
 *  @param device_index  CUDA device ordinal for DGEMM_DEVICE_CUDA; must be 0 otherwise.
 *  @param ctx           receives the new context; untouched on failure.
 *  @return SUCCESS; INVALID_ARGUMENT (ctx NULL, bad kind, negative or non-zero-where-unused
 *          device_index); NO_DEVICE (CUDA requested and that device is not usable, e.g. no driver);
 *          DEVICE_ERROR; OUT_OF_MEMORY. */
DGEMM_API dgemm_status_t dgemm_context_create(dgemm_device_kind_t kind, int device_index,
                                              dgemm_context_t *ctx);

/*! dgemm_context_destroy() :
 *  Destroys a context. NULL is accepted and does nothing. Plans made on it must be destroyed
 *  first (destroying it with live plans returns INVALID_ARGUMENT and destroys nothing).
 *  @return SUCCESS; INVALID_ARGUMENT. */
DGEMM_API dgemm_status_t dgemm_context_destroy(dgemm_context_t ctx);

/*! dgemm_context_device() :
 *  @param kind          receives DGEMM_DEVICE_CUDA or DGEMM_DEVICE_CPU (never AUTO); may be NULL.
 *  @param device_index  receives the CUDA ordinal (0 for CPU); may be NULL.
 *  @return SUCCESS; INVALID_ARGUMENT (ctx NULL). */
DGEMM_API dgemm_status_t dgemm_context_device(dgemm_context_t ctx, dgemm_device_kind_t *kind,
                                              int *device_index);

/* ------------------------------------------------------------------------------------------ */
/* Problem descriptor: everything about the shape, types and layout. Set up with
 * dgemm_problem_init(), then change the fields you need.
 *
 * op(A) is m x k and op(B) is k x n; C and D are m x n. With op = N the stored matrix has the
 * shape of op(X); with op = T it is stored transposed. Leading dimensions are in elements and
 * must be at least max(1, stored columns) for row-major, max(1, stored rows) for column-major.
 * A leading dimension of 0 means "tightly packed" and is replaced by that minimum.
 *
 * m = 0 or n = 0: nothing to compute; execute returns SUCCESS and touches nothing.
 * k = 0: the product is empty (zero), so D = quantize(act(beta * C + bias)), as in BLAS.
 *
 * Types: A and B in F32, F16, BF16, F8_E4M3, F8_E5M2 (E4M3 x E5M2 mixed allowed) with F32 compute,
 * or I8 x I8 with I32 compute; D in F32, F16, BF16, F8_E4M3, F8_E5M2, I8 (and I32 for integer
 * problems); C in F32, F16, BF16 or D's type (also I32 for integer problems). Anything else is
 * DGEMM_STATUS_NOT_SUPPORTED. In this release the GPU kernels take F16/BF16 A and B with F32
 * compute; the other combinations run on the CPU backend (a CUDA context answers NOT_SUPPORTED
 * for them at plan time, naming the reason).
 *
 * Batches: batch_count >= 1 independent GEMMs; matrix b of X starts at X + b * stride_x
 * elements. A stride of 0 broadcasts one matrix to every batch (not allowed for D when
 * batch_count > 1). Bias and output-scale vectors are shared by all batches. */
typedef struct dgemm_problem_t {
    uint32_t struct_size;       /* = sizeof(dgemm_problem_t); set by dgemm_problem_init */
    uint32_t reserved0;
    int64_t m, n, k;
    dgemm_dtype_t a_type, b_type, c_type, d_type;
    dgemm_dtype_t compute_type; /* DGEMM_DTYPE_F32 for float inputs, DGEMM_DTYPE_I32 for int8 */
    dgemm_op_t op_a, op_b;
    dgemm_order_t order;
    int64_t lda, ldb, ldc, ldd;
    int64_t batch_count;
    int64_t stride_a, stride_b, stride_c, stride_d;
    uint64_t reserved[8];       /* must be zero */
} dgemm_problem_t;

/*! dgemm_problem_init() :
 *  Sets *p to a valid default: m = n = k = 1; a/b/c/d_type BF16, compute_type F32, op N/N,
 *  row-major, leading dimensions and strides 0 (packed), batch_count 1, reserved zeroed,
 *  struct_size set.
 *  @return SUCCESS; INVALID_ARGUMENT (p NULL). */
DGEMM_API dgemm_status_t dgemm_problem_init(dgemm_problem_t *p);

/* ------------------------------------------------------------------------------------------ */
/* Epilogue descriptor: what happens after the product, fixed at plan time.
 *
 *   x  = alpha * acc + beta * C[i, j]           (C read only when `beta` != 0 at plan time)
 *   x += bias[j]  (PER_COLUMN, length n)  or  bias[i]  (PER_ROW, length m)
 *   y  = act(x)
 *   z  = y * scale          (scale per tensor / row / column, when scale_mode != NONE)
 *   D  = convert(z): float outputs round to nearest even; I8 rounds to nearest even, adds the
 *        zero point (when DGEMM_EPILOGUE_ZERO_POINT) and saturates to [-128, 127]; FP8 rounds to
 *        nearest even and, with DGEMM_EPILOGUE_SATURATE, clamps to the largest finite value
 *        (else overflows to NaN for E4M3 and inf for E5M2); I32 outputs (integer problems only)
 *        are exact with the identity epilogue and round to nearest even, saturating, otherwise.
 *
 * Activations: RELU max(x, 0); GELU_TANH 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3)));
 * GELU_ERF 0.5x(1 + erf(x / sqrt(2))); SILU x / (1 + exp(-x)). */
typedef enum dgemm_activation_t {
    DGEMM_ACT_NONE = 0,
    DGEMM_ACT_RELU = 1,
    DGEMM_ACT_GELU_TANH = 2,
    DGEMM_ACT_GELU_ERF = 3,
    DGEMM_ACT_SILU = 4
} dgemm_activation_t;

typedef enum dgemm_vector_mode_t {
    DGEMM_VECTOR_NONE = 0,
    DGEMM_VECTOR_PER_TENSOR = 1, /* one value (output scale only) */
    DGEMM_VECTOR_PER_ROW = 2,    /* length m, indexed by the row i of D */
    DGEMM_VECTOR_PER_COLUMN = 3  /* length n, indexed by the column j of D */
} dgemm_vector_mode_t;

#define DGEMM_EPILOGUE_SATURATE   0x1u  /* FP8 outputs clamp to the largest finite value (default on) */
#define DGEMM_EPILOGUE_ZERO_POINT 0x2u  /* I8 outputs add an int32 zero point (per scale vector entry) */

typedef struct dgemm_epilogue_t {
    uint32_t struct_size;          /* = sizeof(dgemm_epilogue_t); set by dgemm_epilogue_init */
    uint32_t flags;                /* DGEMM_EPILOGUE_* bits; others must be zero */
    float alpha;                   /* default 1; used unless the execute args override it */
    float beta;                    /* default 0; non-zero means the plan reads C */
    dgemm_vector_mode_t bias_mode; /* NONE, PER_ROW or PER_COLUMN */
    dgemm_dtype_t bias_type;       /* F32, F16 or BF16 */
    dgemm_activation_t activation;
    dgemm_vector_mode_t scale_mode;/* output scale: NONE, PER_TENSOR, PER_ROW or PER_COLUMN */
    uint64_t reserved[8];          /* must be zero */
} dgemm_epilogue_t;

/*! dgemm_epilogue_init() :
 *  Sets *e to the identity epilogue: alpha 1, beta 0, no bias (bias_type F32), no activation, no
 *  scale, flags = DGEMM_EPILOGUE_SATURATE, reserved zeroed, struct_size set.
 *  @return SUCCESS; INVALID_ARGUMENT (e NULL). */
DGEMM_API dgemm_status_t dgemm_epilogue_init(dgemm_epilogue_t *e);

/* ------------------------------------------------------------------------------------------ */
/* Plan options (may be NULL in dgemm_create_plan for the defaults). */
typedef struct dgemm_plan_options_t {
    uint32_t struct_size;   /* = sizeof(dgemm_plan_options_t); set by dgemm_plan_options_init */
    uint32_t flags;         /* DGEMM_PLAN_* bits; others must be zero */
    const char *arch_file;  /* optional YAML hardware description that overrides fields of the
                               detected device (NULL: the DEEPGEMM_ARCH environment variable, if set) */
    const char *force_kernel; /* optional: a kernel family name to force ("cpu", "sm80", "sm90",
                                 "small_m"), or one configuration by the name dgemm_plan_describe
                                 shows ("sm90_128x256x64_s4_t384_c2_p"; this also reaches
                                 configurations kept for measuring only); NULL lets the planner choose */
    uint64_t reserved[8];   /* must be zero */
} dgemm_plan_options_t;

#define DGEMM_PLAN_AUTOTUNE 0x1u /* time the best few candidates on the device and keep the fastest */

/*! dgemm_plan_options_init() :
 *  @return SUCCESS; INVALID_ARGUMENT (o NULL). */
DGEMM_API dgemm_status_t dgemm_plan_options_init(dgemm_plan_options_t *o);

/* ------------------------------------------------------------------------------------------ */
/* Plans. */
typedef struct dgemm_plan *dgemm_plan_t;

/*! dgemm_create_plan() :
 *  Validates the problem and epilogue, chooses a kernel for the context's device, compiles it (or
 *  finds it in the cache) and sizes its workspace. Thread-safe.
 *  @param ctx       the context; the plan keeps a reference to it.
 *  @param problem   shape, types and layout (copied; not kept).
 *  @param epilogue  fused epilogue (copied); NULL means the identity epilogue.
 *  @param options   NULL for the defaults.
 *  @param plan      receives the plan; untouched on failure.
 *  @return SUCCESS; INVALID_ARGUMENT (NULL ctx/problem/plan, a bad struct_size, non-zero reserved
 *          fields, negative sizes, bad enums, leading dimension too small, sizes whose products
 *          overflow int64, a zero D stride with batch_count > 1, ...); NOT_SUPPORTED (a type
 *          combination or epilogue this library does not implement, or a forced kernel family that
 *          cannot run the problem); ARCH_FILE_ERROR; COMPILE_ERROR; DEVICE_ERROR; OUT_OF_MEMORY. */
DGEMM_API dgemm_status_t dgemm_create_plan(dgemm_context_t ctx, const dgemm_problem_t *problem,
                                           const dgemm_epilogue_t *epilogue,
                                           const dgemm_plan_options_t *options, dgemm_plan_t *plan);

/*! dgemm_destroy_plan() :
 *  NULL is accepted. Must not race with dgemm_execute on the same plan; work already enqueued on
 *  a stream stays valid (the plan's kernels stay loaded in the context).
 *  @return SUCCESS. */
DGEMM_API dgemm_status_t dgemm_destroy_plan(dgemm_plan_t plan);

/*! dgemm_plan_workspace_size() :
 *  @param bytes  receives the workspace dgemm_execute needs: often 0 on a GPU; on the CPU backend
 *                its scratch (packed panels per OpenMP thread, sized to the problem and to the
 *                thread count at plan time), since execute allocates nothing on any backend.
 *  @return SUCCESS; INVALID_ARGUMENT (NULL plan or bytes). */
DGEMM_API dgemm_status_t dgemm_plan_workspace_size(dgemm_plan_t plan, size_t *bytes);

/*! dgemm_plan_describe() :
 *  Writes a JSON description of the plan: backend, kernel family, tile, stages, predicted time,
 *  and the best rejected candidates with their predicted times or reasons.
 *  @param buffer    receives a NUL-terminated string (truncated to fit); may be NULL when size is 0.
 *  @param size      bytes available in buffer.
 *  @param required  receives the full length including the NUL; may be NULL.
 *  @return SUCCESS (even when truncated: compare *required with size); INVALID_ARGUMENT (NULL
 *          plan, or NULL buffer with non-zero size). */
DGEMM_API dgemm_status_t dgemm_plan_describe(dgemm_plan_t plan, char *buffer, size_t size,
                                             size_t *required);

/* ------------------------------------------------------------------------------------------ */
/* Execute-time values. Pointers are in the memory of the plan's device (device memory for CUDA
 * plans, host memory for the CPU backend). */
typedef enum dgemm_scalar_mode_t {
    DGEMM_SCALARS_FROM_PLAN = 0, /* alpha and beta from the plan's epilogue (default) */
    DGEMM_SCALARS_HOST = 1,      /* args.alpha and args.beta */
    DGEMM_SCALARS_DEVICE = 2     /* *args.alpha_ptr and *args.beta_ptr, read when the kernel runs */
} dgemm_scalar_mode_t;

typedef struct dgemm_args_t {
    uint32_t struct_size;            /* = sizeof(dgemm_args_t); set by dgemm_args_init */
    dgemm_scalar_mode_t scalar_mode;
    float alpha, beta;               /* DGEMM_SCALARS_HOST */
    const float *alpha_ptr;          /* DGEMM_SCALARS_DEVICE */
    const float *beta_ptr;           /* DGEMM_SCALARS_DEVICE; may be NULL if the plan does not read C */
    const void *bias;                /* bias vector of the plan's bias_type; required iff bias_mode != NONE */
    const float *scale;              /* output scale vector; required iff scale_mode != NONE */
    const int32_t *zero_point;       /* required iff DGEMM_EPILOGUE_ZERO_POINT; same length as scale */
    uint64_t reserved[8];            /* must be zero */
} dgemm_args_t;

/*! dgemm_args_init() :
 *  scalar_mode FROM_PLAN, alpha 1, beta 0, every pointer NULL, reserved zeroed, struct_size set.
 *  @return SUCCESS; INVALID_ARGUMENT (a NULL). */
DGEMM_API dgemm_status_t dgemm_args_init(dgemm_args_t *a);

/*! dgemm_execute() :
 *  Runs the plan: enqueues its kernels on `stream` (CUDA) or computes before returning (CPU).
 *  Allocates nothing, never synchronizes, copies nothing between host and device: it can be
 *  captured in a CUDA graph and called concurrently from several threads on one plan.
 *
 *  What is fixed by the plan and what may differ at each call:
 *    fixed:  m, n, k, types, ops, order, leading dimensions, batch count and strides, whether C is
 *            read, the bias/scale modes and types, activation, the device.
 *    free:   the pointers A, B, C, D, the args values and pointers, the workspace, the stream.
 *            Any pointer aligned to its element size works: a plan whose fast kernel needs 16-byte
 *            aligned operands also holds a general kernel, chosen at execute from the pointers.
 *
 *  @param plan            a plan from dgemm_create_plan.
 *  @param A, B            operands; must be non-NULL when m, n and k are all > 0.
 *  @param C               read iff the plan's beta != 0 (may then equal D, with ldc == ldd).
 *  @param D               output; must be non-NULL when m, n > 0.
 *  @param args            NULL for the plan's alpha/beta and no vectors.
 *  @param workspace       at least dgemm_plan_workspace_size bytes (NULL if that is 0).
 *  @param workspace_size  bytes available.
 *  @param stream          a cudaStream_t for CUDA plans (NULL = the default stream); ignored on CPU.
 *  @return SUCCESS; INVALID_ARGUMENT (NULL plan/pointer, a vector the plan needs missing, bad args
 *          struct, a pointer the plan reads or writes not aligned to its element size: A, B, C, D,
 *          bias, scale, zero_point, and alpha_ptr/beta_ptr in DEVICE mode); INSUFFICIENT_WORKSPACE;
 *          CONTEXT_MISMATCH (a CUDA plan executed while the calling thread's current device is not
 *          the plan's device: call cudaSetDevice first); DEVICE_ERROR (the launch failed). On
 *          failure nothing is enqueued and no output is written. */
DGEMM_API dgemm_status_t dgemm_execute(dgemm_plan_t plan, const void *A, const void *B,
                                       const void *C, void *D, const dgemm_args_t *args,
                                       void *workspace, size_t workspace_size, void *stream);

/* ========================================================================================== */
/* DGEMM_1.1: extensions.
 *
 * Features added after 1.0 (input scaling for FP8/INT8, grouped problems, ...) are described by
 * extension structs passed as a chain to the *_ext entry points below; the 1.0 structs and
 * functions never change. Every extension struct begins with a dgemm_ext_header_t whose `type`
 * says which struct it is and whose `next` points to the next extension (NULL ends the chain).
 * Plan-time extensions go to dgemm_create_plan_ext, execute-time ones to dgemm_execute_ext; each
 * type may appear at most once in a chain. With ext = NULL the *_ext functions behave exactly as
 * their 1.0 counterparts. */
#define DGEMM_VERSION_HAS_EXT 1

typedef enum dgemm_ext_type_t {
    DGEMM_EXT_SCALING = 1,     /* plan time: input scaling of A and B, block-scaled outputs */
    DGEMM_EXT_GROUPED = 2,     /* plan time: a grouped (mixture-of-experts) problem */
    DGEMM_EXT_SCALE_ARGS = 3,  /* execute time: the scale tensors of DGEMM_EXT_SCALING */
    DGEMM_EXT_GROUP_ARGS = 4   /* execute time: the per-group arrays of DGEMM_EXT_GROUPED */
} dgemm_ext_type_t;

typedef struct dgemm_ext_header_t {
    uint32_t type;          /* a dgemm_ext_type_t */
    uint32_t struct_size;   /* size of the whole extension struct; set by its *_init function */
    const void *next;       /* the next extension of the chain, or NULL */
} dgemm_ext_header_t;

/*! dgemm_create_plan_ext() :
 *  dgemm_create_plan with a chain of plan-time extensions.
 *  @param ext  the first extension (a struct beginning with dgemm_ext_header_t), or NULL.
 *  @return as dgemm_create_plan; also INVALID_ARGUMENT for an execute-time extension, a type
 *          given twice, or a bad extension struct_size; NOT_SUPPORTED for an unknown type. */
DGEMM_API dgemm_status_t dgemm_create_plan_ext(dgemm_context_t ctx, const dgemm_problem_t *problem,
                                               const dgemm_epilogue_t *epilogue,
                                               const dgemm_plan_options_t *options, const void *ext,
                                               dgemm_plan_t *plan);

/*! dgemm_execute_ext() :
 *  dgemm_execute with a chain of execute-time extensions (same promises: no allocation, no
 *  synchronization).
 *  @param ext  the first extension, or NULL; the plan's extensions say which are required.
 *  @return as dgemm_execute; also INVALID_ARGUMENT for a plan-time extension, a type given
 *          twice, a bad struct_size, or a required extension missing; NOT_SUPPORTED for an
 *          unknown type. */
DGEMM_API dgemm_status_t dgemm_execute_ext(dgemm_plan_t plan, const void *A, const void *B,
                                           const void *C, void *D, const dgemm_args_t *args,
                                           const void *ext, void *workspace, size_t workspace_size,
                                           void *stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DEEPGEMM_DEEPGEMM_H */
