/* dlopen_consumer.c - loads libdeepgemm.so.1 at run time, the way other language runtimes and
 * plugin hosts do, without linking against it: every entry point is looked up with
 * dlvsym(handle, name, "DGEMM_1.0"), which also proves the symbols carry that version node.
 * Only the header is used at build time (for types). Usage: dlopen_consumer [path-or-soname]. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "consumer_checks.h"

static void *handle;
static int missing;

static void *lookup(const char *name) {
    void *f = dlvsym(handle, name, "DGEMM_1.0");
    if (f == NULL) {
        fprintf(stderr, "dlvsym(%s, DGEMM_1.0): %s\n", name, dlerror());
        missing = 1;
    }
    return f;
}

/* Run by run_all.sh with the CUDA toolkit hidden from the loader: AUTO must fall back to the CPU,
 * an explicit CUDA device must be NO_DEVICE (not a crash), and no CUDA library may be mapped. */
static int check_no_gpu(const struct dgemm_api *api) {
    __typeof__(&dgemm_context_device) context_device = (__typeof__(context_device))lookup("dgemm_context_device");
    CHECK(context_device != NULL, "dgemm_context_device");
    dgemm_context_t ctx = NULL;
    dgemm_status_t st = api->context_create(DGEMM_DEVICE_AUTO, 0, &ctx);
    CHECK(st == DGEMM_STATUS_SUCCESS, "AUTO context: %s", api->last_error());
    dgemm_device_kind_t kind = DGEMM_DEVICE_AUTO;
    CHECK(context_device(ctx, &kind, NULL) == DGEMM_STATUS_SUCCESS && kind == DGEMM_DEVICE_CPU, "AUTO gave kind %d",
          (int)kind);
    CHECK(api->context_destroy(ctx) == DGEMM_STATUS_SUCCESS, "destroy");
    ctx = NULL;
    st = api->context_create(DGEMM_DEVICE_CUDA, 0, &ctx);
    CHECK(st == DGEMM_STATUS_NO_DEVICE && ctx == NULL, "CUDA context without a GPU: status %d", (int)st);
    printf("[dlopen] no GPU: AUTO -> CPU, CUDA -> %s (%s)\n", api->status_string(st), api->last_error());

    FILE *maps = fopen("/proc/self/maps", "r");
    CHECK(maps != NULL, "/proc/self/maps");
    char line[4096];
    int bad = 0;
    while (fgets(line, sizeof line, maps)) {
        if (strstr(line, "libcuda") || strstr(line, "libcudart") || strstr(line, "libnvrtc") ||
            strstr(line, "libcublas") || strstr(line, "/usr/local/cuda")) {
            fprintf(stderr, "CUDA library mapped: %s", line);
            bad = 1;
        }
    }
    fclose(maps);
    CHECK(!bad, "a CUDA library was loaded");
    return 0;
}

#define LOOKUP(field, name) api.field = (__typeof__(api.field))lookup(#name)

int main(int argc, char **argv) {
    const char *lib = argc > 1 ? argv[1] : "libdeepgemm.so.1";
    handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        fprintf(stderr, "dlopen(%s): %s\n", lib, dlerror());
        return 1;
    }
    struct dgemm_api api;
    LOOKUP(version, dgemm_version);
    LOOKUP(version_string, dgemm_version_string);
    LOOKUP(status_string, dgemm_status_string);
    LOOKUP(last_error, dgemm_last_error);
    LOOKUP(context_create, dgemm_context_create);
    LOOKUP(context_destroy, dgemm_context_destroy);
    LOOKUP(problem_init, dgemm_problem_init);
    LOOKUP(epilogue_init, dgemm_epilogue_init);
    LOOKUP(args_init, dgemm_args_init);
    LOOKUP(create_plan, dgemm_create_plan);
    LOOKUP(destroy_plan, dgemm_destroy_plan);
    LOOKUP(plan_workspace_size, dgemm_plan_workspace_size);
    LOOKUP(plan_describe, dgemm_plan_describe);
    LOOKUP(execute, dgemm_execute);
    /* Functions this consumer does not call must still be exported in DGEMM_1.0. */
    lookup("dgemm_context_device");
    lookup("dgemm_plan_options_init");
    if (missing) return 1;
    int rc = run_consumer_checks(&api, "dlopen");
    if (rc == 0 && getenv("DGEMM_EXPECT_NO_GPU") != NULL) rc = check_no_gpu(&api);
    if (dlclose(handle) != 0) {
        fprintf(stderr, "dlclose: %s\n", dlerror());
        return 1;
    }
    return rc;
}
