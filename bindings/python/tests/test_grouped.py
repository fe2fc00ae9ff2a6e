"""pytest tests of deepgemm.grouped_matmul and grouped plans on the CPU backend: each group is
compared with NumPy in float64 on fresh random inputs, outputs poisoned beforehand, and rows that
no group owns must keep their poison."""
import math

import numpy as np
import pytest

import deepgemm

RNG = np.random.default_rng()
_erf = np.vectorize(math.erf, otypes=[np.float64])


def rand(*shape, dtype=np.float32):
    return RNG.uniform(-1.0, 1.0, size=shape).astype(dtype)


def expert(a, w, trans_b, bias=None, activation=None, scale=None):
    x = np.asarray(a, np.float64) @ (np.asarray(w, np.float64).T if trans_b else np.asarray(w, np.float64))
    if bias is not None:
        x = x + np.asarray(bias, np.float64)
    if activation == "gelu":
        x = 0.5 * x * (1 + _erf(x / math.sqrt(2)))
    elif activation == "silu":
        x = x / (1 + np.exp(-x))
    if scale is not None:
        x = x * np.asarray(scale, np.float64)
    return x


def close(got, want, tol):
    got = np.asarray(got, np.float64)
    return np.linalg.norm(got - want) <= tol * max(np.linalg.norm(want), 1e-30)


@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize("dtype,tol", [("float32", 1e-5), ("bfloat16", 1.5e-2)])
def test_contiguous(trans_b, dtype, tol):
    ml = pytest.importorskip("ml_dtypes") if dtype == "bfloat16" else None
    npdt = ml.bfloat16 if ml else np.float32
    g, n, k = 4, 24, 40
    offsets = [8, 16, 16, 48, 56]  # unused rows before and after, an empty group
    m = 64
    a = rand(m, k, dtype=npdt)
    w = rand(g, n, k, dtype=npdt) if trans_b else rand(g, k, n, dtype=npdt)
    bias = rand(g, n)
    out = np.full((m, n), 7.0, dtype=npdt)
    status = np.array([-1], dtype=np.int32)
    deepgemm.grouped_matmul(a, w, offsets=offsets, trans_b=trans_b, bias=bias, activation="gelu", out=out,
                            m_alignment=8, status=status)
    assert status[0] == 0
    for e in range(g):
        lo, hi = offsets[e], offsets[e + 1]
        assert close(out[lo:hi], expert(a[lo:hi], w[e], trans_b, bias[e], "gelu"), tol), e
    assert np.all(np.asarray(out[:8], np.float32) == 7.0) and np.all(np.asarray(out[56:], np.float32) == 7.0)


def test_masked_counts_change_without_replanning():
    g, m, n, k = 3, 20, 16, 12
    a = rand(g, m, k)
    w = rand(g, n, k)
    ctx = deepgemm.Context("cpu")
    for counts in ([20, 0, 5], [1, 20, 19], [0, 0, 0]):
        out = np.full((g, m, n), np.nan, dtype=np.float32)
        deepgemm.grouped_matmul(a, w, counts=np.array(counts, np.int32), trans_b=True, activation="silu", out=out,
                                context=ctx)
        for e, c in enumerate(counts):
            assert close(out[e, :c], expert(a[e, :c], w[e], True, activation="silu"), 1e-5)
            assert np.all(np.isnan(out[e, c:])), "rows past the count were written"
    assert len(ctx._cache) == 1  # one plan served every count
    ctx.close()


def test_per_group_scale_and_allocation():
    g, n, k = 2, 8, 8
    offsets = np.array([0, 3, 10], dtype=np.int64)  # converted to int32 on the CPU
    a, w = rand(10, k), rand(g, k, n)
    scale = np.array([2.0, -0.5], dtype=np.float32)
    out = deepgemm.grouped_matmul(a, w, offsets=offsets, scale=scale)
    assert out.shape == (10, n) and out.dtype == np.float32
    for e in range(g):
        lo, hi = offsets[e], offsets[e + 1]
        assert close(out[lo:hi], expert(a[lo:hi], w[e], False, scale=scale[e]), 1e-5)
    col_scale = rand(g, n)
    out = deepgemm.grouped_matmul(a, w, offsets=offsets, scale=col_scale)
    assert close(out[3:], expert(a[3:], w[1], False, scale=col_scale[1]), 1e-5)


def test_bad_rows_and_arguments():
    a, w = rand(16, 4), rand(2, 4, 4)
    out = np.full((16, 4), 3.0, dtype=np.float32)
    with pytest.raises(deepgemm.Error) as info:
        deepgemm.grouped_matmul(a, w, offsets=[0, 10, 5], out=out)
    assert info.value.status == deepgemm.Status.INVALID_ARGUMENT
    assert "offsets[2] = 5" in info.value.message and "below the previous offset" in info.value.message
    assert np.all(out == 3.0)
    with pytest.raises(deepgemm.Error, match="offsets\\[1\\] = 6.*multiple of m_alignment"):
        deepgemm.grouped_matmul(a, w, offsets=[0, 6, 16], m_alignment=4)
    with pytest.raises(deepgemm.Error, match="counts\\[0\\] = -1"):
        deepgemm.grouped_matmul(rand(2, 16, 4), w, counts=[-1, 3])
    with pytest.raises(ValueError, match="offsets.*or counts"):
        deepgemm.grouped_matmul(a, w)
    with pytest.raises(ValueError, match="for the masked layout"):
        deepgemm.grouped_matmul(a, w, counts=[1, 1])
    with pytest.raises(ValueError, match="bias has shape"):
        deepgemm.grouped_matmul(a, w, offsets=[0, 8, 16], bias=rand(4))
    with pytest.raises(deepgemm.Error, match="INVALID_ARGUMENT|offsets has 2 elements"):
        deepgemm.grouped_matmul(a, w, offsets=[0, 16])


def test_plan_api_and_describe():
    with deepgemm.Context("cpu") as ctx:
        with ctx.plan(32, 8, 8, "float32", batch=4, stride_b=64, bias="float32", grouped="contiguous",
                      m_alignment=8) as plan:
            assert plan.grouped == "contiguous"
            assert "grouped=contiguous(align=8)" in plan.describe()["problem"]
            a, w, bias = rand(32, 8), rand(4, 8, 8), rand(4, 8)
            out = np.zeros((32, 8), dtype=np.float32)
            plan.execute(a, w, out, bias=bias, offsets=np.array([0, 8, 8, 24, 32], np.int32))
            assert close(out[8:24], expert(a[8:24], w[2], False, bias[2]), 1e-5)
            with pytest.raises(ValueError, match="takes offsets"):
                plan.execute(a, w, out, bias=bias, counts=np.zeros(4, np.int32))
        with pytest.raises(ValueError, match="grouped"):
            ctx.plan(4, 4, 4, grouped="ragged")
        # expected_m, the planning hint: in the plan's key and description, and range-checked.
        with ctx.plan(8, 8, 8, "float32", batch=4, stride_a=64, stride_b=64, stride_d=64, grouped="masked",
                      expected_m=3) as plan:
            assert "expected_m=3" in plan.describe()["problem"]
        with pytest.raises(deepgemm.Error, match="grouped->expected_m = 9"):
            ctx.plan(8, 8, 8, "float32", batch=4, stride_a=64, stride_b=64, stride_d=64, grouped="masked",
                     expected_m=9)
    a, w = rand(2, 16, 4), rand(2, 4, 4)
    out = deepgemm.grouped_matmul(a, w, counts=[5, 16], expected_m=8)
    assert close(out[0, :5], expert(a[0, :5], w[0], False), 1e-5)
    assert close(out[1], expert(a[1], w[1], False), 1e-5)


def test_grouped_with_scaling():
    """Both DGEMM_1.1 extensions reach the library in one chain: one A scale per group (stride 1)
    multiplies that group's rows, on the CPU (deepgemm.h, "grouped problems")."""
    with deepgemm.Context("cpu") as ctx:
        a, w = rand(2, 16, 8), rand(2, 8, 8)
        counts = np.array([5, 16], np.int32)
        scales = np.array([2.0, 0.5], np.float32)
        with ctx.plan(16, 8, 8, "float32", batch=2, stride_a=128, stride_b=64, stride_d=128, grouped="masked",
                      a_scale=deepgemm.Scale("per_tensor", stride=1)) as plan:
            out = np.zeros((2, 16, 8), dtype=np.float32)
            plan.execute(a, w, out, counts=counts, a_scale=scales)
        for g, rows in enumerate(counts):
            assert close(out[g, :rows], expert(a[g, :rows], w[g], False) * scales[g], 1e-5)
            assert not out[g, rows:].any()  # rows past the count untouched
        # A scaled plan refuses group arrays, a grouped plan scale arrays (before the library is called).
        with ctx.plan(16, 8, 8, "float32", a_scale="per_tensor") as plan:
            with pytest.raises(ValueError, match="grouped plans"):
                plan.execute(rand(16, 8), rand(8, 8), np.zeros((16, 8), np.float32),
                             a_scale=np.ones(1, np.float32), counts=np.zeros(1, np.int32))
        with ctx.plan(16, 8, 8, "float32", batch=2, stride_b=64, grouped="contiguous") as plan:
            with pytest.raises(ValueError, match="no scaling"):
                plan.execute(rand(16, 8), rand(2, 8, 8), np.zeros((16, 8), np.float32),
                             offsets=np.array([0, 4, 16], np.int32), a_scale=np.ones(1, np.float32))


@pytest.mark.parametrize("ue8m0", [False, True])
def test_grouped_fp8_deepseek_scales(ue8m0):
    """DeepSeek's m-grouped FP8 GEMM on the CPU: e4m3 a with 1 x 128 scales over the shared rows
    (contiguous) or per slot (masked), e4m3 experts with 128 x 128 block scales per expert; and the
    simpler per-group / per-expert-column scales. Reference: each group's rows in float64."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from test_scaling import expand_a  # the scale of each element, as test_scaling defines it
    e4m3 = ml_dtypes.float8_e4m3fn
    rng = np.random.default_rng(3)
    g, m, n, k = 3, 96, 136, 300
    kb, nb = -(-k // 128), -(-n // 128)

    def scales(shape):
        if ue8m0:
            e = rng.integers(124, 131, size=shape).astype(np.uint8)
            return e, np.ldexp(1.0, e.astype(int) - 127)
        s = rng.uniform(0.25, 2.0, size=shape).astype(np.float32)
        return s, s

    w = rng.uniform(-4, 4, size=(g, n, k)).astype(e4m3)
    # Contiguous: (M, KB) a_scale over the shared rows, (G, ceil(N/128), KB) b_scale per expert.
    a = rng.uniform(-4, 4, size=(m, k)).astype(e4m3)
    offsets = np.array([0, 17, 17, 90], np.int32)
    sa, fa = scales((m, kb))
    sb, fb = scales((g, nb, kb))
    out = deepgemm.grouped_matmul(a, w, offsets=offsets, trans_b=True, a_scale=sa, b_scale=sb, out_dtype="float32")
    for e in range(g):
        lo, hi = offsets[e], offsets[e + 1]
        if hi == lo:
            continue
        ref = (a[lo:hi].astype(np.float64) * expand_a(fa[lo:hi], hi - lo, k, "vec128")) @ \
              (w[e].astype(np.float64) * expand_a(fb[e], n, k, "blk128x128")).T
        assert close(out[lo:hi], ref, 1e-5)
    # Masked: one scale per group for a, per expert and column for b.
    am = rng.uniform(-4, 4, size=(g, m, k)).astype(e4m3)
    counts = np.array([5, 0, 96], np.int32)
    sa, fa = scales((g,))
    sb, fb = scales((g, n))
    out = deepgemm.grouped_matmul(am, w, counts=counts, trans_b=True, a_scale=sa, b_scale=sb, out_dtype="float32")
    for e in range(g):
        rows = counts[e]
        if rows == 0:
            continue
        ref = (am[e, :rows].astype(np.float64) * fa[e]) @ (w[e].astype(np.float64) * fb[e].reshape(n, 1)).T
        assert close(out[e, :rows], ref, 1e-5)
    with pytest.raises(ValueError, match="leading dimension of 3 groups"):
        deepgemm.grouped_matmul(am, w, counts=counts, trans_b=True, b_scale=np.ones((n, kb), np.float32),
                                out_dtype="float32")


def test_force_kernel_reaches_the_plan():
    """force_kernel picks the plan's kernel (here the CPU backend's, by family name); a name no
    family can run here is refused (NOT_SUPPORTED naming force_kernel), and a forced plan is not the unforced one from the cache."""
    g, m, n, k = 2, 16, 8, 12
    a, w = rand(m, k), rand(g, n, k)
    offsets = [0, 5, 16]
    out = deepgemm.grouped_matmul(a, w, offsets=offsets, trans_b=True, force_kernel="cpu")
    for e in range(g):
        lo, hi = offsets[e], offsets[e + 1]
        assert close(out[lo:hi], expert(a[lo:hi], w[e], True), 1e-5)
    deepgemm.grouped_matmul(a, w, offsets=offsets, trans_b=True)  # cached unforced plan
    with pytest.raises(deepgemm.Error, match="force_kernel"):
        deepgemm.grouped_matmul(a, w, offsets=offsets, trans_b=True, force_kernel="sm90_no_such_tile")
