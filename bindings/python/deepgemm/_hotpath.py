"""The hot path of ``Plan.execute``, ``matmul`` and ``linear``: a call with the same operand types,
dtypes, shapes, strides and devices (and options) as an earlier successful one repeats only what
depends on the new memory.

Every check the binding makes, and every decision it takes (the plan, the layouts, folding rows,
the output's shape and dtype, whether a copy is needed), depends on the call's *signature*: each
operand's ``_tensors.signature`` and the call's options, never on the addresses. So the first call
with a signature takes the full path (views, checks, the plan cache) and, when that call passed
the caller's own memory straight to the library (no copy, no extension structs), leaves a
:class:`Call` behind under the signature. The next call with that signature reads the addresses,
copies the ``dgemm_args_t`` the full path filled, sets its pointers and calls ``dgemm_execute``:
no check is skipped, since those that ran for this signature can only answer the same again, and
the library still checks what depends on the addresses (alignment) on every call. Bad input never
reaches a Call (its full path raised first), so it gets the same error every time.

What stays per call: the addresses, the output allocation, the current CUDA stream (torch's, for
torch CUDA operands, unless a stream is given) and the host alpha / beta values.
"""
import ctypes
from typing import Callable, Dict, Optional

from . import capi
from ._errors import check
from ._tensors import _TORCH, _kinds, address, current_stream, stream_handle

# Signatures kept per table (a plan's, a context's, the default contexts'): a loop over more
# distinct shapes than this is not what the table is for, and simply starts it over.
LIMIT = 64

_copy_args = capi.dgemm_args_t.from_buffer_copy
_execute = capi.dgemm_execute
_byref = ctypes.byref


class Call:
    """A remembered call: the plan (for matmul's and linear's tables; a plan's own table leaves it
    out, so that a plan is not kept alive by itself), the ``dgemm_args_t`` the full path filled
    (its pointers are replaced on every call), the workspace size, how to allocate the result and
    the workspace, and the CUDA device whose current stream runs the call (None: the CPU)."""

    __slots__ = ("plan", "args", "ws_size", "ws_alloc", "alloc", "cuda")

    def __init__(self, plan, args, ws_size: int, ws_alloc: Optional[Callable], alloc: Optional[Callable],
                 cuda: Optional[int]):
        self.plan, self.args, self.ws_size, self.ws_alloc, self.alloc, self.cuda = \
            plan, args, ws_size, ws_alloc, alloc, cuda

    def run(self, handle: int, a, b, c, d, bias=None, alpha=None, beta=None, stream=None, scale=None,
            zero_point=None, workspace=None, like=None) -> None:
        """Launches the plan ``handle`` (open: the caller checks) on new operands of the
        remembered signature."""
        args = _copy_args(self.args)
        args.bias = address(bias)
        if scale is not None:
            args.scale = address(scale)
        if zero_point is not None:
            args.zero_point = address(zero_point)
        if alpha is not None:
            args.alpha = float(alpha)
        if beta is not None:
            args.beta = float(beta)
        ws, ws_ptr = workspace, 0
        if ws is None and self.ws_alloc is not None:
            ws = self.ws_alloc(like)
        if ws is not None:
            ws_ptr = address(ws)
        if stream is None:
            stream = (current_stream(self.cuda) or None) if self.cuda is not None else None
        else:
            stream = stream_handle(stream)
        check(_execute(handle, address(a), address(b), address(c) or None, address(d), _byref(args), ws_ptr,
                       self.ws_size, stream))


def lookup(table: Dict, key) -> Optional[Call]:
    """The Call remembered under ``key``, or None (also when the key cannot be hashed: an option
    of a type that has no business there, which the full path then reports)."""
    try:
        return table.get(key)
    except TypeError:
        return None


def cuda_device(*operands) -> Optional[int]:
    """The device of the first torch CUDA tensor among the operands, whose current stream the
    full path runs on when no stream is given (as_view's View.stream); None if there is none."""
    for x in operands:
        if x is not None and _kinds.get(type(x)) == _TORCH and x.is_cuda:
            return x.get_device()
    return None


def remember(table: Dict, key, plan, launch, a, b, c, d, bias=None, scale=None, zero_point=None, workspace=None,
             stream=None, alloc: Optional[Callable] = None, ws_alloc: Optional[Callable] = None) -> None:
    """Leaves a Call for ``key`` after the full path launched ``launch`` (Plan._prepare's) on
    these operands, if the library got exactly the operands' own addresses (nothing was copied or
    re-laid) and nothing the hot path does not fill (device scalars, extension structs). ``plan``
    is kept in the Call (None for a plan's own table)."""
    if key is None or launch.ext is not None:
        return
    args = launch.args
    if args.scalar_mode == capi.DGEMM_SCALARS_DEVICE:
        return
    got = (launch.a, launch.b, launch.c, launch.d, args.bias, args.scale, args.zero_point)
    want = (a, b, c, d, bias, scale, zero_point)
    for ptr, x in zip(got, want):
        if (ptr or 0) != address(x):  # address() is None for what the hot path cannot read
            return
    if workspace is not None and (launch.ws or 0) != address(workspace):
        return
    if workspace is None and launch.ws and ws_alloc is None:  # a workspace the Call could not provide
        return
    cuda = cuda_device(a, b, d)
    if stream is None and launch.stream != ((current_stream(cuda) or None) if cuda is not None else None):
        return
    if len(table) >= LIMIT:
        table.clear()
    try:
        table[key] = Call(plan, _copy_args(args), launch.ws_size, ws_alloc, alloc, cuda)
    except TypeError:  # an option that cannot be hashed: such calls take the full path
        pass
