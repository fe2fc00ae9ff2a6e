"""The idiomatic layer over the SWIG module ``deepgemm.capi``: exceptions instead of status codes,
``Context`` and ``Plan`` objects that free their handles, and ``matmul`` for one-call use.
"""
import collections
import enum
import json
import sys
import threading
from typing import Optional

from . import capi
from ._tensors import (DTYPE_CODES, FLOAT_TYPES, ITEMSIZE, View, as_view, batch_stride, dtype_name,
                       matrix_layout)

# Status codes, taken from the generated module so they can never drift from deepgemm.h.
Status = enum.IntEnum("Status", sorted(((k[len("DGEMM_STATUS_"):], getattr(capi, k))
                                        for k in dir(capi) if k.startswith("DGEMM_STATUS_")), key=lambda kv: kv[1]))


class Error(Exception):
    """A failed DeepGEMM call: ``status`` (a :class:`Status`) and the library's ``message``."""

    def __init__(self, status, message):
        try:
            status = Status(status)
        except ValueError:
            pass
        self.status = status
        self.message = message
        super().__init__(status, message)

    def __str__(self):
        name = self.status.name if isinstance(self.status, Status) else str(self.status)
        return f"{name}: {self.message}"


def _check(status):
    if status != capi.DGEMM_STATUS_SUCCESS:
        raise Error(status, capi.dgemm_last_error())


ACTIVATIONS = {
    None: capi.DGEMM_ACT_NONE,
    "none": capi.DGEMM_ACT_NONE,
    "relu": capi.DGEMM_ACT_RELU,
    "gelu": capi.DGEMM_ACT_GELU_ERF,  # torch.nn.functional.gelu's default
    "gelu_erf": capi.DGEMM_ACT_GELU_ERF,
    "gelu_tanh": capi.DGEMM_ACT_GELU_TANH,
    "silu": capi.DGEMM_ACT_SILU,
}

# Output scale modes (deepgemm.h dgemm_vector_mode_t) by the names Context.plan takes.
SCALE_MODES = {
    None: capi.DGEMM_VECTOR_NONE,
    "per_tensor": capi.DGEMM_VECTOR_PER_TENSOR,
    "per_row": capi.DGEMM_VECTOR_PER_ROW,
    "per_column": capi.DGEMM_VECTOR_PER_COLUMN,
}


def version() -> str:
    """The version of the loaded libdeepgemm ("MAJOR.MINOR.PATCH")."""
    return capi.dgemm_version_string()


def _parse_device(device):
    if isinstance(device, int):
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
    raise ValueError(f"device {device!r}: expected 'auto', 'cpu', 'cuda', 'cuda:N' or an int")


class _Handle:
    """Owner of one library handle (self._handle): `with` support, and close() when collected."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

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

    def __init__(self, device="auto"):
        kind, index = _parse_device(device)
        cell = capi.new_context_cell()
        try:
            _check(capi.dgemm_context_create(kind, index, cell))
            self._handle = capi.context_cell_value(cell)
        finally:
            capi.delete_context_cell(cell)
        kind_cell, index_cell = capi.new_device_kind_cell(), capi.new_int_cell()
        try:
            _check(capi.dgemm_context_device(self._handle, kind_cell, index_cell))
            kind = capi.device_kind_cell_value(kind_cell)
            self.device = "cpu" if kind == capi.DGEMM_DEVICE_CPU else f"cuda:{capi.int_cell_value(index_cell)}"
        finally:
            capi.delete_device_kind_cell(kind_cell)
            capi.delete_int_cell(index_cell)
        self._lock = threading.Lock()
        self._cache = collections.OrderedDict()  # matmul's plans, least recently used first

    def __repr__(self):
        return f"deepgemm.Context({self.device!r})"

    @property
    def handle(self):
        if self._handle is None:
            raise ValueError("the context is closed")
        return self._handle

    def plan(self, m, n, k, dtype="float32", *, b_dtype=None, out_dtype=None, c_dtype=None, trans_a=False,
             trans_b=False, lda=0, ldb=0, ldc=0, ldd=0, batch=1, stride_a=0, stride_b=0, stride_c=0,
             stride_d=0, bias=None, bias_per_row=False, activation=None, alpha=1.0, beta=0.0,
             column_major=False, force_kernel=None, arch_file=None, autotune=False, scale=None,
             zero_point=False, saturate=True):
        """Plans ``D = quantize(act(alpha * op(A) @ op(B) + beta * C + bias) * scale)`` for one shape
        (see deepgemm.h).

        ``dtype`` is A's element type (``b_dtype`` defaults to it); ``out_dtype`` defaults to A's
        type for float inputs, bfloat16 for FP8 and int32 for int8; ``bias`` is the bias vector's
        dtype (None: no bias), per column (length n) unless ``bias_per_row``. Leading dimensions
        and batch strides are in elements, 0 meaning packed. ``scale`` is the output scale's mode
        (None, "per_tensor", "per_row" or "per_column"; the float32 vector itself is given to each
        execute); ``zero_point`` adds an int32 zero point per scale entry (int8 outputs);
        ``saturate`` clamps FP8 outputs to the largest finite value instead of overflowing.
        """
        a_name = dtype_name(dtype)
        b_name = dtype_name(b_dtype) if b_dtype is not None else a_name
        d_name = dtype_name(out_dtype) if out_dtype is not None else _default_out(a_name)
        c_name = dtype_name(c_dtype) if c_dtype is not None else d_name
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation {activation!r}: expected one of {[a for a in ACTIVATIONS if a]}")
        if scale not in SCALE_MODES:
            raise ValueError(f"scale {scale!r}: expected one of {[s for s in SCALE_MODES if s]} or None")
        p = capi.dgemm_problem_t()
        _check(capi.dgemm_problem_init(p))
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
        _check(capi.dgemm_epilogue_init(e))
        e.alpha, e.beta = float(alpha), float(beta)
        if bias is not None:
            e.bias_mode = capi.DGEMM_VECTOR_PER_ROW if bias_per_row else capi.DGEMM_VECTOR_PER_COLUMN
            e.bias_type = DTYPE_CODES[dtype_name(bias)]
        e.activation = ACTIVATIONS[activation]
        e.scale_mode = SCALE_MODES[scale]
        # The library validates the combination (a zero point without a scale, or on a non-int8
        # output, is its INVALID_ARGUMENT / NOT_SUPPORTED, not ours to restate).
        e.flags = (capi.DGEMM_EPILOGUE_SATURATE if saturate else 0) | (capi.DGEMM_EPILOGUE_ZERO_POINT if zero_point else 0)
        o = None
        if force_kernel is not None or arch_file is not None or autotune:
            o = capi.dgemm_plan_options_t()
            _check(capi.dgemm_plan_options_init(o))
            if force_kernel is not None:
                o.force_kernel = force_kernel
            if arch_file is not None:
                o.arch_file = str(arch_file)
            if autotune:
                o.flags = capi.DGEMM_PLAN_AUTOTUNE
        cell = capi.new_plan_cell()
        try:
            _check(capi.dgemm_create_plan(self.handle, p, e, o, cell))
            handle = capi.plan_cell_value(cell)
        finally:
            capi.delete_plan_cell(cell)
        return Plan(self, handle, p, e, (a_name, b_name, c_name, d_name,
                                         dtype_name(bias) if bias is not None else None))

    def close(self):
        """Frees the context (and the plans matmul cached on it). Error if other plans are alive."""
        if self._handle is None:
            return
        with self._lock:
            cached = list(self._cache.values())
            self._cache.clear()
        for plan in cached:
            plan.close()
        _check(capi.dgemm_context_destroy(self._handle))
        self._handle = None

    def _cached_plan(self, key, make):
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


def _default_out(a_name):
    if a_name in FLOAT_TYPES:
        return a_name
    return "int32" if a_name == "int8" else "bfloat16"


class Plan(_Handle):
    """A planned GEMM. ``execute`` only launches (or, on the CPU, computes) and may be called
    from several threads at once. ``describe()`` says which kernel was chosen and why."""

    def __init__(self, context, handle, problem, epilogue, dtypes):
        self.context = context  # keeps the context alive as long as the plan
        self._handle = handle
        self._p = problem
        self._e = epilogue
        self.a_dtype, self.b_dtype, self.c_dtype, self.out_dtype, self.bias_dtype = dtypes
        cell = capi.new_size_cell()
        try:
            _check(capi.dgemm_plan_workspace_size(handle, cell))
            self.workspace_size = capi.size_cell_value(cell)
        finally:
            capi.delete_size_cell(cell)

    @property
    def shape(self):
        return self._p.m, self._p.n, self._p.k

    def describe(self) -> dict:
        """The plan's JSON description (backend, family, tile, predicted time, rejected candidates)."""
        import ctypes

        cell = capi.new_size_cell()
        try:
            _check(capi.dgemm_plan_describe(self._live(), None, 0, cell))
            size = capi.size_cell_value(cell)
        finally:
            capi.delete_size_cell(cell)
        buf = ctypes.create_string_buffer(size)
        _check(capi.dgemm_plan_describe(self._live(), ctypes.addressof(buf), size, None))
        return json.loads(buf.value.decode())

    def _live(self):
        if self._handle is None:
            raise ValueError("the plan is closed")
        return self._handle

    def _operand(self, name, x, dtype, rows, cols, ld, stride, optional=False):
        """Checks an array against what the plan will read or write; returns (address, view)."""
        if x is None:
            if optional:
                return None, None
            raise ValueError(f"{name} is required")
        if isinstance(x, int):  # a raw address: the caller vouches for it
            return x, None
        v = as_view(x)
        where = "cpu" if self.context.device == "cpu" else self.context.device
        if v.device != where:
            raise ValueError(f"{name} is on {v.device} but the plan runs on {where}")
        if v.dtype != dtype:
            raise TypeError(f"{name} has dtype {v.dtype}, the plan expects {dtype}")
        column_major = self._p.order == capi.DGEMM_ORDER_COL_MAJOR
        stored = (cols, rows) if column_major else (rows, cols)
        batch = self._p.batch_count
        if v.shape[-2:] != stored or len(v.shape) not in (2, 3) or (len(v.shape) == 3 and v.shape[0] not in (1, batch)):
            want = stored if stride == 0 else (batch,) + stored
            raise ValueError(f"{name} has shape {v.shape}, the plan expects {want}")
        layout = matrix_layout(v)
        if layout is None or layout[0] or layout[1] != (ld or stored[1]):
            raise ValueError(f"{name} has strides {v.strides} (elements); the plan expects row stride "
                             f"{ld or stored[1]} and unit column stride")
        if len(v.shape) == 2 or v.shape[0] == 1:
            if stride != 0 and batch > 1:
                raise ValueError(f"{name} is one matrix but the plan expects a batch of {batch} with stride {stride}")
        elif v.strides[0] != stride:
            raise ValueError(f"{name} has batch stride {v.strides[0]}, the plan expects {stride}")
        return v.ptr, v

    @property
    def scale_length(self):
        """How many entries the output scale (and zero point) has: 0 without a scale."""
        mode = self._e.scale_mode
        if mode == capi.DGEMM_VECTOR_PER_TENSOR:
            return 1
        if mode == capi.DGEMM_VECTOR_PER_ROW:
            return self._p.m
        if mode == capi.DGEMM_VECTOR_PER_COLUMN:
            return self._p.n
        return 0

    def _vector(self, name, x, dtype, length, keep):
        """Address of an execute-time vector (scale, zero point, device alpha/beta) after checking
        it. The C library takes bare pointers and cannot see a length, so a wrong one is reported
        here with the status the library gives a bad argument (INVALID_ARGUMENT)."""
        if isinstance(x, int) and not isinstance(x, bool):  # a raw address: the caller vouches for it
            return x
        v = as_view(x)
        where = "cpu" if self.context.device == "cpu" else self.context.device
        if v.device != where:
            raise ValueError(f"{name} is on {v.device} but the plan runs on {where}")
        if v.dtype != dtype:
            raise TypeError(f"{name} has dtype {v.dtype}, the plan expects {dtype}")
        count = _count(v.shape)
        if count != length:
            raise Error(Status.INVALID_ARGUMENT, f"{name} has {count} elements, the plan reads {length}")
        # Contiguous: every dimension but those of extent 1 steps like a packed array.
        expected = 1
        for extent, stride in reversed(list(zip(v.shape, v.strides))):
            if extent > 1 and stride != expected:
                raise ValueError(f"{name} must be contiguous, got shape {v.shape} strides {v.strides}")
            expected *= extent
        keep.append(v)
        return v.ptr

    def execute(self, a, b, d, c=None, *, bias=None, alpha=None, beta=None, scale=None, zero_point=None,
                workspace=None, stream=None):
        """Runs the plan: ``d`` receives the result. Arrays are checked against the plan (dtype,
        device, shape, strides); ints are taken as raw addresses. ``stream`` (CUDA) defaults to
        the stream of the operands (the torch current stream, or __cuda_array_interface__'s).

        ``alpha``/``beta``: None (the plan's), numbers (this call's host values), or one-element float32
        arrays in the plan's memory, read when the kernel runs (DGEMM_SCALARS_DEVICE: give alpha,
        and beta too when the plan reads C). ``scale``: the float32 output scale (1, m or n entries
        as planned); ``zero_point``: the int32 zero point, as many entries as the scale."""
        p = self._p
        ta, tb = p.op_a == capi.DGEMM_OP_T, p.op_b == capi.DGEMM_OP_T
        a_ptr, va = self._operand("a", a, self.a_dtype, *((p.k, p.m) if ta else (p.m, p.k)), p.lda, p.stride_a)
        b_ptr, vb = self._operand("b", b, self.b_dtype, *((p.n, p.k) if tb else (p.k, p.n)), p.ldb, p.stride_b)
        reads_c = self._e.beta != 0
        c_ptr, vc = self._operand("c", c, self.c_dtype, p.m, p.n, p.ldc, p.stride_c, optional=not reads_c)
        d_ptr, vd = self._operand("d", d, self.out_dtype, p.m, p.n, p.ldd, p.stride_d)
        args = capi.dgemm_args_t()
        _check(capi.dgemm_args_init(args))
        keep = [va, vb, vc, vd]
        if _is_tensor(alpha) or _is_tensor(beta):
            if not _is_tensor(alpha) or (reads_c and not _is_tensor(beta)) or (beta is not None and not _is_tensor(beta)):
                raise ValueError("device scalars: give alpha as a one-element float32 array, and beta too "
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
                raise ValueError("the plan has no output scale")
            args.scale = self._vector("scale", scale, "float32", length, keep)
        if zero_point is not None:
            if not self._e.flags & capi.DGEMM_EPILOGUE_ZERO_POINT:
                raise ValueError("the plan has no zero point")
            args.zero_point = self._vector("zero_point", zero_point, "int32", length, keep)
        if bias is not None:
            if isinstance(bias, int):
                args.bias = bias
            else:
                vbias = as_view(bias)
                length = p.m if self._e.bias_mode == capi.DGEMM_VECTOR_PER_ROW else p.n
                if self.bias_dtype is None:
                    raise ValueError("the plan has no bias")
                if vbias.dtype != self.bias_dtype or vbias.shape != (length,) or (length > 1 and vbias.strides[0] != 1):
                    raise ValueError(f"bias must be a contiguous {self.bias_dtype} vector of length {length}, "
                                     f"got {vbias.dtype} {vbias.shape} strides {vbias.strides}")
                args.bias = vbias.ptr
                keep.append(vbias)
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
        stream = getattr(stream, "cuda_stream", getattr(stream, "ptr", stream))  # torch / cupy stream objects
        _check(capi.dgemm_execute(self._live(), a_ptr, b_ptr, c_ptr, d_ptr, args, ws_ptr, ws_size, int(stream)))
        del keep
        return d

    def close(self):
        if self._handle is not None:
            handle, self._handle = self._handle, None
            _check(capi.dgemm_destroy_plan(handle))


def _is_tensor(x):
    """An execute-time scalar given as memory (an array / tensor), not a number. Python ints are
    numbers here (alpha=2), never raw addresses."""
    if x is None or isinstance(x, (int, float)):
        return False
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(x, numpy.generic):
        return False  # numpy.float32(2.0) is a host value
    return True


def _count(shape):
    n = 1
    for s in shape:
        n *= s
    return n


# ---------------------------------------------------------------------------------------------
_contexts = {}
_contexts_lock = threading.Lock()


def _context_for(device: str) -> Context:
    with _contexts_lock:
        ctx = _contexts.get(device)
        if ctx is None:
            ctx = _contexts[device] = Context(device)
        return ctx


def _allocate(like, shape, dtype: str, device: str):
    """A new array for an output or workspace, from the library that made ``like``."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(like, torch.Tensor):
        return torch.empty(shape, dtype=getattr(torch, dtype), device=like.device)
    if device == "cpu":
        import numpy

        if dtype in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
            import ml_dtypes

            return numpy.empty(shape, dtype=getattr(ml_dtypes, dtype))
        return numpy.empty(shape, dtype=dtype)
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(like, cupy.ndarray):
        if dtype not in ("float32", "float16", "int8", "int32"):
            raise TypeError(f"CuPy has no {dtype}: pass out=")
        with cupy.cuda.Device(like.device.id):
            return cupy.empty(shape, dtype=dtype)
    raise TypeError(f"cannot allocate a result like a {type(like).__name__}: pass out=")


def _allocate_workspace(like, nbytes, device: str):
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
    raise TypeError(f"this plan needs {nbytes} bytes of {device} workspace: pass workspace=")


def _host_copy(x, name):
    """A row-major copy of a NumPy operand whose layout the library cannot read directly."""
    import numpy

    if not isinstance(x, numpy.ndarray):
        raise ValueError(f"{name}: neither of the last two dimensions is contiguous; make it contiguous first")
    return numpy.ascontiguousarray(x)


def _scale_mode(v, m, n):
    """The output scale mode a scale/zero-point array's shape asks for, broadcasting like NumPy
    against the (m, n) result: one element per tensor, (n,) or (1, n) per column, (m, 1) per row."""
    shape = tuple(v.shape)
    if _count(shape) == 1 and len(shape) <= 2:
        return "per_tensor"
    if shape in ((n,), (1, n)):
        return "per_column"
    if shape == (m, 1):
        return "per_row"
    raise Error(Status.INVALID_ARGUMENT, f"{'scale' if v.dtype == 'float32' else 'zero_point'} has shape {shape}; "
                f"expected one element, ({n},) / (1, {n}) per column or ({m}, 1) per row")


def _epilogue_vector(x, dtype, device):
    """A scale or zero point as a View: Python numbers become one-element host arrays."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        if device != "cpu":
            raise TypeError("a scalar scale/zero point for GPU operands must be a one-element tensor")
        import numpy

        x = numpy.array([x], dtype=dtype)
    v = as_view(x)
    if device == "cpu" and v.dtype != dtype:
        import numpy

        if isinstance(x, numpy.ndarray):  # host arrays are converted, the others must match
            if dtype == "int32" and not numpy.issubdtype(x.dtype, numpy.integer):
                raise TypeError(f"zero_point must hold integers, got {x.dtype}")
            v = as_view(numpy.ascontiguousarray(x, dtype=dtype))
    return v


def matmul(a, b, *, bias=None, activation=None, alpha=1.0, beta=0.0, c=None, out_dtype=None, trans_a=False,
           trans_b=False, out=None, stream=None, workspace=None, context=None, scale=None, zero_point=None):
    """``quantize(act(alpha * op(a) @ op(b) + beta * c + bias) * scale)`` in one call.

    ``a``, ``b`` (and ``c``, ``bias``, ``out``) are NumPy arrays (CPU backend; bf16/fp8 through
    ml_dtypes) or GPU arrays exposing ``__cuda_array_interface__`` or DLPack (PyTorch, CuPy). They
    are 2-D, or 3-D for a batch (a 2-D operand is shared by the whole batch). ``op(x)`` is
    ``x.T`` when ``trans_x``; ``bias`` is a vector of length n added to every row; ``activation``
    is None, "relu", "gelu" (erf), "gelu_tanh" or "silu". GPU work is enqueued on the operands'
    current stream (or ``stream``) and not waited for. Plans are cached per context and shape.
    ``out`` receives the result (allocated like ``a`` when None); ``workspace`` is scratch memory
    for plans that need some (allocated like ``a`` when None).

    ``scale`` (float32) multiplies the result before it is converted to ``out_dtype``: a number or
    one element (per tensor), a vector of length n or shape (1, n) (per column), or shape (m, 1)
    (per row). ``zero_point`` (int32, int8 outputs only) is added after rounding, with the scale's
    shape (a number is repeated; without ``scale`` the scale is 1). On the CPU backend int8 and
    FP8 (ml_dtypes) outputs round to nearest even and saturate.
    """
    va, vb = as_view(a), as_view(b)
    if va.device != vb.device:
        raise ValueError(f"a is on {va.device} and b on {vb.device}")
    device = va.device
    operands = {}
    for name, x, v in (("a", a, va), ("b", b, vb)):
        if len(v.shape) not in (2, 3):
            raise ValueError(f"{name} must be 2-D or 3-D (a batch), got shape {v.shape}")
        if matrix_layout(v) is None:
            x = _host_copy(x, name)
            v = as_view(x)
        operands[name] = (x, v)
    (a, va), (b, vb) = operands["a"], operands["b"]
    (a_t, lda), (b_t, ldb) = matrix_layout(va), matrix_layout(vb)
    op_a, op_b = bool(trans_a) != a_t, bool(trans_b) != b_t
    m, k = (va.shape[-1], va.shape[-2]) if trans_a else (va.shape[-2], va.shape[-1])
    kb, n = (vb.shape[-1], vb.shape[-2]) if trans_b else (vb.shape[-2], vb.shape[-1])
    if k != kb:
        raise ValueError(f"inner dimensions differ: op(a) is {m}x{k}, op(b) is {kb}x{n}")
    batches = {v.shape[0] for v in (va, vb) if len(v.shape) == 3} - {1}
    if len(batches) > 1:
        raise ValueError(f"batch sizes differ: {sorted(batches)}")
    batch = batches.pop() if batches else 1
    three_d = len(va.shape) == 3 or len(vb.shape) == 3
    out_shape = (batch, m, n) if three_d else (m, n)

    beta = float(beta)
    vc = None
    if beta != 0.0:
        if c is None:
            raise ValueError("beta != 0 needs c")
        vc = as_view(c)
        layout = matrix_layout(vc) if len(vc.shape) in (2, 3) else None
        if layout is None or layout[0]:
            c = _host_copy(c, "c")
            vc = as_view(c)
        if vc.shape[-2:] != (m, n):
            raise ValueError(f"c has shape {vc.shape}, expected (..., {m}, {n})")
    elif c is not None:
        raise ValueError("c is only read when beta != 0")

    d_name = dtype_name(out_dtype) if out_dtype is not None else _default_out(va.dtype)
    if out is None:
        out = _allocate(a, out_shape, d_name, device)
    vd = as_view(out)
    if vd.dtype != d_name:
        raise TypeError(f"out has dtype {vd.dtype}, expected {d_name}")
    if vd.shape != out_shape:
        raise ValueError(f"out has shape {vd.shape}, expected {out_shape}")
    d_layout = matrix_layout(vd)
    if d_layout is None or d_layout[0]:
        raise ValueError("out must be row-major (unit column stride)")
    if batch > 1 and vd.strides[0] == 0:
        raise ValueError("out cannot broadcast over the batch")

    vbias = None
    if bias is not None:
        vbias = as_view(bias)
        if vbias.shape != (n,):
            raise ValueError(f"bias has shape {vbias.shape}, expected ({n},)")
        if n > 1 and vbias.strides[0] != 1:
            bias = _host_copy(bias, "bias")
            vbias = as_view(bias)

    vscale = vzero = None
    scale_mode = None
    if scale is not None or zero_point is not None:
        if zero_point is not None:
            vzero = _epilogue_vector(zero_point, "int32", device)
        if scale is not None:
            vscale = _epilogue_vector(scale, "float32", device)
            scale_mode = _scale_mode(vscale, m, n)
        else:
            scale_mode = _scale_mode(vzero, m, n)
        length = {"per_tensor": 1, "per_row": m, "per_column": n}[scale_mode]
        import numpy

        if vscale is None:  # a zero point alone: unit scale
            if device != "cpu":
                raise TypeError("zero_point without scale on a GPU: pass scale too")
            vscale = as_view(numpy.ones(length, dtype=numpy.float32))
        if vzero is not None and _count(vzero.shape) == 1 and length > 1 and device == "cpu":
            vzero = as_view(numpy.full(length, numpy.asarray(vzero.owner).reshape(-1)[0], dtype=numpy.int32))
        if vzero is not None and _count(vzero.shape) != length:
            raise Error(Status.INVALID_ARGUMENT, f"zero_point has {_count(vzero.shape)} elements, the scale {length}")

    ctx = context if context is not None else _context_for(device)
    key = (m, n, k, va.dtype, vb.dtype, vc.dtype if vc is not None else d_name, d_name, op_a, op_b, lda, ldb,
           matrix_layout(vc)[1] if vc is not None else 0, d_layout[1], batch, batch_stride(va, batch),
           batch_stride(vb, batch), batch_stride(vc, batch) if vc is not None else 0, batch_stride(vd, batch),
           vbias.dtype if vbias is not None else None, activation, beta != 0.0, scale_mode, vzero is not None)
    plan = ctx._cached_plan(key, lambda: ctx.plan(
        m, n, k, va.dtype, b_dtype=vb.dtype, out_dtype=d_name, c_dtype=key[5], trans_a=op_a, trans_b=op_b,
        lda=lda, ldb=ldb, ldc=key[11], ldd=key[12], batch=batch, stride_a=key[14], stride_b=key[15],
        stride_c=key[16], stride_d=key[17], bias=key[18], activation=activation, beta=1.0 if beta else 0.0,
        scale=scale_mode, zero_point=vzero is not None))
    ws = workspace
    if plan.workspace_size and ws is None:
        ws = _allocate_workspace(a, plan.workspace_size, device)
    # The plan checks the views against its layout; transposed-stored operands are passed as the
    # row-major matrices they are transposes of.
    def stored(v, transposed):
        if not transposed:
            return v
        return v._replace(shape=v.shape[:-2] + (v.shape[-1], v.shape[-2]),
                          strides=v.strides[:-2] + (v.strides[-1], v.strides[-2]))

    plan.execute(stored(va, a_t), stored(vb, b_t), vd, vc, bias=vbias, alpha=alpha, beta=beta, scale=vscale,
                 zero_point=vzero, workspace=ws, stream=stream)
    return out
