"""Optional PyTorch integration: ``deepgemm.linear`` as the custom operator
``torch.ops.deepgemm.linear``, so that it is opaque to ``torch.compile`` (which then neither traces
into this package nor breaks its graph) and can be captured in CUDA graphs. Nothing here imports
torch: the operator is registered when deepgemm is imported after torch, at the first
``deepgemm.linear`` call on a torch tensor, or by ``deepgemm.register_torch_ops()`` (call it once
before compiling a model whose first deepgemm call happens under ``torch.compile``).
"""
import sys
import threading
from typing import Any, Callable, Optional

_lock = threading.Lock()
op: Optional[Callable] = None       # torch.ops.deepgemm.linear once registered
tensor_type: Any = ()               # torch.Tensor once registered (isinstance(x, ()) is False)


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
    global op, tensor_type
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

        tensor_type = torch.Tensor
        op = torch.ops.deepgemm.linear
        return op
