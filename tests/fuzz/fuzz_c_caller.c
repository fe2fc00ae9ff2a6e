/* Calls into the C API the way a C caller can and a C++ one cannot without undefined behaviour:
 * with any int where the prototype has an enum (in C an enum converts to and from int freely).
 * Used by fuzz_c_api_v11 for enum parameters the library must range-check. */
#include "deepgemm/deepgemm.h"

dgemm_status_t dgemm_fuzz_plan_scale_shape_raw(dgemm_plan_t plan, int which, int64_t *rows, int64_t *cols,
                                               int64_t *ld, int64_t *elements) {
    return dgemm_plan_scale_shape(plan, (dgemm_scale_tensor_t)which, rows, cols, ld, elements);
}
