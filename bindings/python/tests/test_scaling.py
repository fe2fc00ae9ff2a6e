"""pytest tests of DGEMM_1.1 scaling through the Python binding on the CPU backend: FP8 with
per-tensor, per-row/column and DeepGEMM's 1 x 128 / 128 x 128 block scales (f32 and UE8M0, both
storage orders), INT8 dequantization, the fused block-scaled FP8 output feeding the next call,
amax, and the errors for bad scale arrays. References are NumPy float64 from the header's
definitions; inputs are fresh random values; outputs are poisoned first."""
import numpy as np
import pytest

import deepgemm

ml_dtypes = pytest.importorskip("ml_dtypes")
RNG = np.random.default_rng()
E4M3, E5M2 = ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2


def fp8(shape, dtype=E4M3, scale=4.0):
    return RNG.uniform(-scale, scale, size=shape).astype(dtype)


def blocks(x, block, axis):
    """Repeats each scale `block` times along `axis` (the scale of element i is x[i // block])."""
    return np.repeat(x, block, axis=axis)


def expand_a(sa, m, k, mode):
    """The scale of each element (i, p) of op(A) as an m x k float64 array."""
    sa = np.asarray(sa, dtype=np.float64)
    if mode == "per_tensor":
        return np.full((m, k), sa.reshape(-1)[0])
    if mode == "outer_vec":
        return np.broadcast_to(sa.reshape(m, 1), (m, k))
    if mode == "vec128":
        return blocks(sa, 128, 1)[:, :k]
    return blocks(blocks(sa, 128, 0), 128, 1)[:m, :k]


def ref_scaled(a, b, sa, sb, modes, trans_b=True):
    """sum over K blocks of sa * sb * partial sums (equivalently, the product of the scaled operands)."""
    a64 = np.asarray(a, dtype=np.float64)
    b64 = np.asarray(b, dtype=np.float64)
    if trans_b:
        b64 = b64.T
    m, k = a64.shape
    n = b64.shape[1]
    ea = expand_a(sa, m, k, modes[0]) if sa is not None else 1.0
    eb = expand_a(sb, n, k, modes[1]).T if sb is not None else 1.0
    return (a64 * ea) @ (b64 * eb)


def rel_error(got, ref):
    got = np.asarray(got, dtype=np.float64)
    assert got.shape == ref.shape and np.all(np.isfinite(got))
    return np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-30)


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (7, 130, 100), (129, 65, 257)])
@pytest.mark.parametrize("ue8m0", [False, True])
def test_deepgemm_block_scales_inferred_from_shapes(m, n, k, ue8m0):
    kb, nb = -(-k // 128), -(-n // 128)
    a, b = fp8((m, k)), fp8((n, k), E5M2)
    if ue8m0:
        sa = RNG.integers(124, 131, size=(m, kb)).astype(np.uint8)
        sb = RNG.integers(124, 131, size=(nb, kb)).astype(np.uint8)
        fa, fb = np.ldexp(1.0, sa.astype(int) - 127), np.ldexp(1.0, sb.astype(int) - 127)
    else:
        sa = RNG.uniform(0.25, 4, size=(m, kb)).astype(np.float32)
        sb = RNG.uniform(0.25, 4, size=(nb, kb)).astype(np.float32)
        fa, fb = sa, sb
    got = deepgemm.matmul(a, b, trans_b=True, a_scale=sa, b_scale=sb, out_dtype="float32")
    modes = ("vec128", "blk128x128" if nb != n else "vec128")
    assert rel_error(got, ref_scaled(a, b, fa, fb, modes)) < 1e-6


def test_mn_major_scales_and_per_tensor_and_per_channel():
    m, n, k = 37, 300, 200
    a, b = fp8((m, k)), fp8((n, k))
    kb = 2
    # DeepGEMM's MN-major, TMA-aligned A scales: a transposed view of a (kb, align(m, 4)) array.
    storage = RNG.uniform(0.5, 2, size=(kb, 40)).astype(np.float32)
    sa = storage[:, :m].T
    sb = RNG.uniform(0.5, 2, size=(n,)).astype(np.float32)  # per output channel
    got = deepgemm.matmul(a, b, trans_b=True, a_scale=sa, b_scale=sb, out_dtype="bfloat16")
    ref = ref_scaled(a, b, np.ascontiguousarray(sa), sb, ("vec128", "outer_vec"))
    assert rel_error(got, ref) < 1e-2
    got = deepgemm.matmul(a, b, trans_b=True, a_scale=0.5, b_scale=np.float32([3.0]), out_dtype="float32")
    assert rel_error(got, 1.5 * ref_scaled(a, b, None, None, None)) < 1e-6


def test_int8_dequantized_per_token_per_channel_with_bias():
    m, n, k = 33, 70, 150
    a = RNG.integers(-127, 128, size=(m, k)).astype(np.int8)
    b = RNG.integers(-127, 128, size=(n, k)).astype(np.int8)
    sa = RNG.uniform(1e-3, 1e-2, size=(m, 1)).astype(np.float32)
    sb = RNG.uniform(1e-3, 1e-2, size=(1, n)).astype(np.float32)
    bias = RNG.uniform(-1, 1, size=(n,)).astype(np.float32)
    got = deepgemm.matmul(a, b, trans_b=True, a_scale=sa, b_scale=sb, bias=bias, out_dtype="float32")
    exact = a.astype(np.int64) @ b.astype(np.int64).T
    ref = exact * sa.astype(np.float64) * sb.astype(np.float64) + bias
    assert rel_error(got, ref) < 1e-6
    # Without scales the i32 output is exact.
    assert np.array_equal(deepgemm.matmul(a, b, trans_b=True), exact.astype(np.int32))


@pytest.mark.parametrize("scale_type", ["float32", "ue8m0"])
def test_fused_block_scaled_output_feeds_the_next_layer(scale_type):
    m, n, k = 20, 300, 64
    x, w1 = RNG.uniform(-1, 1, size=(m, k)).astype(np.float32), RNG.uniform(-1, 1, size=(n, k)).astype(np.float32)
    amax = np.full(1, -1.0, dtype=np.float32)
    out = np.full((m, n), np.nan, dtype=E4M3)
    y, ys = deepgemm.matmul(x, w1, trans_b=True, out=out, out_dtype="float8_e4m3fn", d_scale=scale_type, amax=amax)
    assert y is out and ys.shape == (m, 3) and ys.strides[0] == ys.itemsize  # MN-major
    assert ys.dtype == (np.float32 if scale_type == "float32" else np.uint8)
    ref = np.asarray(x, np.float64) @ np.asarray(w1, np.float64).T
    assert np.isclose(amax[0], np.abs(ref).max(), rtol=1e-6)
    # Each row's 128-column block: scale = amax / 448 (UE8M0: rounded up to a power of two).
    scales = ys.astype(np.float64) if scale_type == "float32" else np.ldexp(1.0, ys.astype(int) - 127)
    block_amax = np.stack([np.abs(ref[:, j:j + 128]).max(axis=1) for j in range(0, n, 128)], axis=1)
    if scale_type == "float32":
        assert np.allclose(scales, block_amax / 448, rtol=1e-6)
    else:
        assert np.all(scales * 448 >= block_amax) and np.all(scales * 224 < block_amax)
    deq = np.asarray(y, np.float64) * blocks(scales, 128, 1)[:, :n]
    assert rel_error(deq, ref) < 0.07  # e4m3 keeps 3 mantissa bits
    # The next layer takes y and its scales as they are.
    w2 = fp8((16, n))
    z = deepgemm.matmul(y, w2, trans_b=True, a_scale=ys, out_dtype="float32")
    assert rel_error(z, deq @ np.asarray(w2, np.float64).T) < 1e-6


def test_plan_api_with_explicit_scales_and_errors():
    m, n, k = 8, 16, 256
    a, b = fp8((m, k)), fp8((n, k))
    with deepgemm.Context("cpu") as ctx:
        with ctx.plan(m, n, k, "float8_e4m3fn", trans_b=True, out_dtype="float32",
                      a_scale=deepgemm.Scale("vec128", layout="k"), b_scale="blk128x128") as plan:
            assert plan.scales["a"].rows == m and plan.scales["a"].cols == 2 and plan.scales["b"].cols == 2
            assert "a_scale=vec128(f32,k" in plan.describe()["problem"]
            sa = RNG.uniform(0.5, 2, size=(m, 2)).astype(np.float32)
            sb = RNG.uniform(0.5, 2, size=(1, 2)).astype(np.float32)  # one row of 128 x 128 blocks
            d = np.full((m, n), np.nan, dtype=np.float32)
            plan.execute(a, b, d, a_scale=sa, b_scale=sb)
            assert rel_error(d, ref_scaled(a, b, sa, sb, ("vec128", "blk128x128"))) < 1e-6
            # The wrong storage order, shape or dtype is the caller's INVALID_ARGUMENT, D untouched.
            d[:] = np.nan
            for bad, what in ((np.ascontiguousarray(sa.T), "a_scale has shape (2, 8)"),
                              (sa.astype(np.float64), "float64"),
                              (np.asfortranarray(sa), "strides")):
                with pytest.raises((deepgemm.Error, ValueError, TypeError)) as err:
                    plan.execute(a, b, d, a_scale=bad, b_scale=sb)
                assert what in str(err.value)
            assert np.all(np.isnan(d))
            # A missing scale is the library's INVALID_ARGUMENT naming it.
            with pytest.raises(deepgemm.Error) as err:
                plan.execute(a, b, d, a_scale=sa)
            assert err.value.status == deepgemm.Status.INVALID_ARGUMENT
            assert "scale_args->b_scale is NULL" in err.value.message
            assert np.all(np.isnan(d))
        # A block-scaled output needs an FP8 D: NOT_SUPPORTED from the library.
        with pytest.raises(deepgemm.Error) as err:
            ctx.plan(m, n, k, "float32", d_scale="float32")
        assert err.value.status == deepgemm.Status.NOT_SUPPORTED and "d_scale" in err.value.message


def test_batched_scales_with_torch_matmul_shapes():
    """Batch dimensions of scale arrays follow the operands': a per-tensor scale keeps the batch
    folded into the rows of one GEMM; per-row or per-batch scales keep the batch (folding them
    would misplace the scales); D's block scales come back with the result's batch shape."""
    batch, m, n, k = 3, 5, 7, 200
    a, b = fp8((batch, m, k)), fp8((n, k))
    ref = np.asarray(a, np.float64) @ np.asarray(b, np.float64).T
    assert rel_error(deepgemm.matmul(a, b, trans_b=True, a_scale=0.5, out_dtype="float32"), 0.5 * ref) < 1e-6
    sa = RNG.uniform(0.5, 2, size=(batch, m, 1)).astype(np.float32)  # per token, per batch
    assert rel_error(deepgemm.matmul(a, b, trans_b=True, a_scale=sa, out_dtype="float32"), sa * ref) < 1e-6
    shared = RNG.uniform(0.5, 2, size=(m, 2)).astype(np.float32)  # 1 x 128, one tensor for the batch
    got = deepgemm.matmul(a, b, trans_b=True, a_scale=shared, out_dtype="float32")
    want = np.stack([ref_scaled(a[i], b, shared, None, ("vec128", None)) for i in range(batch)])
    assert rel_error(got, want) < 1e-6
    with pytest.raises(deepgemm.ArgumentError, match="a_scale has batch dimensions"):
        deepgemm.matmul(a, b, trans_b=True, a_scale=np.ones((2, m, 1), np.float32))
    x = RNG.uniform(-1, 1, size=(2, 3, m, k)).astype(np.float32)
    w = RNG.uniform(-1, 1, size=(260, k)).astype(np.float32)
    y, ys = deepgemm.matmul(x, w, trans_b=True, out_dtype="float8_e4m3fn", d_scale="float32")
    assert y.shape == (2, 3, m, 260) and ys.shape == (2, 3, m, 3)
    deq = np.asarray(y, np.float64) * blocks(ys.astype(np.float64), 128, -1)[..., :260]
    assert rel_error(deq, x.astype(np.float64) @ w.T.astype(np.float64)) < 0.07
    w2 = fp8((16, 260))
    z = deepgemm.matmul(y, w2, trans_b=True, a_scale=ys, out_dtype="float32")
    assert rel_error(z, deq @ np.asarray(w2, np.float64).T) < 1e-6


def test_matmul_rejects_scale_shapes_it_cannot_read():
    a, b = fp8((5, 300)), fp8((6, 300))
    with pytest.raises(ValueError, match=r"a_scale has shape \(5, 2\)"):
        deepgemm.matmul(a, b, trans_b=True, a_scale=np.ones((5, 2), np.float32))  # K has 3 blocks
    with pytest.raises(TypeError, match="scales are float32"):
        deepgemm.matmul(a, b, trans_b=True, b_scale=np.ones(6, np.float64))


def test_torch_float8_tensors():
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "float8_e4m3fn"):
        pytest.skip("this torch has no float8")
    m, n, k = 9, 20, 130
    a = torch.randn(m, k).to(torch.float8_e4m3fn)
    b = torch.randn(n, k).to(torch.float8_e4m3fn)
    sa, sb = torch.rand(m, 2) + 0.5, torch.rand(1, 2) + 0.5
    got = deepgemm.matmul(a, b, trans_b=True, a_scale=sa, b_scale=sb, out_dtype="float32")
    ref = ref_scaled(a.float().numpy(), b.float().numpy(), sa.numpy(), sb.numpy(), ("vec128", "blk128x128"))
    assert rel_error(got.numpy(), ref) < 1e-6
