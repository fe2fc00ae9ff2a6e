"""pytest tests of the hot path (deepgemm/_hotpath.py): a call with the signature of an earlier
successful one (operand types, dtypes, shapes, strides, devices and options) reads only the new
addresses. Checked here, on the CPU backend: that it is taken (the full path is made to fail),
that its results are right on new data (compared with NumPy in float64, outputs poisoned) and its
per-call values (alpha, beta, bias, stream, output allocation) are this call's, that bad input
gets the error it got before any call was remembered, that calls which needed a copy or a closed
plan / context take the full path, the fast address reader, and threads; with torch installed,
the eager shortcut around the custom operator and when it must not be taken."""
import math
import sys
import threading

import numpy as np
import pytest

import deepgemm
from deepgemm import _api, _hotpath, _tensors

RNG = np.random.default_rng()
_erf = np.vectorize(math.erf)


def rand(*shape, dtype=np.float32):
    return RNG.uniform(-1.0, 1.0, size=shape).astype(dtype)


def gelu(x):
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def close(got, ref, tol=1e-5):
    got = np.asarray(got, dtype=np.float64)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    assert np.all(np.isfinite(got))
    assert np.linalg.norm(got - ref) <= tol * max(np.linalg.norm(ref), 1e-30)


@pytest.fixture
def full_path_fails(monkeypatch):
    """Calling this makes every full-path step fail, so a call that still works took the hot path."""
    def arm():
        def boom(*args, **kwargs):
            raise AssertionError("the full path was taken")
        monkeypatch.setattr(_api, "as_view", boom)
        monkeypatch.setattr(_api.Plan, "_prepare", boom)
        monkeypatch.setattr(_api, "_run", boom)
    return arm


def test_matmul_and_linear_take_the_hot_path_with_this_calls_values(full_path_fails):
    m, n, k = 6, 10, 12
    x, w, b, c = rand(2, m, k), rand(n, k), rand(n), rand(2, m, n)
    deepgemm.matmul(x, w, trans_b=True, bias=b, activation="gelu", alpha=1.0, beta=0.5, c=c)
    deepgemm.linear(x, w, b, activation="gelu")
    out = np.full((2, m, n), np.nan, np.float32)
    deepgemm.linear(x, w, b, out=out)
    full_path_fails()
    for _ in range(2):  # new data of the same signature, other alpha / beta
        x, w, b, c = rand(2, m, k), rand(n, k), rand(n), rand(2, m, n)
        ref = x.astype(np.float64) @ w.T.astype(np.float64) + b
        y = deepgemm.matmul(x, w, trans_b=True, bias=b, activation="gelu", alpha=2, beta=-1.5, c=c)
        close(y, gelu(2 * (ref - b) + b - 1.5 * c))
        y1 = deepgemm.linear(x, w, b, activation="gelu")
        y2 = deepgemm.linear(x, w, b, activation="gelu")
        assert y1 is not y2 and not np.shares_memory(y1, y2)  # a new result each call
        close(y1, gelu(ref))
        close(y2, gelu(ref))
        out[...] = np.nan
        assert deepgemm.linear(x, w, b, out=out) is out
        close(out, ref)


def test_plan_execute_takes_the_hot_path(full_path_fails):
    m, n, k = 5, 9, 7
    with deepgemm.Context("cpu") as ctx:
        with ctx.plan(m, n, k, "float32", trans_b=True, bias="float32", activation="relu", beta=1.0) as plan:
            a, w, c, b = rand(m, k), rand(n, k), rand(m, n), rand(n)
            d = np.empty((m, n), np.float32)
            plan.execute(a, w, d, c=c, bias=b)
            plan.execute(a, w, d, c=c, bias=b, alpha=2.0, beta=0.5)
            plan.execute(a.ctypes.data, w, d, c=c, bias=b)  # a raw address is a signature too
            full_path_fails()
            for alpha, beta in ((None, None), (3.0, -1.0), (0.5, 2)):
                a, w, c, b = rand(m, k), rand(n, k), rand(m, n), rand(n)
                d = np.full((m, n), np.nan, np.float32)
                assert plan.execute(a, w, d, c=c, bias=b, alpha=alpha, beta=beta) is d
                ref = (1.0 if alpha is None else alpha) * (a.astype(np.float64) @ w.T) + \
                    (1.0 if beta is None else beta) * c + b
                close(d, np.maximum(ref, 0))
            d[...] = np.nan
            plan.execute(a.ctypes.data, w, d, c=c, bias=b)
            close(d, np.maximum(a.astype(np.float64) @ w.T + c + b, 0))


def test_workspace_on_the_hot_path(monkeypatch):
    """The workspace (CPU plans need one): given as an array or an address, or allocated per call
    when not given, also where NumPy's array type has not been met yet (raw addresses, torch)."""
    m, n, k = 4, 6, 8
    with deepgemm.Context("cpu") as ctx, ctx.plan(m, n, k, "float32", trans_b=True) as plan:
        assert plan.workspace_size > 0
        ws = np.empty(plan.workspace_size, np.int8)
        monkeypatch.delitem(_tensors._kinds, np.ndarray)
        for workspace in (None, None, None, ws, ws, ws.ctypes.data, ws.ctypes.data):
            a, w = rand(m, k), rand(n, k)
            d = np.full((m, n), np.nan, np.float32)
            plan.execute(a.ctypes.data, w.ctypes.data, d.ctypes.data, workspace=workspace)
            close(d, a.astype(np.float64) @ w.T)
        assert len(plan._calls) == 3


def test_bad_input_gets_the_same_error_after_a_good_call():
    """Each bad call is made first with nothing remembered, then after good calls of every kind
    (which fill the tables): the error, its type and its message must not change."""
    m, n, k = 4, 6, 8
    x, w, b = rand(m, k), rand(n, k), rand(n)
    ctx = deepgemm.Context("cpu")
    plan = ctx.plan(m, n, k, "float32", trans_b=True, bias="float32")
    d = np.empty((m, n), np.float32)
    bad = [
        lambda: deepgemm.linear(x.astype(np.float64), w, b),
        lambda: deepgemm.linear(x, w[:, :-1], b),
        lambda: deepgemm.linear(x, w, b[:-1]),
        lambda: deepgemm.linear(x, w, b, activation="bogus"),
        lambda: deepgemm.linear(x, w, b, out=np.empty((m, n), np.float16)),
        lambda: deepgemm.linear(x, w, b, out=np.empty((m, n + 1), np.float32)),
        lambda: deepgemm.linear(x, w, b, activation=["gelu"]),
        lambda: deepgemm.matmul(x, w, trans_b=True, bias=b, beta=1.0),
        lambda: deepgemm.matmul(x, w, trans_b=True, bias=b, c=d),
        lambda: deepgemm.matmul(x, w, bias=b),
        lambda: deepgemm.matmul(x, w, trans_b=True, out_dtype="float64"),
        lambda: deepgemm.matmul(x, w, trans_b=True, out_dtype=["float32"]),
        lambda: deepgemm.matmul(x, w, trans_b=True, trans_a=np.ones(2)),
        lambda: deepgemm.matmul(x, w.astype(np.float16), trans_b=True),
        lambda: plan.execute(x.astype(np.float16), w, d, bias=b),
        lambda: plan.execute(x, w, d[:, :-1], bias=b),
        lambda: plan.execute(x, w, d, bias=b[:-1]),
        lambda: plan.execute(x, w, d),
        lambda: plan.execute(x, w, d, bias=b, alpha=np.ones(2, np.float32)),
        lambda: plan.execute(x, w, d, bias=b, beta=1.0),
        lambda: plan.execute(x, w, d, bias=b, c=d[:, :-1]),
        lambda: plan.execute(x.T, w, d, bias=b),
        lambda: plan.execute(x, w, d, bias=True),
        lambda: plan.execute(True, w, d, bias=b),
    ]

    def errors():
        found = []
        for call in bad:
            with pytest.raises(Exception) as info:
                call()
            found.append((type(info.value), str(info.value)))
        return found

    _api._calls.clear()
    plan._calls.clear()
    cold = errors()
    for _ in range(2):  # good calls with the shapes and dtypes the bad ones are near to
        deepgemm.linear(x, w, b)
        deepgemm.linear(x, w, b, out=np.empty((m, n), np.float32))
        deepgemm.matmul(x, w, trans_b=True, bias=b)
        plan.execute(x, w, d, bias=b)
    assert _api._calls and plan._calls
    assert errors() == cold
    plan.close()
    ctx.close()


def test_random_calls_give_the_same_result_or_error_cold_and_hot():
    """Random calls (valid and not: dtypes, layouts, shapes, options), each made twice on inputs of
    the same contents in new memory: once with nothing remembered, then again (the hot path where
    the first call left a Call). Results must be bit-identical and errors identical in type and
    message."""
    import ml_dtypes

    seed = int(RNG.integers(1 << 30))
    rng = np.random.default_rng(seed)

    def pick(seq, r=rng):
        return seq[int(r.integers(len(seq)))]

    ctx = deepgemm.Context("cpu")
    plans = [ctx.plan(3, 5, 4, "float32", trans_b=True, bias="float32", activation="relu"),
             ctx.plan(3, 5, 4, "float16", trans_b=True, beta=1.0),
             ctx.plan(3, 5, 4, "bfloat16", trans_b=True, bias="bfloat16", activation="gelu")]
    np_type = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}

    def forget():
        for table in [_api._calls, ctx._calls] + [p._calls for p in plans]:
            table.clear()

    def make_call(draw):
        """The call, drawn from ``draw`` (drawing again gives the same call on the same array
        contents, in new memory), and every array it reads or writes."""
        arrays = []

        def arr(shape, dtype, layout="c"):
            base = draw.integers(-3, 4, size=shape).astype(np.float32)
            if layout == "t" and len(shape) >= 2:
                x = np.swapaxes(np.ascontiguousarray(np.swapaxes(base, -1, -2).astype(dtype)), -1, -2)
            elif layout == "gaps":  # every other column of a wider array
                x = np.zeros(shape[:-1] + (2 * shape[-1],), dtype)
                x[..., ::2] = base.astype(dtype)
                x = x[..., ::2]
            else:
                x = base.astype(dtype)
            arrays.append(x)
            return x

        dtype = pick([np.float32, np.float32, np.float16, ml_dtypes.bfloat16, np.float64], draw)
        layout = pick(["c", "c", "t", "gaps"], draw)
        activation = pick([None, "gelu", "relu", "none", "bogus"], draw)
        kind = pick(["linear", "matmul", "execute"], draw)
        m, n, k = pick([1, 3], draw), pick([2, 5], draw), pick([4, 6], draw)
        if kind == "linear":
            lead = pick([(m,), (2, m), ()], draw)
            x = arr(lead + (k,), dtype, pick(["c", layout], draw))
            w = arr((n, k), pick([dtype, np.float32], draw), layout)
            b = pick([None, (n,), (n,), (n + 1,)], draw)
            b = None if b is None else arr(b, dtype, pick(["c", "c", "gaps"], draw))
            out = np.full(lead + (n,), np.nan, x.dtype) if pick([False, True], draw) else None
            arrays.append(out)
            return kind, arrays, lambda: deepgemm.linear(x, w, b, activation=activation, out=out,
                                                         context=pick([None, ctx], draw))
        if kind == "matmul":
            ta, tb, batch = pick([False, True], draw), pick([False, True], draw), pick([(), (2,)], draw)
            a = arr(batch + ((k, m) if ta else (m, k)), dtype, layout)
            b2 = arr(pick([(), batch], draw) + ((n, k) if tb else (k, n)), pick([dtype, np.float16], draw),
                     pick(["c", layout], draw))
            bias = arr((n,), dtype) if pick([False, True], draw) else None
            c = arr(batch + (m, n), dtype) if pick([False, True], draw) else None
            alpha, beta = pick([1.0, 2, 0.5], draw), pick([0.0, 0.0, 1.5], draw)
            return kind, arrays, lambda: deepgemm.matmul(a, b2, bias=bias, activation=activation, alpha=alpha,
                                                         beta=beta, c=c, trans_a=ta, trans_b=tb)
        plan = pick(plans, draw)
        pt = np_type[plan.a_dtype]
        a, w = arr((3, 4), pick([pt, pt, np.float32], draw), layout), arr((5, 4), pt)
        bias = pick([None, (5,), (6,)], draw)
        bias = None if bias is None else arr(bias, pt)
        c = arr((3, 5), pt) if pick([False, True], draw) else None
        alpha, beta = pick([None, 2.0, 3], draw), pick([None, 0.5], draw)
        d = np.full((3, 5), np.nan, pt)
        arrays.append(d)
        return kind, arrays, lambda: plan.execute(a, w, d, c=c, bias=bias, alpha=alpha, beta=beta)

    def outcome(call):
        try:
            result = np.asarray(call())
        except Exception as e:  # noqa: BLE001  compared below
            return type(e), str(e)
        return result.dtype, result.shape, result.tobytes()

    for _ in range(300):
        sub_seed = int(rng.integers(1 << 30))
        forget()
        kind, cold_arrays, cold_call = make_call(np.random.default_rng(sub_seed))
        cold = outcome(cold_call)
        for x in cold_arrays:  # a hot call still reading the cold call's memory gets other values
            if x is not None:
                x[...] = 1
        _, _, hot_call = make_call(np.random.default_rng(sub_seed))  # the same call, new memory
        hot = outcome(hot_call)
        assert hot == cold, f"seed {seed}: {kind} {cold[:2]} then {hot[:2]}"
    for p in plans:
        p.close()
    ctx.close()


def test_calls_that_copy_are_not_remembered():
    """A call whose full path copied an operand (a bias with gaps, rows that do not fold) must
    take the full path again, and stay right."""
    m, n, k = 3, 5, 4
    _api._calls.clear()
    for _ in range(3):
        x, w = rand(2, m, k), rand(n, k)
        b = rand(2 * n)[::2]
        close(deepgemm.linear(x, w, b), x.astype(np.float64) @ w.T + b)
        x_gaps = rand(2, m + 1, k)[:, :m]  # (2, m) rows do not step evenly
        close(deepgemm.linear(x_gaps, w), x_gaps.astype(np.float64) @ w.T)
    assert not _api._calls


def test_closed_plan_and_context_are_reported_as_before():
    m, n, k = 2, 3, 4
    a, w = rand(m, k), rand(n, k)
    ctx = deepgemm.Context("cpu")
    plan = ctx.plan(m, n, k, "float32", trans_b=True)
    d = np.empty((m, n), np.float32)
    plan.execute(a, w, d)
    plan.execute(a, w, d)
    deepgemm.matmul(a, w, trans_b=True, context=ctx)
    deepgemm.linear(a, w, context=ctx)
    plan.close()
    with pytest.raises(deepgemm.ArgumentError, match="the plan is closed"):
        plan.execute(a, w, d)
    ctx.close()
    with pytest.raises(deepgemm.ArgumentError, match="the context is closed"):
        deepgemm.matmul(a, w, trans_b=True, context=ctx)
    with pytest.raises(deepgemm.ArgumentError, match="the context is closed"):
        deepgemm.linear(a, w, context=ctx)


def test_a_plan_evicted_from_the_cache_is_planned_again():
    """matmul's plan cache closes the least recently used plan past its size; a remembered call
    of that plan must then plan again, not fail."""
    ctx = deepgemm.Context("cpu")
    ctx._PLAN_CACHE_SIZE = 2
    a, w = rand(3, 4), rand(5, 4)
    close(deepgemm.matmul(a, w, trans_b=True, context=ctx), a.astype(np.float64) @ w.T)
    for n in (6, 7, 8):
        deepgemm.matmul(a, rand(n, 4), trans_b=True, context=ctx)
    close(deepgemm.matmul(a, w, trans_b=True, context=ctx), a.astype(np.float64) @ w.T)
    ctx.close()


def test_the_address_reader_agrees_with_the_array_interface():
    import ml_dtypes

    base = rand(6, 8)
    arrays = [base, base[2:, 3:], base.T, base[::2, 1::3], np.empty(0, np.float32), rand(3, 4).astype(np.float16),
              np.zeros((5, 7), ml_dtypes.bfloat16)[1:], np.asfortranarray(base), np.empty((2, 0, 3), np.int8)]
    ro = rand(4, 4)
    ro.setflags(write=False)
    arrays.append(ro)
    for x in arrays:
        assert _tensors.address(x) == x.__array_interface__["data"][0]
        assert _api.as_view(x).ptr == x.__array_interface__["data"][0]
    # NumPy's array layout as checked at first use: the cheap reader is in use (if this fails,
    # __array_interface__ is used, correct but slower: the hot path's timing would show it).
    assert _tensors._numpy_data_offset == object.__basicsize__


def test_non_native_byte_order_is_refused():
    x = rand(3, 4).astype(">f4")
    with pytest.raises(deepgemm.DTypeError, match="byte order.*astype\\('<f4'\\)"):
        deepgemm.linear(x, rand(2, 4))


def test_threads_share_the_hot_path():
    m, n, k = 8, 16, 32
    w, b = rand(n, k), rand(n)
    deepgemm.linear(rand(m, k), w, b, activation="gelu")
    with deepgemm.Context("cpu") as ctx:
        plan = ctx.plan(m, n, k, "float32", trans_b=True, bias="float32", activation="gelu")
        errors = []

        def work():
            try:
                for _ in range(20):
                    x = rand(m, k)
                    ref = gelu(x.astype(np.float64) @ w.T + b)
                    close(deepgemm.linear(x, w, b, activation="gelu"), ref)
                    d = np.full((m, n), np.nan, np.float32)
                    plan.execute(x, w, d, bias=b)
                    close(d, ref)
            except Exception as e:  # noqa: BLE001  reported below
                errors.append(e)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        plan.close()
    assert not errors, errors[0]


# ---------------------------------------------------------------------------------------------
# torch (installed or not: skipped without it). CPU tensors.

@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def test_torch_tensors_take_the_hot_path(torch, full_path_fails):
    x, w, b = torch.randn(4, 3, 16), torch.randn(8, 16), torch.randn(8)
    deepgemm.matmul(x, w, trans_b=True, bias=b)
    with torch.no_grad():
        deepgemm.linear(x, w, b, activation="gelu")
    full_path_fails()
    x, w, b = torch.randn(4, 3, 16), torch.randn(8, 16), torch.randn(8)
    ref = x.double() @ w.double().T + b.double()
    close(deepgemm.matmul(x, w, trans_b=True, bias=b).numpy(), ref.numpy())
    with torch.no_grad():
        close(deepgemm.linear(x, w, b, activation="gelu").numpy(), gelu(ref.numpy()))


def test_torch_linear_skips_the_operator_only_in_plain_eager_mode(torch, monkeypatch):
    deepgemm.register_torch_ops()
    from deepgemm import _torch

    x, w, b = torch.randn(5, 16), torch.randn(8, 16), torch.randn(8)
    ref = x.double() @ w.double().T + b.double()
    calls = []
    real_op = _torch.op
    monkeypatch.setattr(_torch, "op", lambda *args: calls.append(args) or real_op(*args))
    close(deepgemm.linear(x, w, b).numpy(), ref.numpy())
    assert not calls  # plain eager: the implementation, directly
    wp = torch.nn.Parameter(w)
    y = deepgemm.linear(x, wp, b)  # autograd would record it: the operator (no derivative)
    assert len(calls) == 1 and y.requires_grad
    with pytest.raises(RuntimeError, match="autograd"):
        y.sum().backward()
    with torch.no_grad():
        deepgemm.linear(x, wp, b)
    assert len(calls) == 1
    with torch.device("cpu"):  # a torch function mode: it expects to see the operator
        deepgemm.linear(x, w, b)
    assert len(calls) == 2
    deepgemm.linear(x, w, b, activation="")  # "" is "none" for the operator: the same here
    assert len(calls) == 2
    with pytest.raises(RuntimeError, match="activation"):  # the operator's schema refuses it
        deepgemm.linear(x, w, b, activation=5)
    assert len(calls) == 3


def test_torch_linear_under_tracing_records_the_operator(torch):
    deepgemm.register_torch_ops()
    from torch.fx.experimental.proxy_tensor import make_fx

    x, w, b = torch.randn(5, 16), torch.randn(8, 16), torch.randn(8)
    graph = make_fx(lambda x, w, b: deepgemm.linear(x, w, b, activation="gelu"))(x, w, b)
    assert "deepgemm.linear" in str(graph.graph)
    compiled = torch.compile(lambda x, w, b: deepgemm.linear(x, w, b, activation="gelu") * 2, fullgraph=True,
                             backend="eager")
    close(compiled(x, w, b).numpy(), 2 * gelu((x.double() @ w.double().T + b.double()).numpy()))


def test_torch_stream_reader_is_cached_once(torch):
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    assert _tensors.current_stream(torch.cuda.current_device()) == torch.cuda.current_stream().cuda_stream
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        assert _tensors.current_stream(torch.cuda.current_device()) == s.cuda_stream
    assert sys.modules["torch"] is torch
