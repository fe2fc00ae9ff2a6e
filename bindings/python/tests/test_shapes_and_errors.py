"""pytest tests of the one-call API's shapes and of the error family, on the CPU backend:
``linear`` (torch.nn.functional.linear's shapes, leading dimensions folded into M), ``matmul``
with 1-D and >= 4-D operands (torch.matmul's rules), the folding of a batch against a shared
weight into one GEMM, keyword-only optional operands, exceptions that are also the built-in ones
Python users catch, repr, and `with` blocks that do not hide a propagating exception. Results are
compared with NumPy in float64 on fresh random inputs."""
import math
import warnings

import numpy as np
import pytest

import deepgemm

RNG = np.random.default_rng()
_erf = np.vectorize(math.erf)


def rand(*shape, dtype=np.float32):
    return RNG.uniform(-1.0, 1.0, size=shape).astype(dtype)


def act(x, activation):
    if activation is None:
        return x
    if activation == "relu":
        return np.maximum(x, 0)
    if activation == "gelu":
        return 0.5 * x * (1 + _erf(x / math.sqrt(2)))
    if activation == "gelu_tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    if activation == "silu":
        return x / (1 + np.exp(-x))
    raise AssertionError(activation)


def close(got, ref, tol=1e-5):
    got = np.asarray(got, dtype=np.float64)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    assert np.all(np.isfinite(got))
    err = np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-30)
    assert err < tol, err


def plans_of(ctx):
    """(m, n, k, batch) of every plan matmul/linear cached on a context."""
    return [(key[0], key[1], key[2], key[13]) for key in ctx._cache]


@pytest.mark.parametrize("lead", [(), (5,), (4, 6), (2, 3, 2)])
@pytest.mark.parametrize("activation", [None, "gelu", "gelu_tanh"])
def test_linear_folds_leading_dimensions_into_m(lead, activation):
    k, n = 37, 19
    x, w, b = rand(*lead, k), rand(n, k), rand(n)
    with deepgemm.Context("cpu") as ctx:
        y = deepgemm.linear(x, w, b, activation=activation, context=ctx)
        assert y.shape == lead + (n,) and y.dtype == np.float32
        ref = act(x.astype(np.float64) @ w.T.astype(np.float64) + b, activation)
        close(y, ref)
        m = int(np.prod(lead)) if lead else 1
        assert plans_of(ctx) == [(m, n, k, 1)], "one GEMM with every leading dimension in M"
        for plan in list(ctx._cache.values()):
            plan.close()
        ctx._cache.clear()


def test_linear_gelu_is_erf_and_gelu_tanh_differs():
    x, w = rand(64, 8) * 4, np.eye(8, dtype=np.float32)
    erf = deepgemm.linear(x, w, activation="gelu")
    tanh = deepgemm.linear(x, w, activation="gelu_tanh")
    close(erf, act(x.astype(np.float64), "gelu"), 1e-6)
    close(tanh, act(x.astype(np.float64), "gelu_tanh"), 1e-6)
    assert np.max(np.abs(erf - tanh)) > 1e-4  # the two forms are told apart


def test_linear_views_out_and_errors():
    k, n = 24, 10
    base = rand(3, 9, 2 * k)
    x = base[:, ::2, :k]  # leading dimensions that do not fold: copied (NumPy only)
    w = np.asfortranarray(rand(n, k))  # a transposed-stored weight is read in place
    out = np.full((3, 5, n), np.nan, dtype=np.float32)
    y = deepgemm.linear(x, w, out=out)
    assert y is out
    close(y, x.astype(np.float64) @ w.T.astype(np.float64))
    with pytest.raises(deepgemm.ArgumentError, match="in_features"):
        deepgemm.linear(rand(3, k + 1), w)
    with pytest.raises(ValueError, match="weight"):
        deepgemm.linear(rand(3, k), rand(2, n, k))
    with pytest.raises(deepgemm.ArgumentError, match="out"):
        deepgemm.linear(rand(3, 5, k), w, out=np.zeros((3, 6, n), dtype=np.float32)[:, :5])  # rows do not fold
    with pytest.raises(TypeError):
        deepgemm.linear(rand(3, k).astype(np.float64), w.astype(np.float64))


def test_matmul_folds_a_batch_against_a_shared_weight():
    batch, m, k, n = 4, 7, 33, 12
    a, b, bias = rand(batch, m, k), rand(k, n), rand(n)
    with deepgemm.Context("cpu") as ctx:
        y = deepgemm.matmul(a, b, bias=bias, activation="relu", context=ctx)
        close(y, act(a.astype(np.float64) @ b + bias, "relu"))
        assert plans_of(ctx) == [(batch * m, n, k, 1)]
        # A transposed A cannot fold: a batch of GEMMs with a shared B.
        at = rand(batch, k, m)
        y = deepgemm.matmul(at, b, trans_a=True, context=ctx)
        close(y, np.swapaxes(at, -1, -2).astype(np.float64) @ b)
        assert (m, n, k, batch) in plans_of(ctx)
        for plan in list(ctx._cache.values()):
            plan.close()
        ctx._cache.clear()


@pytest.mark.parametrize("sa,sb", [((9,), (9, 5)), ((6, 9), (9,)), ((9,), (9,)), ((3, 6, 9), (9,)),
                                   ((9,), (3, 9, 5)), ((2, 3, 6, 9), (2, 3, 9, 5)), ((2, 3, 6, 9), (9, 5)),
                                   ((6, 9), (2, 3, 9, 5)), ((1, 3, 6, 9), (1, 9, 5)),
                                   ((2, 1, 6, 9), (1, 9, 5))])
def test_matmul_follows_torch_matmul_shapes(sa, sb):
    a, b = rand(*sa), rand(*sb)
    y = deepgemm.matmul(a, b)
    ref = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert np.shape(y) == ref.shape
    close(y, np.asarray(ref))


def test_matmul_with_c_and_vectors():
    a, b = rand(2, 3, 4, 6), rand(6, 5)
    for c in (rand(2, 3, 4, 5), rand(4, 5)):  # one C per batch member (folded with A), or one shared C
        y = deepgemm.matmul(a, b, c=c, beta=0.5)
        close(y, a.astype(np.float64) @ b + 0.5 * c)
    v, w = rand(6), rand(6)
    close(deepgemm.matmul(v, w, c=np.float32(2.0).reshape(()), beta=1.0), np.asarray(v.astype(np.float64) @ w + 2.0))


def test_matmul_shapes_it_cannot_take_say_why():
    with pytest.raises(deepgemm.ArgumentError, match="one batch stride per operand"):
        deepgemm.matmul(rand(2, 1, 4, 6), rand(1, 3, 6, 5))
    with pytest.raises(deepgemm.ArgumentError, match="do not broadcast"):
        deepgemm.matmul(rand(2, 4, 6), rand(3, 6, 5))
    with pytest.raises(ValueError, match="1-D operand cannot be transposed"):
        deepgemm.matmul(rand(6), rand(6, 5), trans_a=True)
    with pytest.raises(ValueError, match="inner dimensions"):
        deepgemm.matmul(rand(4), rand(5, 3))
    with pytest.raises(ValueError, match="at least one dimension"):
        deepgemm.matmul(np.float32(1.0).reshape(()), rand(3, 3))


def test_optional_operands_are_keyword_only():
    with deepgemm.Context("cpu") as ctx, ctx.plan(4, 5, 6, "float32", beta=1.0) as plan:
        a, b, c, d = rand(4, 6), rand(6, 5), rand(4, 5), np.full((4, 5), np.nan, dtype=np.float32)
        with pytest.raises(TypeError):
            plan.execute(a, b, d, c)  # the C API's order (A, B, C, D) cannot slip in positionally
        assert np.all(np.isnan(d))
        plan.execute(a, b, d, c=c)
        close(d, a.astype(np.float64) @ b + c)


def test_one_exception_family():
    for cls, builtin in ((deepgemm.ArgumentError, ValueError), (deepgemm.DTypeError, TypeError),
                         (deepgemm.NotSupportedError, NotImplementedError), (deepgemm.DeviceError, RuntimeError),
                         (deepgemm.OutOfMemoryError, MemoryError)):
        assert issubclass(cls, deepgemm.Error) and issubclass(cls, builtin)
    with deepgemm.Context("cpu") as ctx:
        with pytest.raises(deepgemm.ArgumentError) as info:  # the library's INVALID_ARGUMENT
            ctx.plan(8, 8, 8, "float32", lda=3)
        assert info.value.status == deepgemm.Status.INVALID_ARGUMENT and "lda" in info.value.message
        with pytest.raises(deepgemm.NotSupportedError) as info:  # the library's NOT_SUPPORTED
            ctx.plan(8, 8, 8, "float32", b_dtype="float16")
        assert info.value.status == deepgemm.Status.NOT_SUPPORTED
    with pytest.raises(deepgemm.DeviceError) as info:
        deepgemm.Context(4096)
    assert info.value.status == deepgemm.Status.NO_DEVICE
    with pytest.raises(deepgemm.ArgumentError) as info:  # found by the Python layer: same family
        deepgemm.matmul(rand(3, 4), rand(5, 6))
    assert info.value.status == deepgemm.Status.INVALID_ARGUMENT
    with pytest.raises(deepgemm.DTypeError) as info:
        deepgemm.matmul(rand(3, 4).astype(np.float64), rand(4, 6).astype(np.float64))
    assert info.value.status == deepgemm.Status.NOT_SUPPORTED and "float64" in str(info.value)
    with pytest.raises(deepgemm.ArgumentError):
        deepgemm.Context("tpu")


def test_repr():
    with deepgemm.Context("cpu") as ctx:
        assert repr(ctx) == "deepgemm.Context('cpu')"
        plan = ctx.plan(8, 16, 32, "float32", batch=2, stride_a=8 * 32, stride_b=32 * 16, stride_d=8 * 16)
        text = repr(plan)
        assert "m=8, n=16, k=32" in text and "batch=2" in text and "family='cpu'" in text, text
        plan.close()
        assert "closed" in repr(plan)
    assert "closed" in repr(ctx)


def test_with_block_does_not_hide_the_propagating_exception():
    with pytest.warns(RuntimeWarning, match="left open"):
        with pytest.raises(KeyError, match="the user's error"):
            with deepgemm.Context("cpu") as ctx:
                plan = ctx.plan(4, 4, 4, "float32")  # still alive when the block is left
                raise KeyError("the user's error")
    plan.close()
    ctx.close()
    # Without an exception in flight, closing a context with a live plan is an error, as before.
    with pytest.raises(deepgemm.ArgumentError):
        with deepgemm.Context("cpu") as ctx:
            plan = ctx.plan(4, 4, 4, "float32")
    plan.close()
    ctx.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ZeroDivisionError):  # nothing to warn about when closing works
            with deepgemm.Context("cpu") as ctx, ctx.plan(4, 4, 4, "float32"):
                1 / 0


def test_linear_as_a_torch_custom_op():
    """With torch installed (not in CI): the custom operator's schema, fake (meta) kernel and
    results on CPU tensors, checked by torch.library.opcheck. The GPU, torch.compile and CUDA-graph
    checks are in tests/packaging/gpu_torch_check.py."""
    torch = pytest.importorskip("torch")
    if not hasattr(torch.library, "custom_op"):
        pytest.skip("torch < 2.4 has no torch.library.custom_op")
    op = deepgemm.register_torch_ops()
    x, w, b = torch.randn(2, 5, 16), torch.randn(8, 16), torch.randn(8)
    y = deepgemm.linear(x, w, b, activation="gelu")
    torch.testing.assert_close(y, torch.nn.functional.gelu(torch.nn.functional.linear(x, w, b)), rtol=1e-4,
                               atol=1e-5)
    torch.library.opcheck(op, (x, w, b, "gelu"))
    torch.library.opcheck(op, (x, w, None, "none"))
