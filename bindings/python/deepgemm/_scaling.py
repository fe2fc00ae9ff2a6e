"""DGEMM_1.1 scaling in Python: input scales of A and B (per tensor, per row / column, 1 x 128 and
128 x 128 blocks; float32 or UE8M0), the block-scaled FP8 output and the amax of D (deepgemm.h,
"DGEMM_1.1: input scaling"). Descriptions (:class:`Scale`) become the C structs here; arrays are
checked against the plan's scale tensors, or their modes inferred from their shapes (matmul).
"""
import ctypes
from typing import Any, NamedTuple, Optional

from . import capi
from ._errors import Error, argument_error, check as _check, dtype_error
from ._tensors import View, as_view, matrix_layout

MODES = {
    "per_tensor": capi.DGEMM_SCALE_PER_TENSOR,
    "outer_vec": capi.DGEMM_SCALE_OUTER_VEC,  # per row of op(A) (token) / per column of op(B) (channel)
    "vec128": capi.DGEMM_SCALE_VEC128,  # 1 x 128 along K
    "blk128x128": capi.DGEMM_SCALE_BLK128x128,
}
TYPES = {"float32": capi.DGEMM_SCALE_TYPE_F32, "ue8m0": capi.DGEMM_SCALE_TYPE_UE8M0}
LAYOUTS = {"mn": capi.DGEMM_SCALE_MN_MAJOR, "k": capi.DGEMM_SCALE_K_MAJOR}
# The array element types each scale type is given as (UE8M0: raw exponent bytes, or the named
# type of ml_dtypes / torch).
ARRAY_TYPES = {"float32": ("float32",), "ue8m0": ("uint8", "float8_e8m0fnu")}


class Scale(NamedTuple):
    """One scale tensor's plan-time description (dgemm_scale_desc_t).

    ``mode``: "per_tensor", "outer_vec", "vec128" or "blk128x128" (D's scales: "vec128");
    ``dtype``: "float32" or "ue8m0"; ``layout``: "mn" (the M / N index contiguous, what the GPU
    reads fastest) or "k" (the K blocks contiguous: a C-contiguous (rows, K blocks) array);
    ``ld``: leading dimension in elements (0 = packed); ``stride``: between batches (0 = shared).
    """
    mode: str
    dtype: str = "float32"
    layout: str = "mn"
    ld: int = 0
    stride: int = 0


def as_scale(x: Any, name: str, default_mode: Optional[str] = None) -> Optional[Scale]:
    """A Scale from a Scale, a mode name, or (for D) a dtype name."""
    if x is None or isinstance(x, Scale):
        return x
    if isinstance(x, str) and x in MODES:
        return Scale(x)
    if isinstance(x, str) and x in TYPES and default_mode:
        return Scale(default_mode, x)
    raise argument_error(f"{name} {x!r}: expected a deepgemm.Scale or one of {list(MODES)}")


def _set_desc(desc, s: Scale, name):
    for field, table in (("mode", MODES), ("dtype", TYPES), ("layout", LAYOUTS)):
        if getattr(s, field) not in table:
            raise argument_error(f"{name}.{field} {getattr(s, field)!r}: expected one of {list(table)}")
    desc.mode, desc.type, desc.layout = MODES[s.mode], TYPES[s.dtype], LAYOUTS[s.layout]
    desc.ld, desc.stride = int(s.ld), int(s.stride)


def make_scaling(a_scale: Optional[Scale], b_scale: Optional[Scale], d_scale: Optional[Scale],
                 amax: bool) -> Optional[capi.dgemm_scaling_t]:
    """The dgemm_scaling_t for a plan, or None when it has no scaling."""
    if a_scale is None and b_scale is None and d_scale is None and not amax:
        return None
    s = capi.dgemm_scaling_t()
    _check(capi.dgemm_scaling_init(ctypes.byref(s)))
    for name, value in (("a_scale", a_scale), ("b_scale", b_scale), ("d_scale", d_scale)):
        if value is not None:
            _set_desc(getattr(s, name), value, name)
    s.flags = capi.DGEMM_SCALING_AMAX_D if amax else 0
    return s


class TensorInfo(NamedTuple):
    """A plan's scale tensor as the library resolved it (dgemm_plan_scale_shape)."""
    rows: int
    cols: int
    ld: int
    elements: int
    scale: Scale


def plan_tensor_info(handle: int, which: int, scale: Scale) -> TensorInfo:
    cells = [ctypes.c_int64() for _ in range(4)]
    _check(capi.dgemm_plan_scale_shape(handle, which, *(ctypes.byref(c) for c in cells)))
    return TensorInfo(*(c.value for c in cells), scale)


def _count(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def check_tensor(name: str, v: View, info: TensorInfo, batch: int) -> Optional[Error]:
    """Checks a scale array against the plan's tensor: its element type, and either the
    (rows, cols) matrix (or (batch, rows, cols)) with the layout's strides, or a flat contiguous
    array of exactly the elements the plan addresses. Returns the error, or None when it fits."""
    s = info.scale
    if v.dtype not in ARRAY_TYPES[s.dtype]:
        return dtype_error(f"{name} has dtype {v.dtype}, the plan's {s.dtype} scales are "
                           f"{' or '.join(ARRAY_TYPES[s.dtype])}")
    want = (1, info.ld) if s.layout == "mn" else (info.ld, 1)
    shape, strides = tuple(v.shape), tuple(v.strides)
    flat = len(shape) <= 1 and _count(shape) == info.elements and (_count(shape) <= 1 or strides[0] == 1)
    if flat:
        return None
    batched = batch > 1 and s.stride != 0
    if batched:
        ok = len(shape) == 3 and shape[0] == batch and strides[0] == s.stride
        shape, strides = shape[1:], strides[1:]
    else:
        ok = len(shape) == 2 or (len(shape) == 3 and shape[0] == 1)
        shape, strides = shape[-2:], strides[-2:]
    ok = ok and shape == (info.rows, info.cols) and all(e == 1 or st == w for e, st, w in zip(shape, strides, want))
    if ok:
        return None
    lead = f"({batch}, " if batched else "("
    return argument_error(f"{name} has shape {tuple(v.shape)} and strides {tuple(v.strides)} (elements); the plan's "
                          f"{s.mode} {s.layout}-major scales are {lead}{info.rows}, {info.cols}) with strides {want}"
                          + (f" and batch stride {s.stride}" if batched else "")
                          + f", or {info.elements} contiguous elements")


def infer(v: View, outer: int, k: int, name: str, mode: Optional[str] = None, batch: int = 1) -> Scale:
    """The Scale a scale array asks for in matmul, from its shape (and strides): for A (outer = m)
    one element per tensor, (m,) or (m, 1) per row, (m, ceil(k/128)) 1 x 128,
    (ceil(m/128), ceil(k/128)) 128 x 128; for B (outer = n) the same with n, and (1, n) per column.
    A leading batch dimension makes one tensor per batch. ``mode`` overrides the inferred mode."""
    kb, ob = -(-k // 128), -(-outer // 128)
    dtype = "float32" if v.dtype == "float32" else "ue8m0" if v.dtype in ARRAY_TYPES["ue8m0"] else None
    if dtype is None:
        raise dtype_error(f"{name} has dtype {v.dtype}: scales are float32, or uint8 / float8_e8m0fnu exponents "
                          "(UE8M0)")
    shape, strides, stride = tuple(v.shape), tuple(v.strides), 0
    if len(shape) == 3:
        if shape[0] not in (1, batch):
            raise argument_error(f"{name} has a batch of {shape[0]} where {batch} (or 1, shared) was expected")
        stride = strides[0] if shape[0] > 1 else 0
        shape, strides = shape[1:], strides[1:]
    if mode is None:
        if _count(shape) == 1:
            mode = "per_tensor"
        elif shape in ((outer,), (outer, 1), (1, outer)):
            mode = "outer_vec"
        elif shape == (outer, kb):
            mode = "vec128"
        elif shape == (ob, kb):
            mode = "blk128x128"
        else:
            raise argument_error(f"{name} has shape {tuple(v.shape)}: expected one element (per tensor), ({outer},) "
                             f"(per {'row' if name == 'a_scale' else 'column'}), ({outer}, {kb}) (1 x 128 blocks) "
                             f"or ({ob}, {kb}) (128 x 128 blocks), with an optional leading batch dimension")
    if mode == "per_tensor":
        return Scale(mode, dtype, "k", 1, stride)
    if mode == "outer_vec":  # a vector, possibly strided: K-major with ld = its step
        step = strides[0] if len(shape) == 1 or shape[0] > 1 else strides[-1]
        return Scale(mode, dtype, "k", max(step, 1) if _count(shape) > 1 else 1, stride)
    if len(shape) == 1:  # a flat array: packed K-major
        return Scale(mode, dtype, "k", 0, stride)
    layout = matrix_layout(View(v.ptr, shape, strides, v.dtype, v.device, v.stream, v.owner))
    if layout is None:
        raise argument_error(f"{name} has strides {tuple(v.strides)}: neither of its last two dimensions is "
                             "contiguous")
    transposed, ld = layout
    return Scale(mode, dtype, "mn" if transposed else "k", ld, stride)


def view_of(x: Any, name: str, device: str) -> View:
    """A scale or amax argument as a View; Python numbers become one-element float32 host arrays."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        if device != "cpu":
            raise dtype_error(f"{name}: a number is a host value; give a one-element float32 tensor for GPU "
                              "operands")
        import numpy

        x = numpy.array([x], dtype=numpy.float32)
    try:
        return as_view(x)
    except TypeError as err:
        message = err.message if isinstance(err, Error) else str(err)
        raise dtype_error(f"{name}: {message}; scales are float32, or uint8 / float8_e8m0fnu exponents (UE8M0)",
                          supported=getattr(err, "status", None) != capi.DGEMM_STATUS_NOT_SUPPORTED) from None
