"""DeepGEMM for Python: GEMM with fused epilogues, D = act(alpha * op(A) @ op(B) + beta * C + bias).

    import deepgemm
    y = deepgemm.matmul(x, w, trans_b=True, bias=b, activation="gelu")   # NumPy (CPU) or GPU tensors

Mixture-of-experts layers: ``deepgemm.grouped_matmul(x, w, offsets=...)`` (contiguous rows) or
``counts=...`` (a masked slot per expert).

For repeated shapes, plan once and execute many times:

    with deepgemm.Context("cpu") as ctx, ctx.plan(m, n, k, "float32", bias="float32") as plan:
        plan.execute(a, b, d, bias=bias)

Failures raise deepgemm.Error, which carries the library's ``status`` and ``message``.
The low-level SWIG module generated from deepgemm.h is ``deepgemm.capi``.
"""
from . import capi
from ._api import ACTIVATIONS, GROUP_LAYOUTS, SCALE_MODES, Context, Error, Plan, Status, matmul, version
from ._grouped import grouped_matmul

__all__ = ["ACTIVATIONS", "GROUP_LAYOUTS", "SCALE_MODES", "Context", "Error", "Plan", "Status", "capi",
           "grouped_matmul", "matmul", "version"]
__version__ = capi.dgemm_version_string()
