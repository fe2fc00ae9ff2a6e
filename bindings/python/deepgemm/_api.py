"""The idiomatic layer over ``deepgemm.capi``: exceptions instead of status codes, ``Context`` and
``Plan`` objects that free their handles, and ``matmul`` / ``linear`` for one-call use.

Where the C API grows (input scales, grouped problems: version node DGEMM_1.1), the new values are
keyword arguments of ``Context.plan`` (what the plan fixes) and ``Plan.execute`` (what each call
passes), filled into the C structs in ``_plan_structs`` and ``Plan._args``; ``matmul`` and
``linear`` forward them. Input scaling's plan-time descriptions and execute-time arrays go
through ``_scaling`` into the extension structs ``dgemm_scaling_t`` and ``dgemm_scale_args_t``
(``Plan._scale_args``); a grouped problem's layout and row arrays into ``dgemm_grouped_t`` and
``dgemm_group_args_t`` (``Plan._group_args``; ``grouped_matmul`` in ``_grouped``). The extension
structs a call needs are linked into one chain (``_chain``).

A call like an earlier successful one (the same operand types, dtypes, shapes, strides, devices
and options) skips all of that and only reads the new addresses: ``_hotpath``, whose tables are
``Plan._calls``, ``Context._calls`` and this module's ``_calls`` (matmul / linear on the default
contexts). ``linear`` on torch tensors in plain eager mode skips the custom operator's dispatch
too (``_torch.direct``).
"""
import collections
import ctypes
import functools
import json
import os
import sys
import threading
import warnings
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple, Union

from . import _hotpath, _scaling, _torch, capi
from ._errors import Error, Status, argument_error, check as _check, dtype_error
from ._scaling import Scale
from ._tensors import (DTYPE_CODES, FLOAT_TYPES, ITEMSIZE, View, as_view, dtype_name, matrix_layout, signature,
                       stream_handle)

ArrayLike = Any  # a NumPy array, a torch tensor, or an object with __cuda_array_interface__ / __dlpack__
Device = Union[str, int]

ACTIVATIONS: Dict[Optional[str], int] = {
    None: capi.DGEMM_ACT_NONE,
    "none": capi.DGEMM_ACT_NONE,
    "relu": capi.DGEMM_ACT_RELU,
    "gelu": capi.DGEMM_ACT_GELU_ERF,  # torch.nn.functional.gelu's default, and the CLI's
    "gelu_erf": capi.DGEMM_ACT_GELU_ERF,
    "gelu_tanh": capi.DGEMM_ACT_GELU_TANH,  # gelu(x, approximate="tanh")
    "silu": capi.DGEMM_ACT_SILU,
}

# Grouped layouts (deepgemm.h dgemm_group_layout_t) by the names Context.plan takes.
GROUP_LAYOUTS: Dict[str, int] = {"contiguous": capi.DGEMM_GROUP_CONTIGUOUS, "masked": capi.DGEMM_GROUP_MASKED}

# Output scale modes (deepgemm.h dgemm_vector_mode_t) by the names Context.plan takes.
SCALE_MODES: Dict[Optional[str], int] = {
    None: capi.DGEMM_VECTOR_NONE,
    "per_tensor": capi.DGEMM_VECTOR_PER_TENSOR,
    "per_row": capi.DGEMM_VECTOR_PER_ROW,
    "per_column": capi.DGEMM_VECTOR_PER_COLUMN,
}


def version() -> str:
    """The version of the loaded libdeepgemm ("MAJOR.MINOR.PATCH")."""
    return capi.dgemm_version_string()


def _parse_device(device: Device) -> Tuple[int, int]:
    if isinstance(device, int) and not isinstance(device, bool):
        return capi.DGEMM_DEVICE_CUDA, device
    text = str(device)
    if text == "auto":
        return capi.DGEMM_DEVICE_AUTO, 0
    if text == "cpu":
        return capi.DGEMM_DEVICE_CPU, 0
    if text == "cuda":
        return capi.DGEMM_DEVICE_CUDA, 0
    if text.startswith("cuda:") and text[5:].isdigit():
        return capi.DGEMM_DEVICE_CUDA, int(text[5:])
    raise argument_error(f"device {device!r}: expected 'auto', 'cpu', 'cuda', 'cuda:N' or an int")


def _chain(*exts):
    """Links the DGEMM_1.1 extension structs given (None: absent) through ``header.next`` and
    returns a reference to the first for dgemm_create_plan_ext / dgemm_execute_ext, or None when
    there is none. The caller keeps the structs alive until the call returns."""
    present = [x for x in exts if x is not None]
    for first, second in zip(present, present[1:]):
        first.header.next = ctypes.addressof(second)
    return ctypes.byref(present[0]) if present else None


class _Handle:
    """Owner of one library handle (self._handle): `with` support, and close() when collected."""

    _handle: Optional[int] = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
            return
        # Another exception is on its way out: closing must not replace it with its own error
        # (a context with live plans refuses to close). Say so, and let the first one through.
        try:
            self.close()
        except Error as e:
            warnings.warn(f"{self!r} left open while an exception propagated: {e}", RuntimeWarning, stacklevel=2)

    def close(self) -> None:
        raise NotImplementedError

    def __del__(self):
        if getattr(self, "_handle", None) is not None and capi is not None:
            try:
                self.close()
            except Exception:
                pass


class Context(_Handle):
    """A device (``"auto"``, ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or an ordinal) and its caches.

    Plans keep their context alive; ``close()`` (or leaving a ``with`` block) frees it once its
    plans are closed. Creating plans from several threads is safe.
    """

    _PLAN_CACHE_SIZE = 64

    def __init__(self, device: Device = "auto"):
        kind, index = _parse_device(device)
        handle = capi.dgemm_context_t()
        _check(capi.dgemm_context_create(kind, index, ctypes.byref(handle)))
        self._handle = handle.value
        actual, ordinal = ctypes.c_int(), ctypes.c_int()
        _check(capi.dgemm_context_device(self._handle, ctypes.byref(actual), ctypes.byref(ordinal)))
        self.device: str = "cpu" if actual.value == capi.DGEMM_DEVICE_CPU else f"cuda:{ordinal.value}"
        self._lock = threading.Lock()
        self._cache: "collections.OrderedDict[tuple, Plan]" = collections.OrderedDict()  # matmul's plans, LRU first
        self._calls: Dict[tuple, _hotpath.Call] = {}  # matmul's and linear's hot path with this context

    def __repr__(self) -> str:
        state = "" if self._handle is not None else ", closed"
        return f"deepgemm.Context({self.device!r}{state})"

    @property
    def handle(self) -> int:
        if self._handle is None:
            raise argument_error("the context is closed")
        return self._handle

    def plan(self, m: int, n: int, k: int, dtype: Any = "float32", *, b_dtype: Any = None, out_dtype: Any = None,
             c_dtype: Any = None, trans_a: bool = False, trans_b: bool = False, lda: int = 0, ldb: int = 0,
             ldc: int = 0, ldd: int = 0, batch: int = 1, stride_a: int = 0, stride_b: int = 0, stride_c: int = 0,
             stride_d: int = 0, bias: Any = None, bias_per_row: bool = False, activation: Optional[str] = None,
             alpha: float = 1.0, beta: float = 0.0, column_major: bool = False, force_kernel: Optional[str] = None,
             arch_file: Optional[Union[str, "os.PathLike[str]"]] = None, autotune: bool = False,
             scale: Optional[str] = None, zero_point: bool = False, saturate: bool = True,
             a_scale: Union[Scale, str, None] = None, b_scale: Union[Scale, str, None] = None,
             d_scale: Union[Scale, str, None] = None, amax: bool = False, grouped: Optional[str] = None,
             m_alignment: int = 1, expected_m: int = 0) -> "Plan":
        """Plans ``D = quantize(act(alpha * op(A) @ op(B) + beta * C + bias) * scale)`` for one shape
        (see deepgemm.h).

        ``dtype`` is A's element type (``b_dtype`` defaults to it); ``out_dtype`` defaults to A's
        type for float inputs, bfloat16 for FP8 and int32 for int8; ``bias`` is the bias vector's
        dtype (None: no bias), per column (length n) unless ``bias_per_row``. Leading dimensions
        and batch strides are in elements, 0 meaning packed. ``scale`` is the output scale's mode
        (None, "per_tensor", "per_row" or "per_column"; the float32 vector itself is given to each
        execute); ``zero_point`` adds an int32 zero point per scale entry (int8 outputs);
        ``saturate`` clamps FP8 outputs to the largest finite value instead of overflowing.

        Input scaling (deepgemm.h, DGEMM_1.1): ``a_scale`` / ``b_scale`` are a :class:`Scale` or a
        mode name ("per_tensor", "outer_vec", "vec128", "blk128x128"; float32, MN-major, packed);
        ``d_scale`` (FP8 ``out_dtype``) quantizes D in 1 x 128 blocks with scales the plan writes
        (a Scale, or "float32" / "ue8m0"); ``amax`` writes max |y| of D. The arrays themselves
        are given to each execute.

        ``grouped`` ("contiguous" or "masked") plans a grouped problem of ``batch`` groups whose
        rows each execute gives (``offsets`` / ``counts``, see deepgemm.h "grouped problems"); m is
        then the rows' capacity and ``m_alignment`` what the contiguous offsets promise;
        ``expected_m`` (0: unknown) the rows a group is expected to hold on average, which only
        the choice of kernel uses (as DeepSeek's masked GEMM takes ``expected_m``).
        """
        a_name = dtype_name(dtype)
        b_name = dtype_name(b_dtype) if b_dtype is not None else a_name
        d_name = dtype_name(out_dtype) if out_dtype is not None else _default_out(a_name)
        c_name = dtype_name(c_dtype) if c_dtype is not None else d_name
        bias_name = dtype_name(bias) if bias is not None else None
        p, e, o = _plan_structs(m, n, k, a_name, b_name, c_name, d_name, trans_a=trans_a, trans_b=trans_b, lda=lda,
                                ldb=ldb, ldc=ldc, ldd=ldd, batch=batch, stride_a=stride_a, stride_b=stride_b,
                                stride_c=stride_c, stride_d=stride_d, bias=bias_name, bias_per_row=bias_per_row,
                                activation=activation, alpha=alpha, beta=beta, column_major=column_major,
                                force_kernel=force_kernel, arch_file=arch_file, autotune=autotune, scale=scale,
                                zero_point=zero_point, saturate=saturate)
        scales = {"a": _scaling.as_scale(a_scale, "a_scale"), "b": _scaling.as_scale(b_scale, "b_scale"),
                  "d": _scaling.as_scale(d_scale, "d_scale", default_mode="vec128")}
        scaling = _scaling.make_scaling(scales["a"], scales["b"], scales["d"], amax)
        g = None
        if grouped is not None:
            if grouped not in GROUP_LAYOUTS:
                raise argument_error(f"grouped {grouped!r}: expected one of {list(GROUP_LAYOUTS)} or None")
            g = capi.dgemm_grouped_t()
            _check(capi.dgemm_grouped_init(ctypes.byref(g)))
            g.layout = GROUP_LAYOUTS[grouped]
            g.m_alignment = int(m_alignment)
            g.expected_m = int(expected_m)
        handle = capi.dgemm_plan_t()
        structs = (ctypes.byref(p), ctypes.byref(e), ctypes.byref(o) if o is not None else None)
        ext = _chain(scaling, g)
        if ext is None:
            _check(capi.dgemm_create_plan(self.handle, *structs, ctypes.byref(handle)))
        else:
            _check(capi.dgemm_create_plan_ext(self.handle, *structs, ext, ctypes.byref(handle)))
        return Plan(self, handle.value, p, e, (a_name, b_name, c_name, d_name, bias_name),
                    scales if scaling is not None else None, bool(amax), grouped)

    def close(self) -> None:
        """Frees the context (and the plans matmul cached on it). Error if other plans are alive."""
        if self._handle is None:
            return
        with self._lock:
            cached = list(self._cache.values())
            self._cache.clear()
            self._calls.clear()
        for plan in cached:
            plan.close()
        _check(capi.dgemm_context_destroy(self._handle))
        self._handle = None

    def _cached_plan(self, key: tuple, make) -> "Plan":
        with self._lock:
            plan = self._cache.get(key)
            if plan is not None:
                self._cache.move_to_end(key)
                return plan
        plan = make()
        with self._lock:
            other = self._cache.get(key)
            if other is not None:  # another thread made the same plan meanwhile
                plan.close()
                return other
            self._cache[key] = plan
            while len(self._cache) > self._PLAN_CACHE_SIZE:
                self._cache.popitem(last=False)[1].close()
        return plan


def _plan_structs(m, n, k, a_name, b_name, c_name, d_name, *, trans_a, trans_b, lda, ldb, ldc, ldd, batch, stride_a,
                  stride_b, stride_c, stride_d, bias, bias_per_row, activation, alpha, beta, column_major,
                  force_kernel, arch_file, autotune, scale, zero_point, saturate):
    """The C problem, epilogue and options (None for the defaults) of a plan request."""
    if activation not in ACTIVATIONS:
        raise argument_error(f"activation {activation!r}: expected one of {[a for a in ACTIVATIONS if a]}")
    if scale not in SCALE_MODES:
        raise argument_error(f"scale {scale!r}: expected one of {[s for s in SCALE_MODES if s]} or None")
    p = capi.dgemm_problem_t()
    _check(capi.dgemm_problem_init(ctypes.byref(p)))
    p.m, p.n, p.k = int(m), int(n), int(k)
    p.a_type, p.b_type = DTYPE_CODES[a_name], DTYPE_CODES[b_name]
    p.c_type, p.d_type = DTYPE_CODES[c_name], DTYPE_CODES[d_name]
    p.compute_type = capi.DGEMM_DTYPE_I32 if (a_name, b_name) == ("int8", "int8") else capi.DGEMM_DTYPE_F32
    p.op_a = capi.DGEMM_OP_T if trans_a else capi.DGEMM_OP_N
    p.op_b = capi.DGEMM_OP_T if trans_b else capi.DGEMM_OP_N
    p.order = capi.DGEMM_ORDER_COL_MAJOR if column_major else capi.DGEMM_ORDER_ROW_MAJOR
    p.lda, p.ldb, p.ldc, p.ldd = int(lda), int(ldb), int(ldc), int(ldd)
    p.batch_count = int(batch)
    p.stride_a, p.stride_b, p.stride_c, p.stride_d = int(stride_a), int(stride_b), int(stride_c), int(stride_d)
    e = capi.dgemm_epilogue_t()
    _check(capi.dgemm_epilogue_init(ctypes.byref(e)))
    e.alpha, e.beta = float(alpha), float(beta)
    if bias is not None:
        e.bias_mode = capi.DGEMM_VECTOR_PER_ROW if bias_per_row else capi.DGEMM_VECTOR_PER_COLUMN
        e.bias_type = DTYPE_CODES[bias]
    e.activation = ACTIVATIONS[activation]
    e.scale_mode = SCALE_MODES[scale]
    # The library validates the combination (a zero point without a scale, or on a non-int8
    # output, is its INVALID_ARGUMENT / NOT_SUPPORTED, not ours to restate).
    e.flags = (capi.DGEMM_EPILOGUE_SATURATE if saturate else 0) | (capi.DGEMM_EPILOGUE_ZERO_POINT if zero_point else 0)
    o = None
    if force_kernel is not None or arch_file is not None or autotune:
        o = capi.dgemm_plan_options_t()
        _check(capi.dgemm_plan_options_init(ctypes.byref(o)))
        if force_kernel is not None:
            o.force_kernel = str(force_kernel).encode()
        if arch_file is not None:
            o.arch_file = os.fsencode(arch_file)
        if autotune:
            o.flags = capi.DGEMM_PLAN_AUTOTUNE
    return p, e, o


def _default_out(a_name: str) -> str:
    if a_name in FLOAT_TYPES:
        return a_name
    return "int32" if a_name == "int8" else "bfloat16"


class _Launch(NamedTuple):
    """One checked dgemm_execute(_ext) call: its arguments, and what must stay alive until it
    returns (views, extension structs)."""
    a: Optional[int]
    b: Optional[int]
    c: Optional[int]
    d: Optional[int]
    args: Any  # capi.dgemm_args_t
    ext: Any  # the extension chain (a ctypes reference), or None
    ws: int
    ws_size: int
    stream: Optional[int]
    keep: List[Any]


class Plan(_Handle):
    """A planned GEMM. ``execute`` only launches (or, on the CPU, computes) and may be called
    from several threads at once. ``describe()`` says which kernel was chosen and why."""

    def __init__(self, context: Context, handle: int, problem, epilogue, dtypes,
                 scales: Optional[Dict[str, Optional[Scale]]] = None, amax: bool = False,
                 grouped: Optional[str] = None):
        self.context = context  # keeps the context alive as long as the plan
        self._handle = handle
        # The plan's scale tensors (DGEMM_1.1) as the library resolved them; None: no scaling.
        self.scales: Optional[Dict[str, _scaling.TensorInfo]] = None if scales is None else {
            which: _scaling.plan_tensor_info(handle, code, scales[which])
            for which, code in (("a", capi.DGEMM_SCALE_TENSOR_A), ("b", capi.DGEMM_SCALE_TENSOR_B),
                                ("d", capi.DGEMM_SCALE_TENSOR_D)) if scales[which] is not None}
        self.amax: bool = amax
        self.grouped = grouped  # None, "contiguous" or "masked"
        self._p = problem
        self._e = epilogue
        self.a_dtype, self.b_dtype, self.c_dtype, self.out_dtype, self.bias_dtype = dtypes
        size = ctypes.c_size_t()
        _check(capi.dgemm_plan_workspace_size(handle, ctypes.byref(size)))
        self.workspace_size: int = size.value
        self._family: Optional[str] = None
        self._calls: Dict[tuple, _hotpath.Call] = {}  # execute's hot path, by signature

    @property
    def shape(self) -> Tuple[int, int, int]:
        return self._p.m, self._p.n, self._p.k

    @property
    def family(self) -> str:
        """The kernel family the planner chose ("cpu", "sm80", "sm90", "small_m", ...)."""
        if self._family is None:
            self._family = self.describe().get("family", "?")
        return self._family

    def __repr__(self) -> str:
        m, n, k = self.shape
        batch = f", batch={self._p.batch_count}" if self._p.batch_count > 1 else ""
        if self._handle is None:
            return f"deepgemm.Plan(m={m}, n={n}, k={k}{batch}, {self.a_dtype} -> {self.out_dtype}, closed)"
        return (f"deepgemm.Plan(m={m}, n={n}, k={k}{batch}, {self.a_dtype} -> {self.out_dtype}, "
                f"family={self.family!r}, device={self.context.device!r})")

    def describe(self) -> Dict[str, Any]:
        """The plan's JSON description (backend, family, tile, predicted time, rejected candidates)."""
        need = ctypes.c_size_t()
        _check(capi.dgemm_plan_describe(self._live(), None, 0, ctypes.byref(need)))
        buf = ctypes.create_string_buffer(need.value)
        _check(capi.dgemm_plan_describe(self._live(), ctypes.addressof(buf), need.value, None))
        return json.loads(buf.value.decode())

    def _live(self) -> int:
        if self._handle is None:
            raise argument_error("the plan is closed")
        return self._handle

    def _where(self) -> str:
        return self.context.device

    def _operand(self, name, x, dtype, rows, cols, ld, stride, optional=False):
        """Checks an array against what the plan will read or write; returns (address, view)."""
        if x is None:
            if optional:
                return None, None
            raise argument_error(f"{name} is required")
        if isinstance(x, int) and not isinstance(x, bool):  # a raw address: the caller vouches for it
            return x, None
        v = as_view(x)
        if v.device != self._where():
            raise argument_error(f"{name} is on {v.device} but the plan runs on {self._where()}")
        if v.dtype != dtype:
            raise dtype_error(f"{name} has dtype {v.dtype}, the plan expects {dtype}")
        column_major = self._p.order == capi.DGEMM_ORDER_COL_MAJOR
        stored = (cols, rows) if column_major else (rows, cols)
        batch = self._p.batch_count
        if v.shape[-2:] != stored or len(v.shape) not in (2, 3) or (len(v.shape) == 3 and v.shape[0] not in (1, batch)):
            want = stored if stride == 0 else (batch,) + stored
            raise argument_error(f"{name} has shape {v.shape}, the plan expects {want}")
        layout = matrix_layout(v)
        if layout is None or layout[0] or layout[1] != (ld or stored[1]):
            raise argument_error(f"{name} has strides {v.strides} (elements); the plan expects row stride "
                                 f"{ld or stored[1]} and unit column stride")
        if len(v.shape) == 2 or v.shape[0] == 1:
            if stride != 0 and batch > 1:
                raise argument_error(f"{name} is one matrix but the plan expects a batch of {batch} with stride {stride}")
        elif v.strides[0] != stride:
            raise argument_error(f"{name} has batch stride {v.strides[0]}, the plan expects {stride}")
        return v.ptr, v

    @property
    def scale_length(self) -> int:
        """How many entries the output scale (and zero point) has: 0 without a scale."""
        return self._vector_length(self._e.scale_mode)

    def _vector_length(self, mode: int) -> int:
        """Entries of an epilogue vector of this mode; a grouped plan has one vector per group
        (per row: one entry per row of D, which a masked layout has per group)."""
        p = self._p
        groups = p.batch_count if self.grouped else 1
        if mode == capi.DGEMM_VECTOR_PER_TENSOR:
            return groups
        if mode == capi.DGEMM_VECTOR_PER_ROW:
            return p.m * (groups if self.grouped == "masked" else 1)
        if mode == capi.DGEMM_VECTOR_PER_COLUMN:
            return p.n * groups
        return 0

    def _vector(self, name, x, dtype, length, keep):
        """Address of an execute-time vector (scale, zero point, device alpha/beta, bias) after
        checking it. The C library takes bare pointers and cannot see a length, so a wrong one is
        reported here with the status the library gives a bad argument (INVALID_ARGUMENT)."""
        if isinstance(x, int) and not isinstance(x, bool):  # a raw address: the caller vouches for it
            return x
        v = as_view(x)
        if v.device != self._where():
            raise argument_error(f"{name} is on {v.device} but the plan runs on {self._where()}")
        if v.dtype != dtype:
            raise dtype_error(f"{name} has dtype {v.dtype}, the plan expects {dtype}")
        count = _count(v.shape)
        if count != length:
            raise argument_error(f"{name} has {count} elements, the plan reads {length}")
        # Contiguous: every dimension but those of extent 1 steps like a packed array.
        expected = 1
        for extent, stride in reversed(list(zip(v.shape, v.strides))):
            if extent > 1 and stride != expected:
                raise argument_error(f"{name} must be contiguous, got shape {v.shape} strides {v.strides}")
            expected *= extent
        keep.append(v)
        return v.ptr

    def execute(self, a: ArrayLike, b: ArrayLike, d: ArrayLike, *, c: ArrayLike = None, bias: ArrayLike = None,
                alpha: Any = None, beta: Any = None, scale: ArrayLike = None, zero_point: ArrayLike = None,
                workspace: ArrayLike = None, stream: Any = None, a_scale: ArrayLike = None, b_scale: ArrayLike = None,
                d_scale: ArrayLike = None, amax: ArrayLike = None, offsets: ArrayLike = None, counts: ArrayLike = None,
                group_status: ArrayLike = None) -> ArrayLike:
        """Runs the plan: ``d`` receives the result (and is returned). Arrays are checked against
        the plan (dtype, device, shape, strides); ints are taken as raw addresses. ``c`` and the
        other optional operands are keyword-only, so that C cannot be passed where D belongs (the
        C API's order is A, B, C, D). ``stream`` (CUDA) defaults to the stream of the operands
        (the torch current stream, or __cuda_array_interface__'s).

        ``alpha``/``beta``: None (the plan's), numbers (this call's host values), or one-element
        float32 arrays in the plan's memory, read when the kernel runs (DGEMM_SCALARS_DEVICE: give
        alpha, and beta too when the plan reads C). ``bias``: the plan's bias vector. ``scale``: the
        float32 output scale (1, m or n entries as planned); ``zero_point``: the int32 zero point,
        as many entries as the scale.

        Scaled plans (DGEMM_1.1): ``a_scale`` / ``b_scale`` (read) and ``d_scale`` (written) are
        arrays of the plan's scale tensors (``self.scales`` has their shapes): the (rows, cols)
        matrix (or (batch, rows, cols)) with the planned layout's strides, or a flat array of
        exactly the elements the plan addresses; ``amax`` is a one-element float32 array, written.

        Grouped plans: ``offsets`` (contiguous, G + 1) or ``counts`` (masked, G) are int32 arrays in
        the plan's memory, read when the kernel runs; ``group_status`` an optional one-element int32
        array that receives the DGEMM_GROUP_STATUS_* bits. Epilogue vectors hold one copy per group
        (bias per column: G x n)."""
        key = None
        if a_scale is None and b_scale is None and d_scale is None and amax is None and offsets is None and \
                counts is None and group_status is None:
            # The hot path (_hotpath): this plan's earlier call with the same signature.
            key = (signature(a), signature(b), signature(d), signature(c), signature(bias), signature(scale),
                   signature(zero_point), signature(workspace), _scalar_kind(alpha), _scalar_kind(beta))
            call = _hotpath.lookup(self._calls, key)
            handle = self._handle
            if call is not None and handle is not None:
                call.run(handle, a, b, c, d, bias, alpha, beta, stream, scale, zero_point, workspace, like=a)
                return d
        launch = self._prepare(a, b, d, c=c, bias=bias, alpha=alpha, beta=beta, scale=scale, zero_point=zero_point,
                               workspace=workspace, stream=stream, a_scale=a_scale, b_scale=b_scale, d_scale=d_scale,
                               amax=amax, offsets=offsets, counts=counts, group_status=group_status)
        self._launch(launch)
        if key is not None and 2 not in key[-2:]:
            ws_alloc = None
            if workspace is None and self.workspace_size:  # as _prepare allocated it
                ws_alloc = functools.partial(_allocate_workspace, nbytes=self.workspace_size, device=self.context.device)
            _hotpath.remember(self._calls, key, None, launch, a, b, c, d, bias, scale, zero_point, workspace, stream,
                              ws_alloc=ws_alloc)
        return d

    def _prepare(self, a, b, d, *, c=None, bias=None, alpha=None, beta=None, scale=None, zero_point=None,
                 workspace=None, stream=None, a_scale=None, b_scale=None, d_scale=None, amax=None, offsets=None,
                 counts=None, group_status=None) -> "_Launch":
        """Checks execute's arguments against the plan and fills the C call's arguments."""
        p = self._p
        ta, tb = p.op_a == capi.DGEMM_OP_T, p.op_b == capi.DGEMM_OP_T
        a_ptr, va = self._operand("a", a, self.a_dtype, *((p.k, p.m) if ta else (p.m, p.k)), p.lda, p.stride_a)
        b_ptr, vb = self._operand("b", b, self.b_dtype, *((p.n, p.k) if tb else (p.k, p.n)), p.ldb, p.stride_b)
        c_ptr, vc = self._operand("c", c, self.c_dtype, p.m, p.n, p.ldc, p.stride_c, optional=self._e.beta == 0)
        d_ptr, vd = self._operand("d", d, self.out_dtype, p.m, p.n, p.ldd, p.stride_d)
        keep: List[Any] = [va, vb, vc, vd]
        args = self._args(keep, bias=bias, alpha=alpha, beta=beta, scale=scale, zero_point=zero_point)
        ws_ptr, ws_size = 0, 0
        if workspace is None and self.workspace_size:
            # The library never allocates during execute (the CPU backend's scratch is workspace
            # too): the binding does, like the operands, for a caller who passed none.
            workspace = _allocate_workspace(a, self.workspace_size, self.context.device)
        if workspace is not None:
            if isinstance(workspace, int):
                ws_ptr, ws_size = workspace, self.workspace_size
            else:
                vw = as_view(workspace)
                ws_ptr = vw.ptr
                ws_size = ITEMSIZE.get(vw.dtype, 1) * _count(vw.shape)
                keep.append(vw)
        if stream is None:
            stream = next((v.stream for v in (va, vb, vd) if v is not None and v.stream is not None), 0)
        stream = stream_handle(stream)
        sargs = self._scale_args(keep, a_scale=a_scale, b_scale=b_scale, d_scale=d_scale, amax=amax)
        gargs = self._group_args(keep, offsets=offsets, counts=counts, status=group_status)
        keep += [sargs, gargs]
        return _Launch(a_ptr, b_ptr, c_ptr, d_ptr, args, _chain(sargs, gargs), ws_ptr, ws_size, stream, keep)

    def _launch(self, launch: "_Launch") -> None:
        x = launch
        if x.ext is None:
            _check(capi.dgemm_execute(self._live(), x.a, x.b, x.c, x.d, ctypes.byref(x.args), x.ws, x.ws_size,
                                      x.stream))
        else:
            _check(capi.dgemm_execute_ext(self._live(), x.a, x.b, x.c, x.d, ctypes.byref(x.args), x.ext, x.ws,
                                          x.ws_size, x.stream))

    def _args(self, keep, *, bias, alpha, beta, scale, zero_point):
        """The dgemm_args_t of one execute; the views it points into are appended to ``keep``."""
        args = capi.dgemm_args_t()
        _check(capi.dgemm_args_init(ctypes.byref(args)))
        reads_c = self._e.beta != 0
        if _is_tensor(alpha) or _is_tensor(beta):
            if not _is_tensor(alpha) or (reads_c and not _is_tensor(beta)) or (beta is not None and not _is_tensor(beta)):
                raise argument_error("device scalars: give alpha as a one-element float32 array, and beta too "
                                     "(required when the plan reads C)")
            args.scalar_mode = capi.DGEMM_SCALARS_DEVICE
            args.alpha_ptr = self._vector("alpha", alpha, "float32", 1, keep)
            if beta is not None:
                args.beta_ptr = self._vector("beta", beta, "float32", 1, keep)
        elif alpha is not None or beta is not None:
            args.scalar_mode = capi.DGEMM_SCALARS_HOST
            args.alpha = self._e.alpha if alpha is None else float(alpha)
            args.beta = self._e.beta if beta is None else float(beta)
        length = self.scale_length
        if scale is not None:
            if not length:
                raise argument_error("the plan has no output scale")
            args.scale = self._vector("scale", scale, "float32", length, keep)
        if zero_point is not None:
            if not self._e.flags & capi.DGEMM_EPILOGUE_ZERO_POINT:
                raise argument_error("the plan has no zero point")
            args.zero_point = self._vector("zero_point", zero_point, "int32", length, keep)
        if bias is not None:
            if self.bias_dtype is None:
                raise argument_error("the plan has no bias")
            args.bias = self._vector("bias", bias, self.bias_dtype, self._vector_length(self._e.bias_mode), keep)
        return args

    def _scale_args(self, keep, *, a_scale, b_scale, d_scale, amax) -> Optional[capi.dgemm_scale_args_t]:
        """The dgemm_scale_args_t of a scaled plan's call (None for an unscaled plan). A missing
        array is left NULL for the library to report; a wrong one is INVALID_ARGUMENT here, where
        its shape is known."""
        given = {"a": a_scale, "b": b_scale, "d": d_scale}
        if self.scales is None and not self.amax:
            if any(x is not None for x in given.values()) or amax is not None:
                raise argument_error("the plan has no scaling (plan with a_scale / b_scale / d_scale / amax)")
            return None
        sargs = capi.dgemm_scale_args_t()
        _check(capi.dgemm_scale_args_init(ctypes.byref(sargs)))
        for which, x in given.items():
            if x is None:
                continue
            info = (self.scales or {}).get(which)
            if info is None:
                raise argument_error(f"{which}_scale given, but the plan has no {which} scale tensor")
            if isinstance(x, int) and not isinstance(x, bool):  # a raw address: the caller vouches for it
                setattr(sargs, f"{which}_scale", x)
                continue
            v = _scaling.view_of(x, f"{which}_scale", self._where())
            if v.device != self._where():
                raise argument_error(f"{which}_scale is on {v.device} but the plan runs on {self._where()}")
            error = _scaling.check_tensor(f"{which}_scale", v, info, self._p.batch_count)
            if error is not None:
                raise error
            setattr(sargs, f"{which}_scale", v.ptr)
            keep.append(v)
        if amax is not None:
            if not self.amax:
                raise argument_error("amax given, but the plan was made without amax=True")
            sargs.amax_d = self._vector("amax", amax, "float32", 1, keep)
        return sargs

    def _group_args(self, keep, *, offsets, counts, status) -> Optional[capi.dgemm_group_args_t]:
        """The dgemm_group_args_t of a grouped plan's call (None for a plan that is not grouped)."""
        if not self.grouped:
            if offsets is not None or counts is not None or status is not None:
                raise argument_error("offsets / counts / group_status are for grouped plans")
            return None
        groups = self._p.batch_count
        contiguous = self.grouped == "contiguous"
        name, rows, length = ("offsets", offsets, groups + 1) if contiguous else ("counts", counts, groups)
        if rows is None or (counts if contiguous else offsets) is not None:
            raise argument_error(f"a {self.grouped} plan takes {name} ({length} int32), and only that")
        g = capi.dgemm_group_args_t()
        _check(capi.dgemm_group_args_init(ctypes.byref(g)))
        setattr(g, name, self._vector(name, rows, "int32", length, keep))
        if status is not None:
            g.status = self._vector("group_status", status, "int32", 1, keep)
        return g

    def close(self) -> None:
        if self._handle is not None:
            handle, self._handle = self._handle, None
            _check(capi.dgemm_destroy_plan(handle))


def _scalar_kind(x) -> Optional[int]:
    """An execute-time alpha / beta for the hot path's signature: None (the plan's), 1 (a Python
    number: this call's host value), 2 (anything else: the full path every time)."""
    if x is None:
        return None
    return 1 if type(x) in (int, float) else 2


def _is_tensor(x) -> bool:
    """An execute-time scalar given as memory (an array / tensor), not a number. Python ints are
    numbers here (alpha=2), never raw addresses."""
    if x is None or isinstance(x, (int, float)):
        return False
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(x, numpy.generic):
        return False  # numpy.float32(2.0) is a host value
    return True


def _count(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


# ---------------------------------------------------------------------------------------------
# One-call API: matmul and linear plan (cached per context and shape) and execute.

_contexts: Dict[str, Context] = {}
_contexts_lock = threading.Lock()


def _context_for(device: str) -> Context:
    with _contexts_lock:
        ctx = _contexts.get(device)
        if ctx is None:
            ctx = _contexts[device] = Context(device)
        return ctx


def _allocate(like, shape, dtype: str, device: str):
    """A new array for an output or workspace, from the library that made ``like``."""
    return _allocator(like, shape, dtype, device)()


def _allocator(like, shape, dtype: str, device: str) -> Callable[[], Any]:
    """What allocates such arrays (the hot path calls it again for later calls like this one)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(like, torch.Tensor):
        return functools.partial(torch.empty, shape, dtype=getattr(torch, dtype), device=like.device)
    if device == "cpu":
        import numpy

        if dtype in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
            import ml_dtypes

            return functools.partial(numpy.empty, shape, dtype=getattr(ml_dtypes, dtype))
        return functools.partial(numpy.empty, shape, dtype=numpy.dtype(dtype))
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(like, cupy.ndarray):
        if dtype not in ("float32", "float16", "int8", "int32", "uint8"):
            raise dtype_error(f"CuPy has no {dtype}: pass out=", supported=False)

        ordinal = like.device.id

        def allocate():
            with cupy.cuda.Device(ordinal):
                return cupy.empty(shape, dtype=dtype)
        return allocate
    raise dtype_error(f"cannot allocate a result like a {type(like).__name__}: pass out=", supported=False)


def _allocate_workspace(like, nbytes: int, device: str):
    """Scratch memory for a plan that needs some: NumPy on the CPU; on a GPU like the operands,
    else from torch or CuPy."""
    if device == "cpu":
        import numpy

        return numpy.empty(nbytes, dtype=numpy.int8)
    try:
        return _allocate(like, (nbytes,), "int8", device)
    except TypeError:
        pass
    torch = sys.modules.get("torch")
    if torch is not None:
        return torch.empty(nbytes, dtype=torch.int8, device=device)
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        with cupy.cuda.Device(int(device.split(":")[1])):
            return cupy.empty(nbytes, dtype="int8")
    raise dtype_error(f"this plan needs {nbytes} bytes of {device} workspace: pass workspace=")


def _host_copy(v: View, name: str, why: str) -> View:
    """A packed copy of the memory a view describes, for layouts the library cannot read directly:
    NumPy arrays, and torch tensors as torch's own functions would copy them (.contiguous(), on the
    current stream); other GPU memory is not copied behind the caller's back."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(v.owner, torch.Tensor) and tuple(v.owner.shape) == tuple(v.shape) and \
            tuple(v.owner.stride()) == tuple(v.strides):
        return as_view(v.owner.contiguous())
    numpy = sys.modules.get("numpy")
    if numpy is None or not isinstance(v.owner, numpy.ndarray):
        raise argument_error(f"{name} (shape {v.shape}, strides {v.strides}): {why}; make it contiguous first")
    dtype = v.owner.dtype
    if _count(v.shape) == 0:
        return as_view(numpy.empty(v.shape, dtype=dtype))
    item = dtype.itemsize
    low = sum(min(0, s) * (e - 1) for e, s in zip(v.shape, v.strides))
    high = sum(max(0, s) * (e - 1) for e, s in zip(v.shape, v.strides)) + 1
    buffer = (ctypes.c_char * ((high - low) * item)).from_address(v.ptr + low * item)
    source = numpy.ndarray(v.shape, dtype=dtype, buffer=buffer, offset=-low * item,
                           strides=tuple(s * item for s in v.strides))
    return as_view(numpy.array(source, order="C"))  # v.owner keeps the source memory alive meanwhile


def _scale_mode(v: View, m: int, n: int, name: str) -> str:
    """The output scale mode a scale/zero-point array's shape asks for, broadcasting like NumPy
    against the (m, n) result: one element per tensor, (n,) or (1, n) per column, (m, 1) per row."""
    shape = tuple(v.shape)
    if _count(shape) == 1 and len(shape) <= 2:
        return "per_tensor"
    if shape in ((n,), (1, n)):
        return "per_column"
    if shape == (m, 1):
        return "per_row"
    raise argument_error(f"{name} has shape {shape}; expected one element, ({n},) / (1, {n}) per column or "
                         f"({m}, 1) per row")


def _epilogue_vector(x, dtype: str, device: str) -> View:
    """A scale or zero point as a View: Python numbers become one-element host arrays."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        if device != "cpu":
            raise dtype_error("a scalar scale/zero point for GPU operands must be a one-element tensor")
        import numpy

        x = numpy.array([x], dtype=dtype)
    v = as_view(x)
    if device == "cpu" and v.dtype != dtype:
        import numpy

        if isinstance(x, numpy.ndarray):  # host arrays are converted, the others must match
            if dtype == "int32" and not numpy.issubdtype(x.dtype, numpy.integer):
                raise dtype_error(f"zero_point must hold integers, got {x.dtype}")
            v = as_view(numpy.ascontiguousarray(x, dtype=dtype))
    return v


def _output(out, like, shape: Tuple[int, ...], dtype: str, device: str):
    """The result array (allocated like ``like`` when None) and its view, checked."""
    if out is None:
        out = _allocate(like, shape, dtype, device)
    v = as_view(out)
    if v.dtype != dtype:
        raise dtype_error(f"out has dtype {v.dtype}, expected {dtype}")
    if tuple(v.shape) != shape:
        raise argument_error(f"out has shape {v.shape}, expected {shape}")
    return out, v


class _Epilogue(NamedTuple):
    """matmul's and linear's execute-time epilogue values, checked against the result's shape."""
    bias: Optional[View]
    scale: Optional[View]
    zero_point: Optional[View]
    scale_mode: Optional[str]


def _epilogue_values(bias, scale, zero_point, m: int, n: int, device: str) -> _Epilogue:
    vbias = None
    if bias is not None:
        vbias = as_view(bias)
        if vbias.shape != (n,):
            raise argument_error(f"bias has shape {vbias.shape}, expected ({n},)")
        if n > 1 and vbias.strides[0] != 1:
            vbias = _host_copy(vbias, "bias", "not contiguous")
    vscale = vzero = None
    scale_mode = None
    if scale is not None or zero_point is not None:
        if zero_point is not None:
            vzero = _epilogue_vector(zero_point, "int32", device)
        if scale is not None:
            vscale = _epilogue_vector(scale, "float32", device)
            scale_mode = _scale_mode(vscale, m, n, "scale")
        else:
            scale_mode = _scale_mode(vzero, m, n, "zero_point")
        length = {"per_tensor": 1, "per_row": m, "per_column": n}[scale_mode]
        import numpy

        if vscale is None:  # a zero point alone: unit scale
            if device != "cpu":
                raise dtype_error("zero_point without scale on a GPU: pass scale too")
            vscale = as_view(numpy.ones(length, dtype=numpy.float32))
        if vzero is not None and _count(vzero.shape) == 1 and length > 1 and device == "cpu":
            vzero = as_view(numpy.full(length, numpy.asarray(vzero.owner).reshape(-1)[0], dtype=numpy.int32))
        if vzero is not None and _count(vzero.shape) != length:
            raise argument_error(f"zero_point has {_count(vzero.shape)} elements, the scale {length}")
    return _Epilogue(vbias, vscale, vzero, scale_mode)


class _Mat(NamedTuple):
    """An operand as one plan reads it: a 2-D view of its first matrix (shape (rows, cols),
    strides in elements) and the element stride between the matrices of the batch (0: one matrix
    shared by the whole batch)."""
    view: View
    stride: int


def _matrix(v: View, batch_shape: Tuple[int, ...], name: str, may_copy: bool = True) -> _Mat:
    """Folds the batch dimensions of ``v`` (all but its last two) into one batch stride against the
    broadcast ``batch_shape``. The C API has one stride per operand, so the batch dimensions must
    step evenly (a packed batch), or all be 1 (one matrix shared by the batch)."""
    lead, strides = tuple(v.shape[:-2]), tuple(v.strides[:-2])
    if len(lead) > len(batch_shape):
        raise argument_error(f"{name} has shape {v.shape}: more batch dimensions than the result {batch_shape}")
    full = (1,) * (len(batch_shape) - len(lead)) + lead
    full_strides = (0,) * (len(batch_shape) - len(lead)) + strides
    matrix = v._replace(shape=v.shape[-2:], strides=v.strides[-2:])
    if _count(full) <= 1:
        return _Mat(matrix, 0)
    if full != tuple(batch_shape):
        raise argument_error(
            f"{name} has batch dimensions {lead} of the broadcast batch {tuple(batch_shape)}: DeepGEMM takes one "
            "batch stride per operand, so an operand either spans the whole batch or is one matrix shared by it; "
            "expand it first (torch: .expand(...).contiguous(), NumPy: np.broadcast_to(...).copy())")
    dims = [(f, s) for f, s in zip(full, full_strides) if f > 1]
    if any(outer != inner * extent for (_, outer), (extent, inner) in zip(dims, dims[1:])):
        if not may_copy:
            raise argument_error(f"{name}: its batch dimensions {lead} with strides {strides} do not step evenly; "
                                 "make it contiguous first")
        return _matrix(_host_copy(v, name, "its batch dimensions do not step evenly"), batch_shape, name, False)
    return _Mat(matrix, dims[-1][1])


def _batch_as_rows(mat: _Mat, m: int, batch: int) -> Optional[_Mat]:
    """A row-major batch of m-row matrices as the batch * m rows of one matrix, when consecutive
    matrices follow each other row by row in memory (a packed batch); None otherwise."""
    v = mat.view
    cols = v.shape[1]
    if m == 0 or mat.stride == 0 or mat.stride % m:
        return None
    step = mat.stride // m
    if (cols > 1 and v.strides[1] != 1) or (m > 1 and v.strides[0] != step) or step < max(cols, 1):
        return None
    return _Mat(v._replace(shape=(batch * m, cols), strides=(step, 1)), 0)


def _broadcast(x: Tuple[int, ...], y: Tuple[int, ...], what: str) -> Tuple[int, ...]:
    n = max(len(x), len(y))
    x, y = (1,) * (n - len(x)) + tuple(x), (1,) * (n - len(y)) + tuple(y)
    out = []
    for i, j in zip(x, y):
        if i != j and 1 not in (i, j):
            raise argument_error(f"batch dimensions {x} and {y} of {what} do not broadcast")
        out.append(max(i, j))
    return tuple(out)


def _with_unit_dim(v: View, pos: int) -> View:
    """``v`` with a dimension of extent 1 inserted before dimension ``pos`` (0 <= pos <= ndim)."""
    stride = v.strides[pos] * v.shape[pos] if pos < len(v.shape) else 1
    return v._replace(shape=v.shape[:pos] + (1,) + v.shape[pos:], strides=v.strides[:pos] + (stride,) + v.strides[pos:])


def _rows_folded(v: View, name: str, may_copy: bool = True) -> View:
    """A view of shape (..., cols) as a (rows, cols) matrix with every leading dimension folded
    into the rows, as torch.nn.functional.linear treats its input (one GEMM, not a batch)."""
    if len(v.shape) == 0:
        raise argument_error(f"{name} is a scalar; expected at least one dimension")
    if len(v.shape) == 1:
        return _with_unit_dim(v, 0)
    if len(v.shape) == 2:
        return v
    lead = [(e, s) for e, s in zip(v.shape[:-1], v.strides[:-1]) if e > 1]
    rows = _count(v.shape[:-1])
    if all(outer == inner * extent for (_, outer), (extent, inner) in zip(lead, lead[1:])) and \
            (v.strides[-1] == 1 or v.shape[-1] <= 1):
        ld = lead[-1][1] if lead else max(v.shape[-1], 1)
        return v._replace(shape=(rows, v.shape[-1]), strides=(ld, 1))
    if not may_copy:
        raise argument_error(f"{name} (shape {v.shape}, strides {v.strides}): its leading dimensions do not fold into "
                             "rows; make it contiguous")
    return _rows_folded(_host_copy(v, name, "its leading dimensions do not fold into rows without a copy"), name, False)


def _stored(v: View, transposed: bool) -> View:
    """The row-major matrix a transposed-stored operand is the transpose of."""
    if not transposed:
        return v
    return v._replace(shape=v.shape[:-2] + (v.shape[-1], v.shape[-2]),
                      strides=v.strides[:-2] + (v.strides[-1], v.strides[-2]))


def _batched_view(mat: _Mat, batch: int) -> View:
    """What Plan.execute takes: the matrix, or (batch, rows, cols) with the batch stride."""
    if batch == 1 or mat.stride == 0:
        return mat.view
    v = mat.view
    return v._replace(shape=(batch,) + v.shape, strides=(mat.stride,) + v.strides)


# matmul's and linear's hot path (_hotpath) for the default contexts, by signature; a Context
# given to them keeps its own (Context._calls).
_calls: Dict[tuple, _hotpath.Call] = {}


def _hot_table(context: Optional["Context"]) -> Optional[Dict[tuple, _hotpath.Call]]:
    return _calls if context is None else getattr(context, "_calls", None)


def _remember_call(table, key, plan: "Plan", launch: _Launch, a, b, c, out, bias, stream, workspace, device: str,
                   allocation: Optional[tuple]) -> None:
    """matmul's and linear's call for their hot path: how the result is allocated (``allocation``:
    the _allocator arguments, None when ``out`` was given) and the workspace, when the plan needs
    one and none was given."""
    alloc = _allocator(*allocation) if allocation is not None else None
    ws_alloc = None
    if workspace is None and plan.workspace_size:
        ws_alloc = functools.partial(_allocate_workspace, nbytes=plan.workspace_size, device=device)
    _hotpath.remember(table, key, plan, launch, a, b, c, out, bias, stream=stream, alloc=alloc, ws_alloc=ws_alloc)


def _run(*, like, device, a: _Mat, b: _Mat, c: Optional[_Mat], d: _Mat, batch: int, trans_a: bool, trans_b: bool,
         m: int, n: int, k: int, epi: _Epilogue, d_name: str, activation, alpha, beta, stream, workspace, context,
         scales: Optional[Dict[str, Tuple[Scale, View]]] = None, amax: ArrayLike = None) -> Tuple["Plan", _Launch]:
    """Plans (cached) and executes one (batched) GEMM on checked 2-D operand views; returns the plan
    and the call it made. ``scales``: the input / output scale tensors (DGEMM_1.1) by "a", "b",
    "d", each described by its own geometry."""
    scales = scales or {}
    scale_of = {name: scales[name][0] if name in scales else None for name in ("a", "b", "d")}

    def packed(mat: _Mat, name: str, why: str) -> _Mat:
        full = _host_copy(_batched_view(mat, batch), name, why)
        return _Mat(full._replace(shape=full.shape[-2:], strides=full.strides[-2:]),
                    full.strides[0] if len(full.shape) == 3 else 0)

    layouts = {}
    for name, mat in (("a", a), ("b", b)):
        layout = matrix_layout(mat.view)
        if layout is None:
            mat = packed(mat, name, "neither of its last two dimensions is contiguous")
            layout = matrix_layout(mat.view)
        layouts[name] = (mat, layout)
    (a, (a_t, lda)), (b, (b_t, ldb)) = layouts["a"], layouts["b"]
    op_a, op_b = bool(trans_a) != a_t, bool(trans_b) != b_t
    ldc = 0
    if c is not None:
        c_layout = matrix_layout(c.view)
        if c_layout is None or c_layout[0]:
            c = packed(c, "c", "it is not row-major")
            c_layout = matrix_layout(c.view)
        ldc = c_layout[1]
    d_layout = matrix_layout(d.view)
    if d_layout is None or d_layout[0]:
        raise argument_error("out must be row-major (unit column stride)")
    if batch > 1 and d.stride == 0:
        raise argument_error("out cannot broadcast over the batch")
    a_dtype, b_dtype = a.view.dtype, b.view.dtype
    c_dtype = c.view.dtype if c is not None else d_name
    ctx = context if context is not None else _context_for(device)
    key = (m, n, k, a_dtype, b_dtype, c_dtype, d_name, op_a, op_b, lda, ldb, ldc, d_layout[1], batch,
           a.stride if batch > 1 else 0, b.stride if batch > 1 else 0, c.stride if c is not None and batch > 1 else 0,
           d.stride if batch > 1 else 0, epi.bias.dtype if epi.bias is not None else None, activation, beta != 0.0,
           epi.scale_mode, epi.zero_point is not None, scale_of["a"], scale_of["b"], scale_of["d"], amax is not None)
    plan = ctx._cached_plan(key, lambda: ctx.plan(
        m, n, k, a_dtype, b_dtype=b_dtype, out_dtype=d_name, c_dtype=c_dtype, trans_a=op_a, trans_b=op_b, lda=lda,
        ldb=ldb, ldc=ldc, ldd=key[12], batch=batch, stride_a=key[14], stride_b=key[15], stride_c=key[16],
        stride_d=key[17], bias=key[18], activation=activation, beta=1.0 if beta else 0.0, scale=epi.scale_mode,
        zero_point=epi.zero_point is not None, a_scale=scale_of["a"], b_scale=scale_of["b"], d_scale=scale_of["d"],
        amax=amax is not None))
    ws = workspace
    if plan.workspace_size and ws is None:
        ws = _allocate_workspace(like, plan.workspace_size, device)
    # The plan checks the views against its layout; transposed-stored operands are passed as the
    # row-major matrices they are transposes of. Scale tensors go as addresses: the plan's scale
    # descriptions are these arrays' own geometry by construction (``scales`` keeps them alive).
    addresses = {f"{name}_scale": v.ptr for name, (_, v) in scales.items()}
    launch = plan._prepare(_stored(_batched_view(a, batch), a_t), _stored(_batched_view(b, batch), b_t),
                           _batched_view(d, batch), c=_batched_view(c, batch) if c is not None else None,
                           bias=epi.bias, alpha=alpha, beta=beta, scale=epi.scale, zero_point=epi.zero_point,
                           workspace=ws, stream=stream, amax=amax, **addresses)
    plan._launch(launch)
    return plan, launch


def matmul(a: ArrayLike, b: ArrayLike, *, bias: ArrayLike = None, activation: Optional[str] = None,
           alpha: float = 1.0, beta: float = 0.0, c: ArrayLike = None, out_dtype: Any = None, trans_a: bool = False,
           trans_b: bool = False, out: ArrayLike = None, stream: Any = None, workspace: ArrayLike = None,
           context: Optional[Context] = None, scale: ArrayLike = None, zero_point: ArrayLike = None,
           a_scale: ArrayLike = None, b_scale: ArrayLike = None, a_scale_mode: Optional[str] = None,
           b_scale_mode: Optional[str] = None, d_scale: Union[str, ArrayLike, None] = None,
           amax: ArrayLike = None) -> Union[ArrayLike, Tuple[ArrayLike, ArrayLike]]:
    """``quantize(act(alpha * op(a) @ op(b) + beta * c + bias) * scale)`` in one call.

    ``a``, ``b`` (and ``c``, ``bias``, ``out``) are NumPy arrays (CPU backend; bf16/fp8 through
    ml_dtypes) or GPU arrays exposing ``__cuda_array_interface__`` or DLPack (PyTorch, CuPy).
    Shapes follow ``torch.matmul``: a 1-D ``a`` is a row vector and a 1-D ``b`` a column vector
    (the dimension is dropped from the result); dimensions before the last two are batch
    dimensions and broadcast against each other, where each operand either spans the whole batch
    with evenly stepping batch strides or is one matrix shared by it (DeepGEMM takes one batch
    stride per operand; anything else is a clear ``deepgemm.ArgumentError``). A batch against one
    shared weight is folded into the rows of a single GEMM whenever the memory allows it (the
    usual case: (B, S, K) @ (K, N) runs as one (B*S) x N x K GEMM, not B small ones).

    ``op(x)`` is ``x.T`` (of the last two dimensions) when ``trans_x``; ``bias`` is a vector of
    length n added to every row; ``activation`` is None, "relu", "gelu" (erf, as torch's default),
    "gelu_tanh" or "silu". GPU work is enqueued on the operands' current stream (or ``stream``) and
    not waited for. Plans are cached per context and shape. ``out`` receives the result (allocated
    like ``a`` when None); ``workspace`` is scratch memory for plans that need some.

    ``scale`` (float32) multiplies the result before it is converted to ``out_dtype``: a number or
    one element (per tensor), a vector of length n or shape (1, n) (per column), or shape (m, 1)
    (per row). ``zero_point`` (int32, int8 outputs only) is added after rounding, with the scale's
    shape (a number is repeated; without ``scale`` the scale is 1). On the CPU backend int8 and
    FP8 (ml_dtypes) outputs round to nearest even and saturate.

    Input scaling (FP8 / INT8; deepgemm.h "DGEMM_1.1: input scaling"): ``a_scale`` and
    ``b_scale`` multiply op(a) and op(b). Their mode comes from their shape, K = op(a)'s columns,
    KB = ceil(K / 128): a number or one element is per tensor; for ``a_scale`` (m,) or (m, 1) is
    per row (per token), (m, KB) one scale per row per 128 of K (DeepGEMM's 1 x 128), and
    (ceil(m/128), KB) per 128 x 128 block; for ``b_scale`` (n,) or (1, n) is per column (per
    output channel), (n, KB) 1 x 128 and (ceil(n/128), KB) 128 x 128 (DeepGEMM's weight
    scales). ``a_scale_mode`` / ``b_scale_mode`` ("per_tensor", "outer_vec", "vec128",
    "blk128x128") override the inference where a shape is ambiguous. float32 arrays are f32
    scales; uint8 (or float8_e8m0fnu) arrays are UE8M0 exponents (2^(e - 127)). Either storage
    order works (a C-contiguous (m, KB) array, or DeepGEMM's transposed MN-major one); leading
    batch dimensions (the result's) give one tensor per matrix of the batch.
    ``d_scale`` ("float32" or "ue8m0", or an (m, ceil(n/128)) array to fill) quantizes an FP8
    ``out_dtype`` in 1 x 128 blocks with scales computed here: the call then returns
    ``(out, d_scale)``, the scales shaped and laid out to be the next call's ``a_scale``
    (allocated MN-major with m padded to 16 bytes, the layout the GPU reads fastest). ``amax``,
    a one-element float32 array, receives max |y| before the output scale and quantization.
    """
    table = key = None
    if workspace is None and scale is None and zero_point is None and a_scale is None and b_scale is None and \
            d_scale is None and amax is None and type(alpha) in (int, float) and type(beta) in (int, float):
        table = _hot_table(context)
    if table is not None:
        try:
            key = ("matmul", signature(a), signature(b), signature(c), signature(bias), signature(out), activation,
                   out_dtype, bool(trans_a), bool(trans_b), beta != 0)
        except Exception:  # an option that has no truth value: the full path says what is wrong
            key = None
        call = _hotpath.lookup(table, key)
        handle = call.plan._handle if call is not None else None
        if handle is not None:
            if out is None:
                out = call.alloc()
            call.run(handle, a, b, c, out, bias, alpha, beta, stream, like=a)
            return out
    out_given = out is not None
    va, vb = as_view(a), as_view(b)
    if va.device != vb.device:
        raise argument_error(f"a is on {va.device} and b on {vb.device}")
    device = va.device
    if not va.shape or not vb.shape:
        raise argument_error(f"matmul needs operands of at least one dimension, got shapes {va.shape} and {vb.shape}")
    row_vector, column_vector = len(va.shape) == 1, len(vb.shape) == 1
    if (row_vector and trans_a) or (column_vector and trans_b):
        raise argument_error("a 1-D operand cannot be transposed (trans_a / trans_b need a matrix)")
    if row_vector:
        va = _with_unit_dim(va, 0)
    if column_vector:
        vb = _with_unit_dim(vb, 1)
    m, k = (va.shape[-1], va.shape[-2]) if trans_a else (va.shape[-2], va.shape[-1])
    kb, n = (vb.shape[-1], vb.shape[-2]) if trans_b else (vb.shape[-2], vb.shape[-1])
    if k != kb:
        raise argument_error(f"inner dimensions differ: op(a) is {m}x{k}, op(b) is {kb}x{n}")
    batch_shape = _broadcast(va.shape[:-2], vb.shape[:-2], "a and b")
    batch = _count(batch_shape)
    matrix_shape = (() if row_vector else (m,)) + (() if column_vector else (n,))
    out_shape = batch_shape + matrix_shape

    def as_matrices(v: View) -> View:  # a result-shaped view with the dropped dimensions put back
        if row_vector:
            v = _with_unit_dim(v, len(v.shape) - len(matrix_shape))
        if column_vector:
            v = _with_unit_dim(v, len(v.shape))
        return v

    mat_a = _matrix(va, batch_shape, "a")
    mat_b = _matrix(vb, batch_shape, "b")

    beta = float(beta)
    mat_c = None
    if beta != 0.0:
        if c is None:
            raise argument_error("beta != 0 needs c")
        vc = as_view(c)
        split = len(vc.shape) - len(matrix_shape)
        if split < 0 or tuple(vc.shape[split:]) != matrix_shape:
            raise argument_error(f"c has shape {vc.shape}, expected {out_shape} or a shape that broadcasts to it")
        mat_c = _matrix(as_matrices(vc), batch_shape, "c")
    elif c is not None:
        raise argument_error("c is only read when beta != 0")

    d_name = dtype_name(out_dtype) if out_dtype is not None else _default_out(va.dtype)
    out, vd = _output(out, a, out_shape, d_name, device)
    mat_d = _matrix(as_matrices(vd), batch_shape, "out", may_copy=False)
    epi = _epilogue_values(bias, scale, zero_point, m, n, device)

    # Input scales: their modes from their shapes (checked here, where the shapes are known).
    scales: Dict[str, Tuple[Scale, View]] = {}
    for name, x, outer, inner, mode in (("a", a_scale, m, k, a_scale_mode), ("b", b_scale, n, k, b_scale_mode),
                                        ("d", d_scale, m, n, "vec128")):
        if x is None:
            continue
        if name == "d" and isinstance(x, str):
            if x not in _scaling.TYPES:
                raise argument_error(f"d_scale {x!r}: expected 'float32', 'ue8m0' or an array")
            x = d_scale = _allocate_block_scales(out, batch_shape, m, n, x, device)
        v = _scale_view(_scaling.view_of(x, f"{name}_scale", device), batch_shape, f"{name}_scale")
        if v.device != device:
            raise argument_error(f"{name}_scale is on {v.device} but the operands are on {device}")
        scales[name] = (_scaling.infer(v, outer, inner, f"{name}_scale", mode, batch), v)

    # One weight shared by the whole batch: the batch is a block of rows of one GEMM when A, C and
    # D store their matrices one after the other, row by row (and no epilogue value or scale is
    # per row or per matrix of the batch).
    scales_fold = all(s.stride == 0 for s, _ in scales.values()) and "d" not in scales and \
        ("a" not in scales or scales["a"][0].mode == "per_tensor")
    if batch > 1 and mat_b.stride == 0 and not trans_a and epi.scale_mode != "per_row" and scales_fold:
        folded = [_batch_as_rows(mat, m, batch) for mat in (mat_a, mat_d) + ((mat_c,) if mat_c is not None else ())]
        if all(f is not None for f in folded):
            mat_a, mat_d = folded[0], folded[1]
            mat_c = folded[2] if mat_c is not None else None
            m, batch = batch * m, 1

    plan, launch = _run(like=a, device=device, a=mat_a, b=mat_b, c=mat_c, d=mat_d, batch=batch, trans_a=trans_a,
                        trans_b=trans_b, m=m, n=n, k=k, epi=epi, d_name=d_name, activation=activation, alpha=alpha,
                        beta=beta, stream=stream, workspace=workspace, context=context, scales=scales, amax=amax)
    if key is not None:
        _remember_call(table, key, plan, launch, a, b, c, out, bias, stream, workspace, device,
                       None if out_given else (a, out_shape, d_name, device))
    return (out, d_scale) if d_scale is not None else out


def _scale_view(v: View, batch_shape: Tuple[int, ...], name: str) -> View:
    """A scale array with its batch dimensions (all but the last two) folded into one, as the
    plan's batch stride addresses them: (batch, rows, cols), or the one matrix shared by all."""
    while len(v.shape) > 2 and v.shape[0] == 1:  # leading unit dimensions: one tensor for the batch
        v = v._replace(shape=v.shape[1:], strides=v.strides[1:])
    if len(v.shape) <= 2:
        return v
    mat = _matrix(v, batch_shape, name, may_copy=False)
    return _batched_view(mat, _count(batch_shape))


def _allocate_block_scales(like, batch_shape: Tuple[int, ...], m: int, n: int, scale_type: str, device: str):
    """D's 1 x 128 block scales, batch_shape + (m, ceil(n/128)), MN-major with m padded to 16
    bytes: the layout the GPU kernels read fastest, and the next layer's a_scale as it is."""
    dtype = "float32" if scale_type == "float32" else "uint8"
    pad = 4 if dtype == "float32" else 16
    ld = -(-max(m, 1) // pad) * pad
    nb = -(-n // 128)
    storage = _allocate(like, tuple(batch_shape) + (nb, ld), dtype, device)
    return storage[..., :m].swapaxes(-1, -2)


def linear(x: ArrayLike, weight: ArrayLike, bias: ArrayLike = None, *, activation: Optional[str] = None,
           out: ArrayLike = None, stream: Any = None, workspace: ArrayLike = None,
           context: Optional[Context] = None) -> ArrayLike:
    """``act(x @ weight.T + bias)`` with ``torch.nn.functional.linear``'s shapes: ``x`` is
    (..., in_features), ``weight`` (out_features, in_features), ``bias`` (out_features,), the
    result (..., out_features). Every leading dimension of ``x`` is folded into the rows of one
    GEMM (M = the product of the leading dimensions). ``activation``: None, "relu", "gelu" (erf),
    "gelu_tanh", "silu".

    With torch imported and a torch tensor ``x`` (and no ``out``/``stream``/``workspace``/
    ``context``), the call goes through the custom operator ``torch.ops.deepgemm.linear``, so it
    works inside ``torch.compile`` and CUDA-graph capture (see ``register_torch_ops``); in plain
    eager mode, where the operator would only add the dispatcher's cost, it is skipped
    (``_torch.direct`` says when).
    """
    if out is None and stream is None and workspace is None and context is None:
        # Only module attributes and isinstance here: torch.compile traces this far, then records
        # the custom operator as one opaque node.
        if _torch.op is not None and isinstance(x, _torch.tensor_type):
            act = activation or "none"
            if _torch.direct(x, weight, bias, act):  # what the operator would run, without its cost
                return _linear(x, weight, bias, activation=None if act == "none" else act)
            return _torch.op(x, weight, bias, act)
        if _torch.op is None and _torch.is_torch_tensor(x):  # first call, eager: register now
            return _torch.register_torch_ops()(x, weight, bias, activation or "none")
    return _linear(x, weight, bias, activation=activation, out=out, stream=stream, workspace=workspace,
                   context=context)


def _linear(x, weight, bias=None, *, activation=None, out=None, stream=None, workspace=None, context=None):
    table = _hot_table(context) if workspace is None else None
    key = None
    if table is not None:
        key = ("linear", signature(x), signature(weight), signature(bias), signature(out), activation)
        call = _hotpath.lookup(table, key)
        handle = call.plan._handle if call is not None else None
        if handle is not None:
            if out is None:
                out = call.alloc()
            call.run(handle, x, weight, None, out, bias, stream=stream, like=x)
            return out
    out_given = out is not None
    vx, vw = as_view(x), as_view(weight)
    if vx.device != vw.device:
        raise argument_error(f"x is on {vx.device} and weight on {vw.device}")
    if len(vw.shape) != 2:
        raise argument_error(f"weight has shape {vw.shape}; expected (out_features, in_features)")
    if not vx.shape or vx.shape[-1] != vw.shape[1]:
        raise argument_error(f"x has shape {vx.shape}, weight {vw.shape}: x's last dimension must be in_features "
                             f"= {vw.shape[1]}")
    device = vx.device
    n, k = vw.shape
    out_shape = tuple(vx.shape[:-1]) + (n,)
    rows = _rows_folded(vx, "x")
    m = rows.shape[0]
    d_name = _default_out(vx.dtype)
    out, vd = _output(out, x, out_shape, d_name, device)
    d_rows = _rows_folded(vd, "out", may_copy=False)
    epi = _epilogue_values(bias, None, None, m, n, device)
    plan, launch = _run(like=x, device=device, a=_Mat(rows, 0), b=_Mat(vw, 0), c=None, d=_Mat(d_rows, 0), batch=1,
                        trans_a=False, trans_b=True, m=m, n=n, k=k, epi=epi, d_name=d_name, activation=activation,
                        alpha=1.0, beta=0.0, stream=stream, workspace=workspace, context=context)
    if key is not None:
        _remember_call(table, key, plan, launch, x, weight, None, out, bias, stream, workspace, device,
                       None if out_given else (x, out_shape, d_name, device))
    return out
