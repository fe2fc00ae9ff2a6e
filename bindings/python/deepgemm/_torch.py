"""Optional PyTorch integration: ``deepgemm.linear`` as the custom operator
``torch.ops.deepgemm.linear``, so that it is opaque to ``torch.compile`` (which then neither traces
into this package nor breaks its graph) and can be captured in CUDA graphs. Nothing here imports
torch: the operator is registered when deepgemm is imported after torch, at the first
``deepgemm.linear`` call on a torch tensor, or by ``deepgemm.register_torch_ops()`` (call it once
before compiling a model whose first deepgemm call happens under ``torch.compile``).
"""
import sys
import threading
from typing import Any, Callable, Optional, Tuple

_lock = threading.Lock()
op: Optional[Callable] = None       # torch.ops.deepgemm.linear once registered
tensor_type: Any = ()               # torch.Tensor once registered (isinstance(x, ()) is False)
# What direct() asks torch, found once at registration; None: always the operator.
_direct_checks: Optional[Tuple[Callable, Callable, Callable, Callable, Tuple[type, ...]]] = None


def direct(x, weight, bias, activation) -> bool:
    """Whether ``deepgemm.linear`` may call its implementation directly instead of the operator,
    which then would only add the dispatcher's cost (tens of microseconds a call in eager mode):
    not while torch.compile / torch.export trace (they must record the operator; checked first,
    and constant for their tracer), nor with a torch function or dispatch mode active (they
    expect to see the operator: FakeTensor, make_fx, FlopCounterMode, ...), nor for tensor
    subclasses, nor when autograd would record the call (the operator has no derivative, so its
    backward fails: calling the implementation would hide that); and only with an activation the
    operator's schema takes (a str), so that a bad one fails the same way."""
    checks = _direct_checks
    if checks is None:
        return False
    is_compiling, function_modes, dispatch_modes, grad_enabled, plain = checks
    if is_compiling() or function_modes() or dispatch_modes():
        return False
    if type(x) not in plain or type(weight) not in plain or (bias is not None and type(bias) not in plain):
        return False
    if type(activation) is not str:
        return False
    return not (grad_enabled() and (x.requires_grad or weight.requires_grad or
                                    (bias is not None and bias.requires_grad)))


def is_torch_tensor(x) -> bool:
    """A tensor of an imported torch that can register custom operators (torch >= 2.4); older
    torch takes the plain path."""
    torch = sys.modules.get("torch")
    return (torch is not None and isinstance(x, torch.Tensor)
            and hasattr(getattr(torch, "library", None), "custom_op"))


def register_torch_ops() -> Callable:
    """Registers ``torch.ops.deepgemm.linear(x, weight, bias, activation) -> Tensor`` (idempotent)
    and returns it; ``activation`` is a name of deepgemm.ACTIVATIONS ("none" for none). Needs
    torch >= 2.4 (``torch.library.custom_op``)."""
    global op, tensor_type, _direct_checks
    with _lock:
        if op is not None:
            return op
        import torch

        from . import _api
        from ._tensors import dtype_name

        @torch.library.custom_op("deepgemm::linear", mutates_args=())
        def linear(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor],
                   activation: str) -> torch.Tensor:
            return _api._linear(x, weight, bias, activation=None if activation == "none" else activation)

        @linear.register_fake
        def _(x, weight, bias, activation):
            out = getattr(torch, _api._default_out(dtype_name(x.dtype)))
            return x.new_empty((*x.shape[:-1], weight.shape[0]), dtype=out)

        is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None)
        function_modes = getattr(torch._C, "_is_torch_function_mode_enabled", None)
        dispatch_modes = getattr(torch._C, "_len_torch_dispatch_stack", None)
        if is_compiling is not None and function_modes is not None and dispatch_modes is not None:
            _direct_checks = (is_compiling, function_modes, dispatch_modes, torch.is_grad_enabled,
                              (torch.Tensor, torch.nn.Parameter))
        tensor_type = torch.Tensor
        op = torch.ops.deepgemm.linear
        return op
