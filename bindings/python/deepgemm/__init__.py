"""DeepGEMM for Python: GEMM with fused epilogues, D = act(alpha * op(A) @ op(B) + beta * C + bias).

    import deepgemm
    y = deepgemm.linear(x, w, b, activation="gelu")                   # like F.gelu(F.linear(x, w, b))
    y = deepgemm.matmul(x, w, trans_b=True, bias=b, activation="gelu")   # NumPy (CPU) or GPU tensors

Mixture-of-experts layers: ``deepgemm.grouped_matmul(x, w, offsets=...)`` (contiguous rows) or
``counts=...`` (a masked slot per expert).

For repeated shapes, plan once and execute many times:

    with deepgemm.Context("cpu") as ctx, ctx.plan(m, n, k, "float32", bias="float32") as plan:
        plan.execute(a, b, d, bias=bias)

Every failure raises a ``deepgemm.Error`` (with the library's ``status`` and ``message``); its
subclasses are also ``ValueError`` (ArgumentError), ``TypeError`` (DTypeError),
``NotImplementedError`` (NotSupportedError), ``RuntimeError`` (DeviceError) and ``MemoryError``.
The C API itself is ``deepgemm.capi`` (ctypes).
"""
from . import capi
from ._api import ACTIVATIONS, GROUP_LAYOUTS, SCALE_MODES, Context, Plan, Scale, linear, matmul, version
from ._errors import (ArgumentError, DeviceError, DTypeError, Error, NotSupportedError, OutOfMemoryError, Status)
from ._grouped import grouped_matmul
from ._torch import register_torch_ops

__all__ = ["ACTIVATIONS", "GROUP_LAYOUTS", "SCALE_MODES", "ArgumentError", "Context", "DTypeError", "DeviceError",
           "Error", "NotSupportedError", "OutOfMemoryError", "Plan", "Scale", "Status", "arch_files", "capi",
           "grouped_matmul", "linear", "matmul", "register_torch_ops", "version"]
__version__ = capi.dgemm_version_string()


def arch_files() -> dict:
    """The hardware descriptions shipped with the package (name -> path of its YAML file), for
    ``Context.plan(..., arch_file=...)`` or as a start for your own; empty outside a wheel."""
    import os

    folder = os.path.join(os.path.dirname(__file__), "arch")
    if not os.path.isdir(folder):
        return {}
    return {f[:-5]: os.path.join(folder, f) for f in sorted(os.listdir(folder)) if f.endswith(".yaml")}


# torch imported first (the usual order in a model's code): the custom operator exists from the start.
if "torch" in __import__("sys").modules:
    try:
        register_torch_ops()
    except Exception:  # an old torch without torch.library.custom_op: the plain path still works
        pass
