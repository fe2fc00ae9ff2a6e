/* deepgemm.i - the one SWIG interface of DeepGEMM: generates the low-level Python module
 * (deepgemm.capi, wrapped by the idiomatic package in bindings/python/deepgemm) and the Go
 * package (bindings/go/internal/capi, wrapped by bindings/go). The declarations come from the
 * public header itself; this file only says how its C types cross into the target languages:
 *
 *  - every data pointer (operands, workspace, stream, bias/scale vectors, the describe buffer) is
 *    a plain address: a Python int (or None) and a Go uintptr. Operands may be device memory the
 *    binding cannot see into, and both wrappers pass addresses they got from NumPy, DLPack,
 *    __cuda_array_interface__ or C allocations;
 *  - output parameters (the created context or plan, sizes, the device) go through small typed
 *    cells made by %pointer_functions, which work the same in both languages;
 *  - Python: dgemm_create_plan and dgemm_execute release the GIL, so plans run concurrently.
 */
%module(package="deepgemm", threads="1") capi

/* Python: only the calls that do real work drop the GIL (planning may compile a kernel, execute
 * computes on the CPU backend); field accessors and small getters keep it. */
#if defined(SWIGPYTHON)
%nothread;
%thread dgemm_create_plan;
%thread dgemm_execute;
%thread dgemm_create_plan_ext;
%thread dgemm_execute_ext;
%thread dgemm_create_plan_many;
%thread dgemm_execute_many;
#endif
/* The plan options' arch_file/force_kernel setters copy the string (SWIG warns it is never freed:
 * a few bytes per options object, accepted). */
%warnfilter(451) dgemm_plan_options_t;

%{
#include "deepgemm/deepgemm.h"
%}

%include <stdint.i>
%include <cpointer.i>

/* ---- addresses -------------------------------------------------------------------------- */
#if defined(SWIGPYTHON)
%typemap(in) void *, const void * {
  if ($input == Py_None) {
    $1 = NULL;
  } else {
    $1 = ($1_ltype)PyLong_AsVoidPtr($input);
    if (PyErr_Occurred()) SWIG_exception_fail(SWIG_TypeError, "in '$symname', argument '$1_name' must be an int address or None");
  }
}
%typemap(typecheck, precedence=SWIG_TYPECHECK_POINTER) void *, const void * {
  $1 = ($input == Py_None || PyLong_Check($input)) ? 1 : 0;
}
%typemap(out) void *, const void * {
  $result = PyLong_FromVoidPtr((void *)$1);
}
/* Struct members are set through the same conversion. */
%typemap(memberin) const void * { $1 = $input; }
#endif
/* The describe buffer and the args' float/int32 vectors are addresses too. */
#if defined(SWIGPYTHON)
%apply void * { char *buffer };
%apply const void * { const float *, const int32_t * };
%apply void * { uint32_t *status };  /* dgemm_group_args_t.status */
#elif defined(SWIGGO)
/* Go's void * is already a uintptr; give these the same treatment. */
%typemap(gotype) char *buffer, const float *, const int32_t *, uint32_t *status "uintptr"
%typemap(in) char *buffer, const float *, const int32_t *, uint32_t *status %{ $1 = ($1_ltype)$input; %}
%typemap(out) const float *, const int32_t *, uint32_t *status %{ $result = ($1_ltype)$1; %}
%typemap(goin) char *buffer, const float *, const int32_t *, uint32_t *status ""
%typemap(freearg) char *buffer ""  /* the caller owns the buffer (Go frees char * inputs) */
%typemap(goout) const float *, const int32_t *, uint32_t *status ""
#endif

/* ---- output cells ----------------------------------------------------------------------- */
%pointer_functions(dgemm_context_t, context_cell);
%pointer_functions(dgemm_plan_t, plan_cell);
%pointer_functions(size_t, size_cell);
%pointer_functions(int, int_cell);
%pointer_functions(dgemm_device_kind_t, device_kind_cell);

/* ---- the API ---------------------------------------------------------------------------- */
#define DGEMM_API
%include "deepgemm/deepgemm.h"
