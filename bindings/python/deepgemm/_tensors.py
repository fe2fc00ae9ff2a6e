"""Array adapters: turn NumPy arrays, objects with ``__cuda_array_interface__`` and DLPack producers
(PyTorch, CuPy, JAX, ...) into a plain description (address, shape, strides in elements, dtype
name, device, stream) that the plan code can check and pass to the C library.

Nothing here imports torch or cupy: their objects are recognised by the protocols they implement.
A torch tensor (torch is then already imported) is read directly, on torch's current CUDA stream.
"""
import ctypes
import sys
from typing import NamedTuple, Optional, Tuple

from . import capi
from ._errors import argument_error, dtype_error

# Element types the library knows, by the names NumPy/ml_dtypes and PyTorch give them.
DTYPE_CODES = {
    "float32": capi.DGEMM_DTYPE_F32,
    "float16": capi.DGEMM_DTYPE_F16,
    "bfloat16": capi.DGEMM_DTYPE_BF16,
    "float8_e4m3fn": capi.DGEMM_DTYPE_F8_E4M3,
    "float8_e5m2": capi.DGEMM_DTYPE_F8_E5M2,
    "int8": capi.DGEMM_DTYPE_I8,
    "int32": capi.DGEMM_DTYPE_I32,
}
ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2, "float8_e4m3fn": 1, "float8_e5m2": 1, "int8": 1, "int32": 4,
            "uint8": 1, "float8_e8m0fnu": 1}
FLOAT_TYPES = ("float32", "float16", "bfloat16")
# Element types that only scale tensors have (UE8M0 exponents: raw bytes, or the named type of
# ml_dtypes / torch); arrays of them can be viewed but are never operands.
SCALE_ONLY_TYPES = ("uint8", "float8_e8m0fnu")


def _any_dtype_name(dtype) -> str:
    """dtype_name, also accepting the scale-only element types (for views of scale tensors)."""
    try:
        return _ANY_NAMES[dtype]
    except (KeyError, TypeError):  # not seen yet, or unhashable
        pass
    name = getattr(dtype, "name", None)
    name = (name if isinstance(name, str) else str(dtype)).replace("torch.", "")
    name = name if name in SCALE_ONLY_TYPES else dtype_name(dtype)
    _remember_name(_ANY_NAMES, dtype, name)
    return name


def dtype_name(dtype) -> str:
    """The library's name for a NumPy / ml_dtypes / torch dtype, a dtype name, or a capi code."""
    try:
        return _NAMES[dtype]
    except (KeyError, TypeError):  # not seen yet, or unhashable
        pass
    if isinstance(dtype, int):
        for name, code in DTYPE_CODES.items():
            if code == dtype:
                return name
        raise argument_error(f"dtype code {dtype} is not a dgemm_dtype_t")
    name = getattr(dtype, "name", None)  # numpy.dtype, ml_dtypes
    if not isinstance(name, str):
        name = str(dtype)
    name = name.replace("torch.", "")
    if name not in DTYPE_CODES:
        try:  # numpy scalar types (numpy.float32) and strings NumPy understands ("f4")
            import numpy

            name = numpy.dtype(dtype).name
        except Exception:
            pass
    if name not in DTYPE_CODES:
        raise dtype_error(f"dtype {dtype!r} is not supported by DeepGEMM (supported: {', '.join(DTYPE_CODES)})", supported=False)
    _remember_name(_NAMES, dtype, name)
    return name


# The names found so far, by the dtype object asked about (numpy.dtype, torch.dtype, a string):
# NumPy computes dtype.name in Python on every access, the most expensive part of reading an
# array. Only names found are kept (a bad dtype is refused again with its error), and never
# for ints, which are codes, not dtypes (True == 1 would otherwise alias a code).
_NAMES: dict = {}
_ANY_NAMES: dict = {}


def _remember_name(cache: dict, dtype, name: str) -> None:
    if isinstance(dtype, int) or len(cache) > 256:
        return
    try:
        cache[dtype] = name
    except TypeError:  # unhashable
        pass


class View(NamedTuple):
    ptr: int
    shape: Tuple[int, ...]
    strides: Tuple[int, ...]  # in elements
    dtype: str
    device: str  # "cpu" or "cuda:N"
    stream: Optional[int]  # the producer's stream (CUDA), None when unknown
    owner: object  # keeps the memory (and a DLPack capsule) alive while the view is used


# ---------------------------------------------------------------------------------------------
# DLPack (https://dmlc.github.io/dlpack): the C structs of its stable ABI, needed to read a capsule.
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13
_DL_DTYPES = {  # (code, bits) -> name
    (2, 32): "float32", (2, 16): "float16", (4, 16): "bfloat16", (10, 8): "float8_e4m3fn",
    (12, 8): "float8_e5m2", (0, 8): "int8", (0, 32): "int32", (1, 8): "uint8",
}
_capsule_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_get_pointer.restype = ctypes.c_void_p
_capsule_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _from_dlpack(obj, stream_hint: Optional[int]) -> View:
    device_type, device_id = obj.__dlpack_device__()
    if device_type in (_DL_CUDA, _DL_CUDA_MANAGED):
        device = f"cuda:{device_id}"
        # Ask the producer to make its work visible to the stream we are going to use (DLPack:
        # 1 = the legacy default stream; 0 is not allowed).
        s = stream_hint if stream_hint else 1
        try:
            capsule = obj.__dlpack__(stream=s)
        except TypeError:
            capsule = obj.__dlpack__()
    elif device_type in (_DL_CPU, _DL_CUDA_HOST):
        device = "cpu"
        capsule = obj.__dlpack__()
    else:
        raise dtype_error(f"DLPack device type {device_type} is neither CPU nor CUDA", supported=False)
    # The capsule is not consumed (not renamed): its destructor releases the producer's memory
    # reference when the capsule, kept in View.owner, goes away.
    t = _DLTensor.from_address(_capsule_get_pointer(capsule, b"dltensor"))
    key = (t.dtype.code, t.dtype.bits)
    if key not in _DL_DTYPES or t.dtype.lanes != 1:
        raise dtype_error(f"DLPack dtype (code {t.dtype.code}, bits {t.dtype.bits}, lanes {t.dtype.lanes}) not supported", supported=False)
    name = _DL_DTYPES[key]
    shape = tuple(t.shape[i] for i in range(t.ndim))
    if t.strides:
        strides = tuple(t.strides[i] for i in range(t.ndim))
    else:
        strides = _packed_strides(shape)
    ptr = (t.data or 0) + t.byte_offset
    return View(ptr, shape, strides, name, device, stream_hint, (obj, capsule))


def _packed_strides(shape) -> Tuple[int, ...]:
    strides, acc = [], 1
    for extent in reversed(shape):
        strides.append(acc)
        acc *= max(extent, 1)
    return tuple(reversed(strides))


_TYPESTR = {"<f4": "float32", "<f2": "float16", "|i1": "int8", "<i4": "int32", "<i1": "int8", "|u1": "uint8"}


def _from_cai(obj, cai: dict) -> View:
    typestr = cai["typestr"]
    if typestr not in _TYPESTR:
        raise dtype_error(f"__cuda_array_interface__ typestr {typestr!r} not supported", supported=False)
    name = _TYPESTR[typestr]
    shape = tuple(cai["shape"])
    if cai.get("strides") is None:
        strides = _packed_strides(shape)
    else:
        item = ITEMSIZE[name]
        if any(s % item for s in cai["strides"]):
            raise argument_error("strides are not multiples of the element size")
        strides = tuple(s // item for s in cai["strides"])
    # CAI v3: 'stream' is the stream the data is ready on (1 = legacy default, 2 = per-thread
    # default, None = no synchronization needed); we enqueue our work on it.
    return View(cai["data"][0], shape, strides, name, f"cuda:{_cuda_device_of(obj, cai['data'][0])}",
                cai.get("stream"), obj)


def _cuda_device_of(obj, ptr: int) -> int:
    device = getattr(obj, "device", None)
    for attr in ("index", "id"):  # torch.device.index, cupy.cuda.Device.id
        value = getattr(device, attr, None)
        if isinstance(value, int):
            return value
    # Ask the driver which device owns the pointer (CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9).
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        ordinal = ctypes.c_int(0)
        cuda.cuInit(0)
        if ptr and cuda.cuPointerGetAttribute(ctypes.byref(ordinal), 9, ctypes.c_void_p(ptr)) == 0:
            return ordinal.value
    except OSError:
        pass
    return 0


def _torch_stream(obj) -> Optional[int]:
    """The current stream of a torch CUDA tensor's device, or None for anything else."""
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(obj, torch.Tensor) or not obj.is_cuda:
        return None
    return current_stream(obj.get_device())


def as_view(obj) -> View:
    """Describe an array-like operand. Raises TypeError for objects we cannot read."""
    if isinstance(obj, View):
        return obj
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(obj, numpy.ndarray):
        dtype = obj.dtype
        name = _any_dtype_name(dtype)
        if not dtype.isnative:  # the library reads the machine's byte order only
            raise dtype_error(f"array of dtype {dtype.str!r} is not in the machine's byte order: convert it with "
                              f".astype({dtype.newbyteorder('=').str!r})")
        item = dtype.itemsize
        strides = obj.strides
        if any(s % item for s in strides):
            raise argument_error("array strides are not multiples of its element size")
        return View(_numpy_pointer(obj), obj.shape, tuple(s // item for s in strides), name, "cpu", None, obj)
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.Tensor):
        # Read a torch tensor directly: its __cuda_array_interface__ has no bf16/fp8 and refuses
        # tensors that require grad, and DLPack refuses those too.
        name = _any_dtype_name(obj.dtype)
        dev = obj.device
        if dev.type not in ("cpu", "cuda"):
            raise dtype_error(f"torch device {dev} is neither CPU nor CUDA", supported=False)
        if dev.type == "cpu":
            return View(obj.data_ptr(), tuple(obj.shape), obj.stride(), name, "cpu", None, obj)
        index = dev.index or 0
        return View(obj.data_ptr(), tuple(obj.shape), obj.stride(), name, f"cuda:{index}", current_stream(index), obj)
    cai = None
    try:
        cai = obj.__cuda_array_interface__
    except Exception:  # absent, or refused for this dtype: try DLPack
        cai = None
    if cai is not None and cai.get("typestr") in _TYPESTR:
        return _from_cai(obj, cai)
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        # Without a stream of its own to go by, the work goes on the legacy default stream, and
        # the producer is asked to order its work before it.
        return _from_dlpack(obj, None)
    if numpy is None:
        try:
            import numpy  # noqa: F811  lists and scalars need NumPy
        except ImportError:
            raise dtype_error(f"cannot use a {type(obj).__name__} as a matrix (install numpy)", supported=False) from None
    if hasattr(obj, "__array_interface__") or isinstance(obj, (list, tuple)):
        return as_view(numpy.asarray(obj))
    raise dtype_error(f"cannot use a {type(obj).__name__} as a matrix: expected a NumPy array or an object with "
                      "__cuda_array_interface__ or __dlpack__", supported=False)


# ---------------------------------------------------------------------------------------------
# The hot path's readers (_hotpath): what every check of an operand depends on (its signature),
# and where its memory is, for the array types that can be read without building a View.
_NUMPY, _TORCH, _ADDRESS = 1, 2, 3
_kinds = {int: _ADDRESS}  # type -> how to read it; 0: not on the hot path (bool, View, CuPy, ...)
_read_pointer = ctypes.c_void_p.from_address
_numpy_data_offset: Optional[int] = None  # where an ndarray keeps its data pointer; 0: unknown
_current_stream = None


def _kind(t: type) -> int:
    k = _kinds.get(t)
    if k is None:
        numpy, torch = sys.modules.get("numpy"), sys.modules.get("torch")
        k = 0
        if numpy is not None and issubclass(t, numpy.ndarray):
            k = _NUMPY if _check_numpy_pointer(numpy) else 0
        elif torch is not None and issubclass(t, torch.Tensor):
            k = _TORCH
        if len(_kinds) < 64:
            _kinds[t] = k
    return k


def signature(x):
    """What every check the binding makes of an operand depends on: its type, dtype, shape,
    strides and device (None for None, the type for a raw address); False for an object the hot
    path does not read (it then takes the full path every time)."""
    if x is None:
        return None
    t = type(x)
    k = _kinds.get(t)
    if k is None:
        k = _kind(t)
    if k == _NUMPY:
        return (t, x.dtype, x.shape, x.strides)
    if k == _TORCH:
        return (t, x.dtype, x.shape, x.stride(), x.device)
    if k == _ADDRESS:
        return t
    return False


def address(x) -> Optional[int]:
    """The address of an operand's first element (0 for None, the int for a raw address); None
    for an object the hot path does not read."""
    if x is None:
        return 0
    t = type(x)
    k = _kinds.get(t)
    if k is None:  # a type first met here (the workspace a Call allocates for torch operands)
        k = _kind(t)
    if k == _NUMPY:
        return _read_pointer(id(x) + _numpy_data_offset).value or 0
    if k == _TORCH:
        return x.data_ptr()
    if k == _ADDRESS:
        return x
    return None


def _check_numpy_pointer(numpy) -> bool:
    """NumPy's array object keeps its data pointer right after the object header (the ``data``
    field of PyArrayObject_fields, fixed by NumPy's ABI): reading it there costs a tenth of
    __array_interface__, which builds a dict. Checked once against __array_interface__ on arrays
    with and without an offset; if it ever disagrees, __array_interface__ is used."""
    global _numpy_data_offset
    if _numpy_data_offset is None:
        offset = object.__basicsize__
        base = numpy.arange(24, dtype=numpy.float32).reshape(4, 6)
        probes = (base, base[1:, 2:], base.T[3:], numpy.empty(0, dtype=numpy.int8), numpy.float64(1.0) * base)
        ok = all((_read_pointer(id(p) + offset).value or 0) == p.__array_interface__["data"][0] for p in probes)
        _numpy_data_offset = offset if ok else 0
    return _numpy_data_offset != 0


def _numpy_pointer(obj) -> int:
    if _numpy_data_offset is None:
        _check_numpy_pointer(sys.modules["numpy"])
    if _numpy_data_offset:
        return _read_pointer(id(obj) + _numpy_data_offset).value or 0
    return obj.__array_interface__["data"][0]


def current_stream(index: int) -> int:
    """torch's current CUDA stream on device ``index`` (a cudaStream_t address): torch's raw
    accessor when it has one (no Stream object per call), else torch.cuda.current_stream."""
    global _current_stream
    if _current_stream is None:
        torch = sys.modules["torch"]
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        _current_stream = raw if raw is not None else (lambda i: torch.cuda.current_stream(i).cuda_stream)
    return _current_stream(index)


def stream_handle(stream) -> Optional[int]:
    """A stream argument (a torch / CuPy stream object, or an address) as the C call takes it."""
    stream = getattr(stream, "cuda_stream", getattr(stream, "ptr", stream))
    return int(stream) or None


def matrix_layout(view: View):
    """How the last two dimensions are stored: (transposed, ld) where transposed means the matrix
    is the transpose of a row-major matrix with leading dimension ld, or None when neither
    dimension is contiguous."""
    rows, cols = view.shape[-2], view.shape[-1]
    rs, cs = view.strides[-2], view.strides[-1]
    if rows == 0 or cols == 0:  # nothing is read: any valid leading dimension will do
        return False, max(cols, 1)
    if cs == 1 or cols == 1:
        ld = rs if rows > 1 else cols
        if ld >= max(cols, 1):
            return False, ld
    if rs == 1 or rows == 1:
        ld = cs if cols > 1 else rows
        if ld >= max(rows, 1):
            return True, ld
    return None


def batch_stride(view: View, batch: int) -> int:
    """Element stride between matrices of a batch (0 broadcasts one matrix)."""
    if len(view.shape) == 2 or view.shape[0] == 1:
        return 0
    if view.shape[0] != batch:
        raise argument_error(f"batch of {view.shape[0]} where {batch} was expected")
    return view.strides[0]
