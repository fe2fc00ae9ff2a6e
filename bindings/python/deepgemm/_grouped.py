"""``grouped_matmul``: a grouped (mixture-of-experts) GEMM in one call, in the contiguous or the
masked layout of deepgemm.h ("DGEMM_1.1: grouped problems"), on plans cached per context."""
from . import _scaling
from ._api import _context_for, _default_out, _host_copy, _output, _stored
from ._errors import argument_error, dtype_error
from ._tensors import View, as_view, batch_stride, dtype_name, matrix_layout


def _rows_array(x, device):
    """The offsets / counts as an int32 array where the plan runs: host lists and NumPy arrays
    of another integer type are converted on the CPU; device arrays must already be int32."""
    if device == "cpu" and (isinstance(x, (list, tuple)) or type(x).__module__ == "numpy"):
        import numpy

        x = numpy.asarray(x)
        if not numpy.issubdtype(x.dtype, numpy.integer):
            raise dtype_error(f"offsets / counts must hold integers, got {x.dtype}")
        return numpy.ascontiguousarray(x, dtype=numpy.int32)
    return x


def _group_scale(x, name, groups, outer, k, per_group, device):
    """The Scale of an input scale array of a grouped problem and the array itself (deepgemm.h,
    "grouped problems": group g's tensor at g * stride). ``per_group``: the operand has one tensor
    per group (B; A of the masked layout), so the array has a leading group dimension; otherwise
    (A of the contiguous layout) it spans the shared rows. (G,) is one scale per group either way."""
    v = _scaling.view_of(x, name, device)
    if v.device != device:
        raise argument_error(f"{name} is on {v.device} but the operands are on {device}")
    shape = tuple(v.shape)
    dtype = "float32" if v.dtype == "float32" else "ue8m0" if v.dtype in _scaling.ARRAY_TYPES["ue8m0"] else None
    if dtype is None:
        raise dtype_error(f"{name} has dtype {v.dtype}: scales are float32, or uint8 / float8_e8m0fnu exponents")
    if shape == (groups,) and groups > 1:
        return _scaling.Scale("per_tensor", dtype, "k", 1, v.strides[0]), v
    if not per_group:
        return _scaling.infer(v, outer, k, name), v
    if len(shape) < 2 or shape[0] != groups:
        raise argument_error(f"{name} has shape {shape}: expected ({groups},) or a leading dimension of {groups} "
                             "groups (one tensor per group)")
    one = _scaling.infer(View(v.ptr, shape[1:], tuple(v.strides[1:]), v.dtype, v.device, v.stream, v.owner),
                         outer, k, name)
    return one._replace(stride=v.strides[0]), v


def grouped_matmul(a, b, *, offsets=None, counts=None, trans_b=False, bias=None, activation=None, alpha=1.0,
                   scale=None, out_dtype=None, out=None, m_alignment=1, status=None, stream=None, context=None,
                   a_scale=None, b_scale=None, force_kernel=None, expected_m=0):
    """G GEMMs that share n, k and the epilogue, one per group (expert):
    ``out[rows of g] = act(alpha * a[rows of g] @ op(b[g]) + bias[g]) * scale[g]``.

    Contiguous layout, ``offsets`` given (G + 1 int32; group g owns rows offsets[g]:offsets[g + 1],
    each offset a multiple of ``m_alignment``): ``a`` is (M, K) and ``out`` (M, N); rows outside
    offsets[0]:offsets[G] are not written.
    Masked layout, ``counts`` given (G int32): ``a`` is (G, M, K) and ``out`` (G, M, N); group g
    computes its first counts[g] rows, the others are not written.

    ``b`` is (G, K, N), or (G, N, K) with ``trans_b`` (the layout of nn.Linear weights). The
    offsets / counts live where the operands do (a CUDA tensor for GPU operands: the kernel reads
    them when it runs, so they may change between calls without re-planning, and a captured CUDA
    graph replays with new values; a list or NumPy array on the CPU). ``bias`` is (G, N), added per
    group and column; ``scale`` (float32) is (G,) per group or (G, N) per group and column, applied
    after the activation (output quantization with an FP8 ``out_dtype``). ``status``: an optional
    one-element int32 array that receives the DGEMM_GROUP_STATUS_* bits (0 when the row array was
    valid; CPU operands with a bad row array raise deepgemm.Error instead). Rows of a newly
    allocated ``out`` that no group covers are left as allocated.

    Input scales (FP8 / INT8, deepgemm.h "grouped problems"), float32 or UE8M0 arrays:
    ``b_scale`` is (G,) per expert, (G, N) per expert and column, (G, ceil(N/128), KB) in 128 x 128
    blocks or (G, N, KB) in 1 x 128 blocks (KB = ceil(K/128)); ``a_scale`` is (G,) per group, or
    for the contiguous layout one element, (M,) / (M, 1) per row, (M, KB) in 1 x 128 blocks (either
    storage order, as DeepGEMM's column-major TMA-aligned tensor), and for the masked layout (G, M)
    or (G, M, KB). DeepSeek's m-grouped FP8 GEMM is e4m3 ``a`` with (M, KB) ``a_scale`` and e4m3
    ``b`` (trans_b) with (G, ceil(N/128), KB) ``b_scale``. On sm90, contiguous groups need
    ``m_alignment`` a multiple of 4 (float32) / 16 (UE8M0) for an (M, KB) ``a_scale``, and of 8
    for a 16-bit ``a`` stored column-major (op_a = T).

    ``expected_m``: the rows a group is expected to hold on average (0: unknown; the plan is then
    costed for full slots, masked, or the M shared rows, contiguous). A hint for the choice of
    kernel only, as DeepSeek's masked GEMM takes it: with the masked layout on sm90, 64 or fewer
    rows choose 64-row tiles. Each distinct value is its own cached plan.

    ``force_kernel``: a kernel family or configuration by name (as ``deepgemm plan`` names it), e.g.
    for the GPU kernels the planner offers by name only until they have been checked on a GPU
    (grouped FP8 with 1 x 128 or 128 x 128 scales on sm90 tiles other than the five its GPU test
    ran).
    """
    if (offsets is None) == (counts is None):
        raise argument_error("give offsets (contiguous layout) or counts (masked layout), not both")
    layout = "contiguous" if offsets is not None else "masked"
    va, vb = as_view(a), as_view(b)
    if va.device != vb.device:
        raise argument_error(f"a is on {va.device} and b on {vb.device}")
    device = va.device
    if len(vb.shape) != 3:
        raise argument_error(f"b must be 3-D, (G, K, N) or (G, N, K) with trans_b; got shape {vb.shape}")
    groups = vb.shape[0]
    a_dims = 2 if layout == "contiguous" else 3
    if len(va.shape) != a_dims or (layout == "masked" and va.shape[0] != groups):
        want = "(M, K)" if layout == "contiguous" else f"({groups}, M, K)"
        raise argument_error(f"a must be {want} for the {layout} layout; got shape {va.shape}")
    if matrix_layout(va) is None:
        va = _host_copy(va, "a", "neither of its last two dimensions is contiguous")
    if matrix_layout(vb) is None:
        vb = _host_copy(vb, "b", "neither of its last two dimensions is contiguous")
    (a_t, lda), (b_t, ldb) = matrix_layout(va), matrix_layout(vb)
    m, k = va.shape[-2], va.shape[-1]
    kb, n = (vb.shape[-1], vb.shape[-2]) if trans_b else (vb.shape[-2], vb.shape[-1])
    if k != kb:
        raise argument_error(f"inner dimensions differ: a has k = {k}, op(b) is {kb}x{n}")
    rows = _rows_array(offsets if layout == "contiguous" else counts, device)

    d_name = dtype_name(out_dtype) if out_dtype is not None else _default_out(va.dtype)
    out_shape = (m, n) if layout == "contiguous" else (groups, m, n)
    out, vd = _output(out, a, out_shape, d_name, device)
    d_layout = matrix_layout(vd)
    if d_layout is None or d_layout[0]:
        raise argument_error("out must be row-major (unit column stride)")

    vbias = as_view(bias) if bias is not None else None
    if vbias is not None and tuple(vbias.shape) not in ((groups, n), (groups * n,)):
        raise argument_error(f"bias has shape {vbias.shape}, expected ({groups}, {n})")
    vscale, scale_mode = None, None
    if scale is not None:
        vscale = as_view(scale)
        shape = tuple(vscale.shape)
        if shape in ((groups,), (groups, 1)):
            scale_mode = "per_tensor"
        elif shape in ((groups, n), (groups * n,)):
            scale_mode = "per_column"
        else:
            raise argument_error(f"scale has shape {shape}; expected ({groups},) per group or ({groups}, {n}) per "
                                 "group and column")

    masked = layout == "masked"
    sa, vsa = _group_scale(a_scale, "a_scale", groups, m, k, masked, device) if a_scale is not None else (None, None)
    sb, vsb = _group_scale(b_scale, "b_scale", groups, n, k, True, device) if b_scale is not None else (None, None)
    stride_a = batch_stride(va, groups) if masked else 0
    stride_b = batch_stride(vb, groups)
    stride_d = batch_stride(vd, groups) if masked else 0
    ctx = context if context is not None else _context_for(device)
    key = ("grouped", layout, int(m_alignment), m, n, k, va.dtype, vb.dtype, d_name, a_t, bool(trans_b) != b_t, lda,
           ldb, d_layout[1], groups, stride_a, stride_b, stride_d, vbias.dtype if vbias is not None else None,
           activation, scale_mode, sa, sb, force_kernel, int(expected_m))
    plan = ctx._cached_plan(key, lambda: ctx.plan(
        m, n, k, va.dtype, b_dtype=vb.dtype, out_dtype=d_name, trans_a=a_t, trans_b=key[10], lda=lda, ldb=ldb,
        ldd=d_layout[1], batch=groups, stride_a=stride_a, stride_b=stride_b, stride_d=stride_d, bias=key[18],
        activation=activation, scale=scale_mode, grouped=layout, m_alignment=m_alignment, a_scale=sa, b_scale=sb,
        force_kernel=force_kernel, expected_m=expected_m))
    # The scale arrays were matched to the plan's tensors above: their addresses go as they are.
    plan.execute(_stored(va, a_t), _stored(vb, b_t), vd, bias=vbias, alpha=alpha, scale=vscale,
                 offsets=rows if layout == "contiguous" else None, counts=rows if masked else None,
                 group_status=status, stream=stream, a_scale=vsa.ptr if vsa is not None else None,
                 b_scale=vsb.ptr if vsb is not None else None)
    return out


__all__ = ["grouped_matmul"]
