/* consumer_checks.h - the checks every packaging consumer runs (pkg-config, CMake find_package and
 * dlopen builds), written once against a table of entry points so the dlopen consumer can fill
 * the table with dlvsym() while the linked consumers fill it with the functions themselves.
 *
 * What it checks: header and library versions agree; status strings and thread-local messages
 * work; a bad argument gives INVALID_ARGUMENT naming the argument; a CPU-backend GEMM with
 * per-column bias and GELU matches a double-precision reference on random inputs, with the
 * output poisoned beforehand and a guard zone after D left untouched. */
#ifndef DGEMM_CONSUMER_CHECKS_H
#define DGEMM_CONSUMER_CHECKS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <deepgemm/deepgemm.h>

struct dgemm_api {
    __typeof__(&dgemm_version) version;
    __typeof__(&dgemm_version_string) version_string;
    __typeof__(&dgemm_status_string) status_string;
    __typeof__(&dgemm_last_error) last_error;
    __typeof__(&dgemm_context_create) context_create;
    __typeof__(&dgemm_context_destroy) context_destroy;
    __typeof__(&dgemm_problem_init) problem_init;
    __typeof__(&dgemm_epilogue_init) epilogue_init;
    __typeof__(&dgemm_args_init) args_init;
    __typeof__(&dgemm_create_plan) create_plan;
    __typeof__(&dgemm_destroy_plan) destroy_plan;
    __typeof__(&dgemm_plan_workspace_size) plan_workspace_size;
    __typeof__(&dgemm_plan_describe) plan_describe;
    __typeof__(&dgemm_execute) execute;
};

#define CHECK(cond, ...)                                              \
    do {                                                              \
        if (!(cond)) {                                                \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                             \
            fprintf(stderr, "\n");                                    \
            return 1;                                                 \
        }                                                             \
    } while (0)

/* Uniform in [-1, 1), never zero-filled, different on every run unless DGEMM_TEST_SEED is set. */
static unsigned long long consumer_rng_state;
static float consumer_random(void) {
    consumer_rng_state = consumer_rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (float)((double)(consumer_rng_state >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static int run_consumer_checks(const struct dgemm_api *api, const char *who) {
    const char *seed_env = getenv("DGEMM_TEST_SEED");
    consumer_rng_state = seed_env ? strtoull(seed_env, NULL, 10) : (unsigned long long)time(NULL);
    printf("[%s] seed %llu\n", who, consumer_rng_state);

    /* Version: the header we compiled against and the library we loaded must agree. */
    CHECK(api->version() == DGEMM_VERSION_NUMBER, "library %u, header %d", api->version(), DGEMM_VERSION_NUMBER);
    char expect_version[32];
    snprintf(expect_version, sizeof expect_version, "%d.%d.%d", DGEMM_VERSION_MAJOR, DGEMM_VERSION_MINOR,
             DGEMM_VERSION_PATCH);
    CHECK(strcmp(api->version_string(), expect_version) == 0, "version string %s", api->version_string());
    CHECK(strcmp(api->status_string(DGEMM_STATUS_INVALID_ARGUMENT), "DGEMM_STATUS_INVALID_ARGUMENT") == 0, "%s",
          api->status_string(DGEMM_STATUS_INVALID_ARGUMENT));

    /* A bad argument is reported, named, and does not touch the output handle. */
    dgemm_context_t ctx = (dgemm_context_t)(void *)0x1;
    dgemm_status_t st = api->context_create((dgemm_device_kind_t)42, 0, &ctx);
    CHECK(st == DGEMM_STATUS_INVALID_ARGUMENT, "status %d", (int)st);
    CHECK(ctx == (dgemm_context_t)(void *)0x1, "ctx written on failure");
    CHECK(strstr(api->last_error(), "kind") != NULL, "message '%s' does not name the argument", api->last_error());

    st = api->context_create(DGEMM_DEVICE_CPU, 0, &ctx);
    CHECK(st == DGEMM_STATUS_SUCCESS, "context_create: %s", api->last_error());

    /* D = gelu_erf(alpha * A @ B^T + bias) with A row-major m x k and B stored n x k. */
    const int64_t m = 37, n = 29, k = 70;
    const float alpha = 0.75f;
    dgemm_problem_t prob;
    CHECK(api->problem_init(&prob) == DGEMM_STATUS_SUCCESS, "problem_init");
    prob.m = m;
    prob.n = n;
    prob.k = k;
    prob.a_type = prob.b_type = prob.c_type = prob.d_type = DGEMM_DTYPE_F32;
    prob.op_b = DGEMM_OP_T;
    dgemm_epilogue_t epi;
    CHECK(api->epilogue_init(&epi) == DGEMM_STATUS_SUCCESS, "epilogue_init");
    epi.alpha = alpha;
    epi.bias_mode = DGEMM_VECTOR_PER_COLUMN;
    epi.bias_type = DGEMM_DTYPE_F32;
    epi.activation = DGEMM_ACT_GELU_ERF;

    /* An lda smaller than a row must be rejected with a message naming lda. */
    dgemm_plan_t plan = NULL;
    prob.lda = k - 1;
    st = api->create_plan(ctx, &prob, &epi, NULL, &plan);
    CHECK(st == DGEMM_STATUS_INVALID_ARGUMENT && plan == NULL, "status %d", (int)st);
    CHECK(strstr(api->last_error(), "lda") != NULL, "message '%s'", api->last_error());
    prob.lda = 0;

    st = api->create_plan(ctx, &prob, &epi, NULL, &plan);
    CHECK(st == DGEMM_STATUS_SUCCESS, "create_plan: %s", api->last_error());
    size_t ws = 1;
    CHECK(api->plan_workspace_size(plan, &ws) == DGEMM_STATUS_SUCCESS, "workspace_size");
    size_t need = 0;
    CHECK(api->plan_describe(plan, NULL, 0, &need) == DGEMM_STATUS_SUCCESS && need > 1, "describe size");
    char *desc = (char *)malloc(need);
    CHECK(api->plan_describe(plan, desc, need, NULL) == DGEMM_STATUS_SUCCESS && desc[0] == '{', "describe");
    printf("[%s] plan: %s\n", who, desc);
    free(desc);

    const int64_t guard = 16;
    float *a = (float *)malloc(sizeof(float) * m * k);
    float *b = (float *)malloc(sizeof(float) * n * k);
    float *bias = (float *)malloc(sizeof(float) * n);
    float *d = (float *)malloc(sizeof(float) * (m * n + guard));
    void *work = ws ? malloc(ws) : NULL;
    for (int64_t i = 0; i < m * k; ++i) a[i] = consumer_random();
    for (int64_t i = 0; i < n * k; ++i) b[i] = consumer_random();
    for (int64_t i = 0; i < n; ++i) bias[i] = consumer_random();
    for (int64_t i = 0; i < m * n + guard; ++i) d[i] = NAN; /* poison: every element must be written */

    dgemm_args_t args;
    CHECK(api->args_init(&args) == DGEMM_STATUS_SUCCESS, "args_init");
    args.bias = bias;
    st = api->execute(plan, a, b, NULL, d, &args, work, ws, NULL);
    CHECK(st == DGEMM_STATUS_SUCCESS, "execute: %s: %s", api->status_string(st), api->last_error());

    double err2 = 0, ref2 = 0;
    for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
            double acc = 0;
            for (int64_t p = 0; p < k; ++p) acc += (double)a[i * k + p] * (double)b[j * k + p];
            double x = alpha * acc + bias[j];
            double ref = 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
            double got = d[i * n + j];
            CHECK(got == got, "D[%lld,%lld] not written (NaN)", (long long)i, (long long)j);
            err2 += (got - ref) * (got - ref);
            ref2 += ref * ref;
        }
    }
    for (int64_t i = m * n; i < m * n + guard; ++i) CHECK(d[i] != d[i], "guard element %lld written", (long long)i);
    double rel = sqrt(err2 / ref2);
    printf("[%s] %lldx%lldx%lld f32 bias+gelu: relative Frobenius error %.3g\n", who, (long long)m, (long long)n,
           (long long)k, rel);
    CHECK(rel < 1e-5, "relative error %g", rel);

    /* A missing bias is an error and leaves D untouched. */
    for (int64_t i = 0; i < m * n; ++i) d[i] = NAN;
    st = api->execute(plan, a, b, NULL, d, NULL, work, ws, NULL);
    CHECK(st == DGEMM_STATUS_INVALID_ARGUMENT, "execute without bias: %d", (int)st);
    for (int64_t i = 0; i < m * n; ++i) CHECK(d[i] != d[i], "D[%lld] written by a failing call", (long long)i);

    free(a);
    free(b);
    free(bias);
    free(d);
    free(work);
    CHECK(api->destroy_plan(plan) == DGEMM_STATUS_SUCCESS, "destroy_plan");
    CHECK(api->context_destroy(ctx) == DGEMM_STATUS_SUCCESS, "context_destroy: %s", api->last_error());
    CHECK(api->destroy_plan(NULL) == DGEMM_STATUS_SUCCESS && api->context_destroy(NULL) == DGEMM_STATUS_SUCCESS,
          "destroy(NULL)");
    printf("[%s] OK (libdeepgemm %s)\n", who, api->version_string());
    return 0;
}

#endif
