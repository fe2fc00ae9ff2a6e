"""The C API of libdeepgemm.so.1 (include/deepgemm/deepgemm.h) for Python, through ctypes.

ctypes rather than a compiled extension: the package then has no per-Python-version binary, so one
wheel serves every Python 3, and building it needs only the C++ library's own build. The price is
that the declarations below restate the header; tests/test_capi_layout.py compiles every struct's
field offsets and every constant against deepgemm.h and fails on any difference.

Names follow the header: functions return a status (int), output parameters are ctypes objects
passed by reference (``dgemm_context_t()``, ``ctypes.c_size_t()``), structs are
``ctypes.Structure`` classes with the header's field names, and data pointers are plain integer
addresses. The three string-returning functions return ``str``. ctypes releases the GIL for every
call, so plans can be created and executed from several threads at once.

Where the library is found, first hit wins:
  1. $DEEPGEMM_LIBRARY (a path to the shared library);
  2. libdeepgemm.so.1 next to this file (the wheel, and the build tree's package);
  3. the library directory of a ``cmake --install`` prefix, as recorded at install time (_location.py);
  4. ``libdeepgemm.so.1`` through the dynamic loader (a system install, LD_LIBRARY_PATH).
"""
import ctypes
import os

# ---- constants (deepgemm.h) -----------------------------------------------------------------
DGEMM_VERSION_MAJOR = 1
DGEMM_VERSION_MINOR = 1
DGEMM_VERSION_PATCH = 0
DGEMM_VERSION_NUMBER = DGEMM_VERSION_MAJOR * 10000 + DGEMM_VERSION_MINOR * 100 + DGEMM_VERSION_PATCH

DGEMM_STATUS_SUCCESS = 0
DGEMM_STATUS_INVALID_ARGUMENT = 1
DGEMM_STATUS_NOT_SUPPORTED = 2
DGEMM_STATUS_OUT_OF_MEMORY = 3
DGEMM_STATUS_INSUFFICIENT_WORKSPACE = 4
DGEMM_STATUS_CONTEXT_MISMATCH = 5
DGEMM_STATUS_NO_DEVICE = 6
DGEMM_STATUS_DEVICE_ERROR = 7
DGEMM_STATUS_COMPILE_ERROR = 8
DGEMM_STATUS_ARCH_FILE_ERROR = 9
DGEMM_STATUS_INTERNAL_ERROR = 10

DGEMM_DTYPE_F32 = 0
DGEMM_DTYPE_F16 = 1
DGEMM_DTYPE_BF16 = 2
DGEMM_DTYPE_F8_E4M3 = 3
DGEMM_DTYPE_F8_E5M2 = 4
DGEMM_DTYPE_I8 = 5
DGEMM_DTYPE_I32 = 6

DGEMM_OP_N = 0
DGEMM_OP_T = 1

DGEMM_ORDER_ROW_MAJOR = 0
DGEMM_ORDER_COL_MAJOR = 1

DGEMM_DEVICE_AUTO = 0
DGEMM_DEVICE_CUDA = 1
DGEMM_DEVICE_CPU = 2

DGEMM_ACT_NONE = 0
DGEMM_ACT_RELU = 1
DGEMM_ACT_GELU_TANH = 2
DGEMM_ACT_GELU_ERF = 3
DGEMM_ACT_SILU = 4

DGEMM_VECTOR_NONE = 0
DGEMM_VECTOR_PER_TENSOR = 1
DGEMM_VECTOR_PER_ROW = 2
DGEMM_VECTOR_PER_COLUMN = 3

DGEMM_EPILOGUE_SATURATE = 0x1
DGEMM_EPILOGUE_ZERO_POINT = 0x2

DGEMM_PLAN_AUTOTUNE = 0x1

DGEMM_SCALARS_FROM_PLAN = 0
DGEMM_SCALARS_HOST = 1
DGEMM_SCALARS_DEVICE = 2

# DGEMM_1.1: extension chains (dgemm_create_plan_ext / dgemm_execute_ext), input scaling and
# grouped problems
DGEMM_VERSION_HAS_EXT = 1

DGEMM_EXT_SCALING = 1
DGEMM_EXT_GROUPED = 2
DGEMM_EXT_SCALE_ARGS = 3
DGEMM_EXT_GROUP_ARGS = 4

DGEMM_SCALE_NONE = 0
DGEMM_SCALE_PER_TENSOR = 1
DGEMM_SCALE_OUTER_VEC = 2
DGEMM_SCALE_VEC128 = 3
DGEMM_SCALE_BLK128x128 = 4

DGEMM_SCALE_TYPE_F32 = 0
DGEMM_SCALE_TYPE_UE8M0 = 1

DGEMM_SCALE_MN_MAJOR = 0
DGEMM_SCALE_K_MAJOR = 1

DGEMM_SCALING_AMAX_D = 0x1

DGEMM_SCALE_TENSOR_A = 0
DGEMM_SCALE_TENSOR_B = 1
DGEMM_SCALE_TENSOR_D = 2

DGEMM_GROUP_CONTIGUOUS = 1
DGEMM_GROUP_MASKED = 2

DGEMM_GROUP_STATUS_NEGATIVE = 0x1
DGEMM_GROUP_STATUS_OUT_OF_RANGE = 0x2
DGEMM_GROUP_STATUS_DECREASING = 0x4
DGEMM_GROUP_STATUS_UNALIGNED = 0x8

# ---- types ----------------------------------------------------------------------------------
_enum = ctypes.c_int  # every enum of the header is an int-sized C enum
dgemm_status_t = _enum
dgemm_dtype_t = _enum
dgemm_op_t = _enum
dgemm_order_t = _enum
dgemm_device_kind_t = _enum
dgemm_activation_t = _enum
dgemm_vector_mode_t = _enum
dgemm_scalar_mode_t = _enum
dgemm_ext_type_t = _enum
dgemm_scale_mode_t = _enum
dgemm_scale_type_t = _enum
dgemm_scale_layout_t = _enum
dgemm_scale_tensor_t = _enum
dgemm_group_layout_t = _enum
dgemm_context_t = ctypes.c_void_p  # opaque handles
dgemm_plan_t = ctypes.c_void_p


class _Struct(ctypes.Structure):
    """A public struct: readable repr, and a fresh value set up by the library's *_init."""

    def __repr__(self):
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name, _ in self._fields_
                           if not name.startswith("reserved") and name != "struct_size")
        return f"{type(self).__name__}({fields})"


class dgemm_problem_t(_Struct):
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("reserved0", ctypes.c_uint32),
        ("m", ctypes.c_int64), ("n", ctypes.c_int64), ("k", ctypes.c_int64),
        ("a_type", dgemm_dtype_t), ("b_type", dgemm_dtype_t), ("c_type", dgemm_dtype_t), ("d_type", dgemm_dtype_t),
        ("compute_type", dgemm_dtype_t),
        ("op_a", dgemm_op_t), ("op_b", dgemm_op_t),
        ("order", dgemm_order_t),
        ("lda", ctypes.c_int64), ("ldb", ctypes.c_int64), ("ldc", ctypes.c_int64), ("ldd", ctypes.c_int64),
        ("batch_count", ctypes.c_int64),
        ("stride_a", ctypes.c_int64), ("stride_b", ctypes.c_int64), ("stride_c", ctypes.c_int64),
        ("stride_d", ctypes.c_int64),
        ("reserved", ctypes.c_uint64 * 8),
    ]


class dgemm_epilogue_t(_Struct):
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("flags", ctypes.c_uint32),
        ("alpha", ctypes.c_float), ("beta", ctypes.c_float),
        ("bias_mode", dgemm_vector_mode_t), ("bias_type", dgemm_dtype_t),
        ("activation", dgemm_activation_t),
        ("scale_mode", dgemm_vector_mode_t),
        ("reserved", ctypes.c_uint64 * 8),
    ]


class dgemm_plan_options_t(_Struct):
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("flags", ctypes.c_uint32),
        ("arch_file", ctypes.c_char_p),     # ctypes keeps the assigned bytes alive with the struct
        ("force_kernel", ctypes.c_char_p),
        ("reserved", ctypes.c_uint64 * 8),
    ]


class dgemm_args_t(_Struct):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("scalar_mode", dgemm_scalar_mode_t),
        ("alpha", ctypes.c_float), ("beta", ctypes.c_float),
        ("alpha_ptr", ctypes.c_void_p), ("beta_ptr", ctypes.c_void_p),
        ("bias", ctypes.c_void_p),
        ("scale", ctypes.c_void_p),
        ("zero_point", ctypes.c_void_p),
        ("reserved", ctypes.c_uint64 * 8),
    ]


# DGEMM_1.1: extension structs start with a dgemm_ext_header_t; their *_init sets type and size.
class dgemm_ext_header_t(_Struct):
    _fields_ = [
        ("type", ctypes.c_uint32), ("struct_size", ctypes.c_uint32),
        ("next", ctypes.c_void_p),
    ]


class dgemm_scale_desc_t(_Struct):
    _fields_ = [
        ("mode", dgemm_scale_mode_t), ("type", dgemm_scale_type_t), ("layout", dgemm_scale_layout_t),
        ("reserved0", ctypes.c_uint32),
        ("ld", ctypes.c_int64), ("stride", ctypes.c_int64),
    ]


class dgemm_scaling_t(_Struct):
    _fields_ = [
        ("header", dgemm_ext_header_t),
        ("a_scale", dgemm_scale_desc_t), ("b_scale", dgemm_scale_desc_t), ("d_scale", dgemm_scale_desc_t),
        ("flags", ctypes.c_uint32), ("reserved0", ctypes.c_uint32),
        ("reserved", ctypes.c_uint64 * 8),
    ]


class dgemm_scale_args_t(_Struct):
    _fields_ = [
        ("header", dgemm_ext_header_t),
        ("a_scale", ctypes.c_void_p), ("b_scale", ctypes.c_void_p), ("d_scale", ctypes.c_void_p),
        ("amax_d", ctypes.c_void_p),
        ("reserved", ctypes.c_uint64 * 8),
    ]


class dgemm_grouped_t(_Struct):
    _fields_ = [
        ("header", dgemm_ext_header_t),
        ("layout", dgemm_group_layout_t), ("reserved0", ctypes.c_uint32),
        ("m_alignment", ctypes.c_int64),
        ("expected_m", ctypes.c_int64),
        ("reserved", ctypes.c_uint64 * 5),
    ]


class dgemm_group_args_t(_Struct):
    _fields_ = [
        ("header", dgemm_ext_header_t),
        ("offsets", ctypes.c_void_p), ("counts", ctypes.c_void_p), ("status", ctypes.c_void_p),
        ("reserved", ctypes.c_uint64 * 6),
    ]


# ---- loading --------------------------------------------------------------------------------
SONAME = "libdeepgemm.so.1"


def _candidates():
    here = os.path.dirname(os.path.abspath(__file__))
    env = os.environ.get("DEEPGEMM_LIBRARY")
    if env:
        yield env
    yield os.path.join(here, SONAME)
    try:
        from . import _location  # written by `cmake --install`: the prefix's library directory

        yield os.path.normpath(os.path.join(here, _location.LIBRARY_DIR, SONAME))
    except ImportError:
        pass
    yield SONAME


def _load():
    tried = []
    for path in _candidates():
        if path != SONAME and not os.path.exists(path):
            tried.append(f"{path} (absent)")
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append(f"{path} ({e})")
        if path == os.environ.get("DEEPGEMM_LIBRARY"):
            break  # an explicit choice that fails is not silently replaced by another library
    raise ImportError("deepgemm: cannot load libdeepgemm.so.1; tried " + "; ".join(tried) +
                      ". Install the package with `pip install .`, or point DEEPGEMM_LIBRARY at the library.")


_lib, LIBRARY_PATH = _load()


def _declare(name, restype, *argtypes):
    fn = getattr(_lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


_P = ctypes.POINTER
dgemm_version = _declare("dgemm_version", ctypes.c_uint)
_version_string = _declare("dgemm_version_string", ctypes.c_char_p)
_status_string = _declare("dgemm_status_string", ctypes.c_char_p, dgemm_status_t)
_last_error = _declare("dgemm_last_error", ctypes.c_char_p)
dgemm_context_create = _declare("dgemm_context_create", dgemm_status_t, dgemm_device_kind_t, ctypes.c_int,
                                _P(dgemm_context_t))
dgemm_context_destroy = _declare("dgemm_context_destroy", dgemm_status_t, dgemm_context_t)
dgemm_context_device = _declare("dgemm_context_device", dgemm_status_t, dgemm_context_t, _P(dgemm_device_kind_t),
                                _P(ctypes.c_int))
dgemm_problem_init = _declare("dgemm_problem_init", dgemm_status_t, _P(dgemm_problem_t))
dgemm_epilogue_init = _declare("dgemm_epilogue_init", dgemm_status_t, _P(dgemm_epilogue_t))
dgemm_plan_options_init = _declare("dgemm_plan_options_init", dgemm_status_t, _P(dgemm_plan_options_t))
dgemm_create_plan = _declare("dgemm_create_plan", dgemm_status_t, dgemm_context_t, _P(dgemm_problem_t),
                             _P(dgemm_epilogue_t), _P(dgemm_plan_options_t), _P(dgemm_plan_t))
dgemm_destroy_plan = _declare("dgemm_destroy_plan", dgemm_status_t, dgemm_plan_t)
dgemm_plan_workspace_size = _declare("dgemm_plan_workspace_size", dgemm_status_t, dgemm_plan_t, _P(ctypes.c_size_t))
dgemm_plan_describe = _declare("dgemm_plan_describe", dgemm_status_t, dgemm_plan_t, ctypes.c_void_p, ctypes.c_size_t,
                               _P(ctypes.c_size_t))
dgemm_args_init = _declare("dgemm_args_init", dgemm_status_t, _P(dgemm_args_t))
dgemm_execute = _declare("dgemm_execute", dgemm_status_t, dgemm_plan_t, ctypes.c_void_p, ctypes.c_void_p,
                         ctypes.c_void_p, ctypes.c_void_p, _P(dgemm_args_t), ctypes.c_void_p, ctypes.c_size_t,
                         ctypes.c_void_p)

# DGEMM_1.1 (``ext`` is the first extension struct of a chain: ctypes.byref or addressof, or None)
dgemm_create_plan_ext = _declare("dgemm_create_plan_ext", dgemm_status_t, dgemm_context_t, _P(dgemm_problem_t),
                                 _P(dgemm_epilogue_t), _P(dgemm_plan_options_t), ctypes.c_void_p, _P(dgemm_plan_t))
dgemm_execute_ext = _declare("dgemm_execute_ext", dgemm_status_t, dgemm_plan_t, ctypes.c_void_p, ctypes.c_void_p,
                             ctypes.c_void_p, ctypes.c_void_p, _P(dgemm_args_t), ctypes.c_void_p, ctypes.c_void_p,
                             ctypes.c_size_t, ctypes.c_void_p)
dgemm_scaling_init = _declare("dgemm_scaling_init", dgemm_status_t, _P(dgemm_scaling_t))
dgemm_scale_args_init = _declare("dgemm_scale_args_init", dgemm_status_t, _P(dgemm_scale_args_t))
dgemm_plan_scale_shape = _declare("dgemm_plan_scale_shape", dgemm_status_t, dgemm_plan_t, dgemm_scale_tensor_t,
                                  _P(ctypes.c_int64), _P(ctypes.c_int64), _P(ctypes.c_int64), _P(ctypes.c_int64))
dgemm_grouped_init = _declare("dgemm_grouped_init", dgemm_status_t, _P(dgemm_grouped_t))
dgemm_group_args_init = _declare("dgemm_group_args_init", dgemm_status_t, _P(dgemm_group_args_t))
dgemm_create_plan_many = _declare("dgemm_create_plan_many", dgemm_status_t, dgemm_context_t, ctypes.c_int64,
                                  _P(dgemm_problem_t), _P(dgemm_epilogue_t), _P(dgemm_plan_options_t),
                                  _P(dgemm_plan_t))
dgemm_execute_many = _declare("dgemm_execute_many", dgemm_status_t, dgemm_plan_t, _P(ctypes.c_void_p),
                              _P(ctypes.c_void_p), _P(ctypes.c_void_p), _P(ctypes.c_void_p), _P(dgemm_args_t),
                              ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)


def dgemm_version_string() -> str:
    return _version_string().decode()


def dgemm_status_string(status: int) -> str:
    return _status_string(status).decode()


def dgemm_last_error() -> str:
    return _last_error().decode(errors="replace")


# A library of another major version, or older than these declarations, is refused at import.
if dgemm_version() // 10000 != DGEMM_VERSION_MAJOR or dgemm_version() < DGEMM_VERSION_NUMBER:
    raise ImportError(f"deepgemm: {LIBRARY_PATH} is version {dgemm_version_string()}; this package needs "
                      f"{DGEMM_VERSION_MAJOR}.x, at least {DGEMM_VERSION_MAJOR}.{DGEMM_VERSION_MINOR}")
