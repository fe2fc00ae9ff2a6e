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
/* Context: the device a plan runs on, and its caches. Every in-memory cache is bounded: a
 * context remembers the 256 most recently used plans (a live plan keeps its own) and 16 hardware
 * descriptions; a process keeps the 128 most recently used compiled kernels and up to 4096
 * planner decisions (forgotten all at once when full). The disk cache (DEEPGEMM_CACHE_DIR)
 * keeps every kernel. */
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
 * DGEMM_STATUS_NOT_SUPPORTED. On a GPU, in this release: the sm90 family (Hopper) takes F16/BF16,
 * FP8 and I8 A and B (8-bit operands K-contiguous), the sm80 and small_m families F16/BF16, and
 * the sm80 family also K-contiguous I8 (row-major op_a = N, op_b = T; column-major op_a = T,
 * op_b = N; on Hopper plans choose sm90 for I8); F32 A and B run on the CPU backend only (a CUDA
 * context answers NOT_SUPPORTED for what no family takes at plan time, naming the reason).
 *
 * Batches: 1 <= batch_count < 2^31 independent GEMMs; matrix b of X starts at X + b * stride_x
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
 *          overflow int64, batch_count >= 2^31, a zero D stride with batch_count > 1, ...);
 *          NOT_SUPPORTED (a type
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
 *  @param bytes  receives the workspace dgemm_execute needs: often 0 on a GPU (a kernel splitting
 *                K over CTAs keeps its partial tiles there); on the CPU backend
 *                its scratch (packed panels per OpenMP thread, sized to the problem and to the
 *                thread count at plan time), since execute allocates nothing on any backend.
 *  @return SUCCESS; INVALID_ARGUMENT (NULL plan or bytes). */
DGEMM_API dgemm_status_t dgemm_plan_workspace_size(dgemm_plan_t plan, size_t *bytes);

/*! dgemm_plan_describe() :
 *  Writes a JSON description of the plan: backend, kernel family, tile, stages, predicted time,
 *  the measured rule that chose the kernel over the model's ranking when one did ("rule"), and
 *  the best rejected candidates with their predicted times or reasons.
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
 *  @param C               read iff the plan's beta != 0 (may then equal D, with ldc == ldd);
 *                         a run-time beta of 0 (host or device) leaves C unread, as in BLAS.
 *  @param D               output; must be non-NULL when m, n > 0.
 *  @param args            NULL for the plan's alpha/beta and no vectors.
 *  @param workspace       at least dgemm_plan_workspace_size bytes (NULL if that is 0); its contents
 *                         need no initialisation, but two executes that may run at the same time
 *                         (other streams, other threads) need separate workspaces: GPU kernels
 *                         keep partial tiles and their flags there (split-K, stream-K).
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

/* ------------------------------------------------------------------------------------------ */
/* DGEMM_1.1: input scaling (FP8, INT8) and block-scaled FP8 outputs.
 *
 * A plan made with a dgemm_scaling_t (DGEMM_EXT_SCALING) in its chain multiplies the inputs by
 * scale factors and may quantize D in 1 x 128 blocks with scales it computes itself; each
 * dgemm_execute_ext of it takes the scale tensors in a dgemm_scale_args_t (DGEMM_EXT_SCALE_ARGS).
 * The modes, types, layouts and leading dimensions are fixed by the plan; the pointers are given
 * at each call.
 *
 * The math, for every batch, with A' = op(A) (m x k) and B' = op(B) (k x n). K is cut into
 * KB = ceil(k / 128) blocks of 128 (the last one holds the k - 128 (KB - 1) remaining terms):
 *
 *     P(i, j, kb) = sum over p in [128 kb, min(128 kb + 128, k)) of A'(i, p) * B'(p, j)
 *     acc(i, j)   = sum over kb of sa(i, kb) * sb(kb, j) * P(i, j, kb)
 *
 * where sa(i, kb) / sb(kb, j) is the scale of A / B that covers element (i, p) / (p, j):
 *
 *     mode           A: sa(i, kb)            B: sb(kb, j)            scale tensor rows x cols
 *     NONE           1                       1                       (none)
 *     PER_TENSOR     s[0]                    s[0]                    1 x 1
 *     OUTER_VEC      s(i)   (per token)      s(j)  (per channel)     m x 1        / n x 1
 *     VEC128         s(i, kb)                s(j, kb)                m x KB       / n x KB
 *     BLK128x128     s(i / 128, kb)          s(j / 128, kb)          ceil(m/128) x KB / ceil(n/128) x KB
 *
 * So block scales (VEC128, BLK128x128) multiply INSIDE the sum over K, once per block of 128 (a
 * GPU kernel promotes each block's tensor-core partial sums to FP32 and adds sa * sb * P), and
 * scales that do not depend on kb (PER_TENSOR, OUTER_VEC) are, exactly equivalently, applied
 * OUTSIDE: acc(i, j) = sa(i) * sb(j) * sum over all p. Implementations may factor any scale that
 * does not vary with kb out of the sum. For I8 x I8 problems P is the exact integer sum; with
 * input scales acc is no longer an integer (it is computed in float). Then the 1.0 epilogue
 * applies unchanged:
 *
 *     x = alpha * acc + beta * C + bias;   y = act(x);   z = y * scale   (output scale, if any)
 *
 * and D = convert(z) as in the 1.0 epilogue, unless D is block-scaled (below). The CPU backend
 * computes all of this in double (every scaled product and partial sum within a few units of
 * 2^-53 of the exact value; unscaled I8 sums exact) and rounds once to D's type: it is the
 * reference for every GPU result.
 * k = 0: acc = 0 and no scale of A or B is read.
 *
 * Scale types. F32: IEEE single, any value (a NaN or infinite scale propagates as IEEE says).
 * UE8M0 (OCP MX "E8M0"): one byte e, the value 2^(e - 127), so 0x00 = 2^-127 ... 0xFE = 2^127;
 * 0xFF is NaN (as in the OCP MX specification): every product it scales is NaN. (0x00 is an F32
 * subnormal: a kernel that decodes UE8M0 into F32 must not flush it to zero.)
 *
 * Scale tensor layout. Each scale tensor is a small matrix with one row per row group of the
 * operand (i for A, j for B, i / 128 or j / 128 for BLK128x128: the "outer" index) and one column
 * per K block, as in the table; D's block scales (below) are an m x ceil(n / 128) matrix. Element
 * (r, c) of the tensor of batch b is at
 *
 *     MN_MAJOR:  s[b * stride + r + c * ld]      (the outer index is contiguous: ld >= rows)
 *     K_MAJOR:   s[b * stride + r * ld + c]      (the K blocks are contiguous:    ld >= cols)
 *
 * counted in elements of the scale type (4 bytes for F32, 1 for UE8M0). ld = 0 means packed
 * (rows for MN_MAJOR, cols for K_MAJOR, at least 1); a larger ld pads each column / row.
 * stride = 0 shares one tensor among all batches (not allowed for D's scales when
 * batch_count > 1, which must not overlap: stride >= one tensor's extent). PER_TENSOR and
 * OUTER_VEC tensors are plain arrays with the packed ld (a per-batch PER_TENSOR scale is
 * stride = 1).
 *   A (m x KB) from torch: a contiguous (m, KB) tensor is K_MAJOR with ld = KB; DeepGEMM's
 *   "MN-major TMA-aligned" tensor (transposed, m padded to a multiple of 4) is MN_MAJOR with
 *   ld = align(m, 4). B 128 x 128 (DeepGEMM's (ceil(n/128), KB) float tensor) is K_MAJOR.
 * What the GPU kernels will load fastest (with TMA): MN_MAJOR A and D scales whose ld * element
 * size is a multiple of 16 bytes (ld a multiple of 4 for F32, of 16 for UE8M0) and whose base
 * address and batch stride are 16-byte aligned; B's BLK128x128 scales in either layout. Other
 * layouts are correct everywhere the CPU backend runs; a GPU plan that cannot read a layout
 * directly either repacks it into the plan's workspace or answers NOT_SUPPORTED at plan time
 * with the reason. Any scale pointer must be aligned to its element size.
 *
 * Block-scaled output (d_scale.mode = VEC128, D of type F8_E4M3 or F8_E5M2): the fused
 * quantization DeepGEMM's kernels expect as their next input. For each row i and each block of
 * 128 columns jb of D (the last one narrower when n is not a multiple of 128):
 *
 *     amax = max over j in the block of |z(i, j)|     (NaN when any z is NaN)
 *     if amax is NaN or amax >= 2^128 (z would be infinite in F32):  s = NaN (F32) / 0xFF (UE8M0)
 *     F32:    s = max(fl32(amax / fp8_max), 2^-126)   (fl32: round to nearest F32; 2^-126 keeps a
 *                                                      zero or tiny block finite)
 *     UE8M0:  s = 2^e with e = max(-126, the least integer with 2^e * fp8_max >= amax), i.e. the
 *             F32 scale rounded UP to a power of two, so no quantized value exceeds fp8_max
 *     D(i, j) = convert(z(i, j) / s)   (rounded to nearest even; the SATURATE flag applies as
 *                                       for any FP8 output; with UE8M0 the division is exact)
 *     d_scale(i, jb) = s                (in the tensor given by args, layout of d_scale)
 *
 * fp8_max is 448 for E4M3 and 57344 for E5M2. The scale tensor has the shape and layout rules of
 * an A VEC128 scale tensor with K = n, so D and its scales feed the next GEMM's A directly.
 *
 * amax of D (flag DGEMM_SCALING_AMAX_D): *amax_d = max over every i, j and batch of |y(i, j)|,
 * taken after the activation and before the output scale and any quantization (the point where
 * cuBLASLt's CUBLASLT_MATMUL_DESC_AMAX_D_POINTER takes it: the epilogue's result before D's scale),
 * stored as F32 (rounded to nearest), NaN if any y is NaN. It is overwritten, not combined with
 * the old value. Any D type. With m = 0 or n = 0 nothing is written (as for D).
 */
typedef enum dgemm_scale_mode_t {
    DGEMM_SCALE_NONE = 0,
    DGEMM_SCALE_PER_TENSOR = 1,  /* one scale for the whole operand (torch._scaled_mm, cuBLASLt SCALAR_32F) */
    DGEMM_SCALE_OUTER_VEC = 2,   /* one per row of op(A) / column of op(B) (cuBLASLt OUTER_VEC_32F) */
    DGEMM_SCALE_VEC128 = 3,      /* one per row / column and 128 of K (DeepGEMM's 1 x 128, VEC128_32F) */
    DGEMM_SCALE_BLK128x128 = 4   /* one per 128 x 128 block (DeepGEMM's B, cuBLASLt BLK128x128_32F) */
} dgemm_scale_mode_t;

typedef enum dgemm_scale_type_t {
    DGEMM_SCALE_TYPE_F32 = 0,    /* float */
    DGEMM_SCALE_TYPE_UE8M0 = 1   /* uint8_t exponent: 2^(e - 127); 0xFF = NaN */
} dgemm_scale_type_t;

typedef enum dgemm_scale_layout_t {
    DGEMM_SCALE_MN_MAJOR = 0,    /* element (r, c) at r + c * ld: the outer (M or N) index contiguous */
    DGEMM_SCALE_K_MAJOR = 1      /* element (r, c) at r * ld + c: the K blocks contiguous */
} dgemm_scale_layout_t;

/* One scale tensor's description (plan time). */
typedef struct dgemm_scale_desc_t {
    dgemm_scale_mode_t mode;     /* NONE (default): no scale tensor, the other fields are ignored */
    dgemm_scale_type_t type;     /* F32 (default) or UE8M0 */
    dgemm_scale_layout_t layout; /* MN_MAJOR (default) or K_MAJOR; see "Scale tensor layout" */
    uint32_t reserved0;          /* must be zero */
    int64_t ld;                  /* leading dimension in elements; 0 = packed */
    int64_t stride;              /* elements between the tensors of consecutive batches; 0 = shared */
} dgemm_scale_desc_t;

#define DGEMM_SCALING_AMAX_D 0x1u  /* write max |y| of D (before output scale/quantization) to args' amax_d */

/* Plan-time extension DGEMM_EXT_SCALING. */
typedef struct dgemm_scaling_t {
    dgemm_ext_header_t header;   /* type DGEMM_EXT_SCALING, struct_size = sizeof(dgemm_scaling_t) */
    dgemm_scale_desc_t a_scale;  /* scales of A: any mode */
    dgemm_scale_desc_t b_scale;  /* scales of B: any mode */
    dgemm_scale_desc_t d_scale;  /* block scales D is quantized with: NONE or VEC128 (FP8 D only) */
    uint32_t flags;              /* DGEMM_SCALING_* bits; others must be zero */
    uint32_t reserved0;          /* must be zero */
    uint64_t reserved[8];        /* must be zero */
} dgemm_scaling_t;

/*! dgemm_scaling_init() :
 *  Sets *s to "no scaling": header.type = DGEMM_EXT_SCALING, header.struct_size set, header.next
 *  NULL, every mode NONE, types F32, layouts MN_MAJOR, ld and stride 0, flags and reserved zero.
 *  A plan made with it is the same as one made without it.
 *  @return SUCCESS; INVALID_ARGUMENT (s NULL).
 *
 *  dgemm_create_plan_ext with a dgemm_scaling_t returns, besides its usual statuses:
 *  INVALID_ARGUMENT  header.struct_size below sizeof(dgemm_scaling_t) of 1.1 (a larger one, from a
 *                    later header, is read up to what this library knows, the rest must be zero);
 *                    a mode, type or layout that is
 *                    not one of its enum's values; non-zero reserved fields or unknown flag bits;
 *                    a negative ld or stride; an ld below the minimum (naming e.g.
 *                    "a_scale.ld", its value and the minimum); a zero or too small
 *                    d_scale.stride with batch_count > 1; extents that overflow int64;
 *  NOT_SUPPORTED     d_scale.mode other than NONE / VEC128, or VEC128 with a D that is not FP8;
 *                    a kernel family that has no kernel for the scaling (on a GPU only the sm90
 *                    family has any: f32 input scales (UE8M0 too for VEC128 / BLK128x128), one
 *                    tensor for every batch of a strided batch (stride 0; a grouped problem's
 *                    are per group), block scales with 8-bit operands and batch_count 1 (grouped problems: per
 *                    group), a block-scaled D from f16/bf16/fp8 operands, AMAX_D; grouped
 *                    problems with VEC128 or BLK128x128 scales plan the sm90 tiles their GPU
 *                    test has run (others only when force_kernel names them); the sm80
 *                    family: f32 per-tensor and per-row / per-column scales of I8 operands, one
 *                    tensor for every batch, k > 0; the
 *                    plan's message and describe JSON say which rule refused it). */
DGEMM_API dgemm_status_t dgemm_scaling_init(dgemm_scaling_t *s);

/* Execute-time extension DGEMM_EXT_SCALE_ARGS: the scale tensors, in the memory of the plan's
 * device (host memory for the CPU backend). Required by every execute of a plan made with a
 * scaling that has a tensor or AMAX_D; refused by other plans. */
typedef struct dgemm_scale_args_t {
    dgemm_ext_header_t header;   /* type DGEMM_EXT_SCALE_ARGS, struct_size = sizeof(dgemm_scale_args_t) */
    const void *a_scale;         /* read; required iff a_scale.mode != NONE and k > 0 */
    const void *b_scale;         /* read; required iff b_scale.mode != NONE and k > 0 */
    void *d_scale;               /* written; required iff d_scale.mode != NONE */
    float *amax_d;               /* one float, written; required iff DGEMM_SCALING_AMAX_D */
    uint64_t reserved[8];        /* must be zero */
} dgemm_scale_args_t;

/*! dgemm_scale_args_init() :
 *  header.type = DGEMM_EXT_SCALE_ARGS, header.struct_size set, every pointer NULL, reserved zero.
 *  @return SUCCESS; INVALID_ARGUMENT (a NULL).
 *
 *  dgemm_execute_ext of a scaled plan returns, besides its usual statuses, INVALID_ARGUMENT for a
 *  missing DGEMM_EXT_SCALE_ARGS, a bad header.struct_size or reserved word, a pointer the plan
 *  needs that is NULL (naming it, e.g. "scale_args->b_scale"), or one not aligned to its element
 *  size; nothing is then written (neither D, nor d_scale, nor amax_d). A pointer the plan does not
 *  use is ignored. dgemm_execute (1.0) of a scaled plan is INVALID_ARGUMENT (the args are missing). */
DGEMM_API dgemm_status_t dgemm_scale_args_init(dgemm_scale_args_t *a);

typedef enum dgemm_scale_tensor_t {
    DGEMM_SCALE_TENSOR_A = 0,
    DGEMM_SCALE_TENSOR_B = 1,
    DGEMM_SCALE_TENSOR_D = 2
} dgemm_scale_tensor_t;

/*! dgemm_plan_scale_shape() :
 *  The shape of one of a plan's scale tensors, as the plan resolved it, so that callers (and the
 *  bindings) can size and check their arrays.
 *  @param which     A, B or D.
 *  @param rows      receives the rows of one batch's tensor (outer index groups); may be NULL.
 *  @param cols      receives its columns (K blocks; D: column blocks of 128); may be NULL.
 *  @param ld        receives the resolved leading dimension; may be NULL.
 *  @param elements  receives the elements one call reads / writes from the base pointer, over
 *                   every batch (the last element's offset + 1); may be NULL.
 *  All four are 0 when the plan has no such tensor (mode NONE).
 *  @return SUCCESS; INVALID_ARGUMENT (NULL plan, which out of range). */
DGEMM_API dgemm_status_t dgemm_plan_scale_shape(dgemm_plan_t plan, dgemm_scale_tensor_t which, int64_t *rows,
                                                int64_t *cols, int64_t *ld, int64_t *elements);
/* DGEMM_1.1: grouped problems (mixture-of-experts layers).
 *
 * A grouped problem is G GEMMs that share n, k, the types, the storage order, op(A), op(B), the
 * leading dimensions and the epilogue's modes, and whose numbers of rows live in device memory:
 * the kernel reads them when it runs, so they may change between executes with no re-planning and
 * no host synchronization, and a CUDA graph captured once replays with new counts. Plan it with a
 * dgemm_grouped_t in the chain of dgemm_create_plan_ext; execute it with dgemm_execute_ext and a
 * dgemm_group_args_t that points to the per-group arrays.
 *
 * The groups are the problem's batches: problem->batch_count = G (>= 1), and group g's B (the
 * expert's weights, op(B) k x n) is at B + g * stride_b (stride_b = 0 shares one B). m is a
 * capacity, not a count, and m < 2^31 (the per-group arrays are int32); G x m x n must not
 * overflow int64, as for any batch.
 *
 * DGEMM_GROUP_CONTIGUOUS (prefill, training): the rows of all groups are concatenated.
 *   op(A) is m x k and C, D are m x n, one matrix each (stride_a, stride_c and stride_d must be 0).
 *   The G + 1 int32 `offsets` split its rows: group g owns rows [offsets[g], offsets[g + 1]) of
 *   op(A), C and D, with 0 <= offsets[0] <= offsets[1] <= ... <= offsets[G] <= m (an empty group
 *   is allowed). Rows of C and D outside [offsets[0], offsets[G]) are neither read nor written
 *   (A's rows there may be read, since they are inside A, but never change a result).
 *   m_alignment: a promise that every offset is a multiple of it (m must be one too); 1 promises
 *   nothing. With the row tile of a kernel (e.g. 128, as DeepSeek's layout pads each expert's rows
 *   to the block size) no tile straddles two groups, which the fast kernels need.
 * DGEMM_GROUP_MASKED (decode under CUDA graphs): every group has a slot of m rows.
 *   Group g's op(A) (m x k), C and D (m x n) are at A + g * stride_a, C + g * stride_c and
 *   D + g * stride_d, as in a strided batch. The G int32 `counts` say how many leading rows of each
 *   slot are valid, 0 <= counts[g] <= m; rows [counts[g], m) of group g's C and D are neither
 *   read nor written (its A rows there may be read but never change a result). m_alignment must
 *   be 1.
 *
 * Epilogue: applied per group, with one copy of every vector per group, packed one after another:
 *   PER_COLUMN bias / scale / zero point: G x n values (group g's at g * n);
 *   PER_TENSOR scale / zero point: G values (one per group);
 *   PER_ROW bias / scale / zero point: one value per row of D: m values indexed by the row
 *   (contiguous), G x m values (masked, group g's at g * m).
 * alpha and beta are shared by all groups.
 *
 * Input and output scaling (a dgemm_scaling_t in the same chain): the scale tensors follow the
 * operands, with the group as the batch (element (r, c) of group g at g * stride + the layout's
 * offset, "Scale tensor layout" above):
 *   B's scales: one tensor per expert at g * b_scale.stride (0 shares one);
 *   A's and D's scales: masked, one per slot at g * stride, as for any batch (D's strides must
 *   not overlap); contiguous, the outer index r is the row of the shared op(A) or D (a VEC128
 *   tensor has m rows, a BLK128x128 one ceil(m / 128), whichever group owns them), so the
 *   natural tensor is shared: a_scale.stride = 0 (a per-group PER_TENSOR scale of A is
 *   stride = 1: group g's at g) and d_scale.stride must be 0.
 * DeepSeek's m-grouped FP8 GEMMs are thus: e4m3 A with VEC128 scales (m x KB, MN_MAJOR, stride 0
 * contiguous / one tensor per slot masked), e4m3 B with BLK128x128 scales per expert
 * (b_scale.stride = ceil(n / 128) x KB), a bf16 D. The CPU backend runs every combination (the
 * reference); a GPU family that does not says so at plan time (NOT_SUPPORTED, with its reason).
 * Over contiguous groups the sm90 family starts a group's tiles at its first row, which only
 * m_alignment bounds, so it needs m_alignment a multiple of 4 (F32) / 16 (UE8M0) for VEC128
 * scales of A and of 8 for an MN-major 16-bit op(A) (op_a = T), since a TMA load must start on
 * 16 bytes, and of 128 for BLK128x128 scales of A, so that no tile straddles two blocks; masked
 * groups have no such rule.
 *
 * Bad per-group values. dgemm_execute_ext checks the arrays it can read: on a CPU context (host
 * memory) every value is checked and a bad one is INVALID_ARGUMENT naming the entry and its value,
 * with nothing written. A CUDA plan cannot read device memory without synchronizing, so it checks
 * only that the pointers are non-NULL and 4-byte aligned; the kernel then applies this rule, which
 * never writes outside D (nor outside the rows the arrays can name) and never reads outside
 * A, B and C:
 *   contiguous: bound[0] = clamp(offsets[0], 0, m) and bound[i] = clamp(offsets[i], bound[i - 1], m)
 *               for i = 1..G, each rounded down to a multiple of m_alignment; group g computes
 *               rows [bound[g], bound[g + 1]) (a decreasing offset gives an empty group);
 *   masked:     group g computes its first clamp(counts[g], 0, m) rows;
 * and the status word (when given) receives the DGEMM_GROUP_STATUS_* bits of every rule broken, or
 * 0 when the arrays were valid. */
typedef enum dgemm_group_layout_t {
    DGEMM_GROUP_CONTIGUOUS = 1, /* rows of all groups concatenated; G + 1 offsets */
    DGEMM_GROUP_MASKED = 2      /* one slot of m rows per group; G valid-row counts */
} dgemm_group_layout_t;

/* Bits of the status word (dgemm_group_args_t.status), each for the raw values of this execute: */
#define DGEMM_GROUP_STATUS_NEGATIVE     0x1u /* an offset or count < 0 */
#define DGEMM_GROUP_STATUS_OUT_OF_RANGE 0x2u /* an offset or count > m */
#define DGEMM_GROUP_STATUS_DECREASING   0x4u /* contiguous: offsets[i] < offsets[i - 1] */
#define DGEMM_GROUP_STATUS_UNALIGNED    0x8u /* contiguous: an offset not a multiple of m_alignment */

/* Plan time (type DGEMM_EXT_GROUPED). */
typedef struct dgemm_grouped_t {
    dgemm_ext_header_t header;   /* type DGEMM_EXT_GROUPED, struct_size; set by dgemm_grouped_init */
    dgemm_group_layout_t layout; /* DGEMM_GROUP_CONTIGUOUS or DGEMM_GROUP_MASKED */
    uint32_t reserved0;          /* must be zero */
    int64_t m_alignment;         /* contiguous: every offset (and m) is a multiple of it, >= 1; masked: 1 */
    int64_t expected_m;          /* a planning hint: the rows a group is expected to have on average
                                    (counts[g], or offsets[g + 1] - offsets[g]), as DeepSeek's masked
                                    GEMM takes `expected_m`; 0 = unknown (the plan is costed for full
                                    slots, masked, or m shared rows, contiguous; this word was
                                    reserved[0], so a caller that zeroed it gives none).
                                    0 <= expected_m <= m (masked), G * expected_m <= m (contiguous).
                                    Only the choice of kernel depends on it: any row counts the
                                    layout allows still compute correctly. */
    uint64_t reserved[5];        /* must be zero */
} dgemm_grouped_t;

/*! dgemm_grouped_init() :
 *  Sets *g to a contiguous grouping with m_alignment 1, next NULL, reserved zeroed, header set.
 *  @return SUCCESS; INVALID_ARGUMENT (g NULL). */
DGEMM_API dgemm_status_t dgemm_grouped_init(dgemm_grouped_t *g);

/* Execute time (type DGEMM_EXT_GROUP_ARGS); required by, and only accepted by, grouped plans.
 * The arrays are in the plan's device memory (host memory on a CPU context), read by the kernel
 * when it runs: they must stay valid and unchanged until the execute has completed on the stream. */
typedef struct dgemm_group_args_t {
    dgemm_ext_header_t header; /* type DGEMM_EXT_GROUP_ARGS, struct_size; set by dgemm_group_args_init */
    const int32_t *offsets;    /* contiguous: G + 1 row offsets; must be NULL for masked plans */
    const int32_t *counts;     /* masked: G valid-row counts; must be NULL for contiguous plans */
    uint32_t *status;          /* optional (NULL: none): written once by every execute that computes
                                  (m, n > 0), in stream order: the DGEMM_GROUP_STATUS_* bits of the
                                  rules the arrays broke, 0 when they were valid. Needs no reset
                                  between executes or graph replays. */
    uint64_t reserved[6];      /* must be zero */
} dgemm_group_args_t;

/*! dgemm_group_args_init() :
 *  Every pointer NULL, next NULL, reserved zeroed, header set.
 *  @return SUCCESS; INVALID_ARGUMENT (a NULL). */
DGEMM_API dgemm_status_t dgemm_group_args_init(dgemm_group_args_t *a);

/* dgemm_create_plan_ext with a dgemm_grouped_t also returns INVALID_ARGUMENT for: a bad layout, a
 * non-zero reserved field, m >= 2^31, m_alignment < 1 (or != 1 for masked, or not dividing m),
 * a non-zero stride_a, stride_c or stride_d (contiguous); and NOT_SUPPORTED when no kernel family of
 * the context's device runs the grouped problem, with its scaling if the chain also holds a
 * dgemm_scaling_t (the message names each family's reason; the CPU backend runs every grouped
 * problem and scaling).
 * dgemm_execute_ext on a grouped plan also returns INVALID_ARGUMENT for: no dgemm_group_args_t in
 * the chain, the array of the other layout given or this layout's missing, a pointer not aligned
 * to 4 bytes, and (CPU contexts) a value that breaks the rules above, naming it. */

/* ------------------------------------------------------------------------------------------ */
/* DGEMM_1.1: many independent GEMMs of arbitrary shapes in one call (as cublasGemmGroupedBatchedEx,
 * with the sizes and pointers on the host).
 *
 * dgemm_create_plan_many plans `count` problems, each with its own shape, types, layout and
 * epilogue, once: identical problems share one kernel (plans are cached per context), and the plan
 * needs the largest workspace of its problems. dgemm_execute_many then enqueues them in order on
 * one stream (on the CPU: computes them in order); like dgemm_execute it allocates nothing and
 * never synchronizes. Per-group row counts in device memory are the grouped problems' job (above);
 * this form suits a handful of differently shaped GEMMs known on the host. A plan made here works
 * with dgemm_destroy_plan, dgemm_plan_workspace_size and dgemm_plan_describe (JSON with one entry
 * per distinct problem); dgemm_execute and dgemm_execute_ext reject it, and dgemm_execute_many
 * rejects every other plan. */

/*! dgemm_create_plan_many() :
 *  @param count      number of problems, >= 1.
 *  @param problems   `count` problem descriptors (copied).
 *  @param epilogues  `count` epilogues (copied), or NULL for the identity epilogue everywhere.
 *  @param options    NULL for the defaults; applies to every problem.
 *  @param plan       receives the plan; untouched on failure.
 *  @return as dgemm_create_plan, for the first problem that fails (the message says which:
 *          "problems[3]: ..."); INVALID_ARGUMENT also for count < 1. */
DGEMM_API dgemm_status_t dgemm_create_plan_many(dgemm_context_t ctx, int64_t count,
                                                const dgemm_problem_t *problems,
                                                const dgemm_epilogue_t *epilogues,
                                                const dgemm_plan_options_t *options,
                                                dgemm_plan_t *plan);

/*! dgemm_execute_many() :
 *  Runs problem i with A[i], B[i], C[i], D[i] and args[i] (host arrays of `count` entries).
 *  @param C     NULL when no problem reads C; else an array whose entries are NULL where unused.
 *  @param args  NULL for every problem's defaults, or `count` dgemm_args_t.
 *  @return as dgemm_execute, for the first problem whose arguments are bad ("A[2] is NULL");
 *          INVALID_ARGUMENT also for a NULL array or a plan not made by dgemm_create_plan_many.
 *          Every problem's arguments are checked before anything is enqueued: on failure nothing
 *          is enqueued and no output is written. */
DGEMM_API dgemm_status_t dgemm_execute_many(dgemm_plan_t plan, const void *const *A,
                                            const void *const *B, const void *const *C,
                                            void *const *D, const dgemm_args_t *args,
                                            void *workspace, size_t workspace_size, void *stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DEEPGEMM_DEEPGEMM_H */
