/* consumer.c - a program linked against an installed libdeepgemm the ordinary way; built by the
 * pkg-config Makefile and by the CMake find_package(DeepGEMM) project in this folder. */
#include "consumer_checks.h"

int main(void) {
    const struct dgemm_api api = {
        dgemm_version,       dgemm_version_string, dgemm_status_string,       dgemm_last_error,
        dgemm_context_create, dgemm_context_destroy, dgemm_problem_init,      dgemm_epilogue_init,
        dgemm_args_init,     dgemm_create_plan,    dgemm_destroy_plan,        dgemm_plan_workspace_size,
        dgemm_plan_describe, dgemm_execute,
    };
    return run_consumer_checks(&api, CONSUMER_NAME);
}
