"""pytest tests of the Python binding on the CPU backend: every result is compared with NumPy in
float64 (relative Frobenius error, per-dtype thresholds), on fresh random inputs, with outputs
poisoned beforehand. Run with the built package on PYTHONPATH (CTest test `bindings_python`)."""
import json
import math
import threading

import numpy as np
import pytest

import deepgemm

RNG = np.random.default_rng()
_erf = np.vectorize(math.erf)

# Relative Frobenius error allowed, by output dtype (the output rounding dominates).
TOLERANCE = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1.5e-2}


def rand(*shape, dtype=np.float32):
    return RNG.uniform(-1.0, 1.0, size=shape).astype(dtype)


def reference(a, b, *, bias=None, activation=None, alpha=1.0, beta=0.0, c=None, trans_a=False, trans_b=False):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if trans_a:
        a = np.swapaxes(a, -1, -2)
    if trans_b:
        b = np.swapaxes(b, -1, -2)
    x = alpha * (a @ b)
    if beta:
        x = x + beta * np.asarray(c, dtype=np.float64)
    if bias is not None:
        x = x + np.asarray(bias, dtype=np.float64)
    if activation == "relu":
        return np.maximum(x, 0)
    if activation in ("gelu", "gelu_erf"):
        return 0.5 * x * (1 + _erf(x / math.sqrt(2)))
    if activation == "gelu_tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    if activation == "silu":
        return x / (1 + np.exp(-x))
    return x


def rel_error(got, ref):
    got = np.asarray(got, dtype=np.float64)
    assert got.shape == ref.shape
    assert np.all(np.isfinite(got)), "non-finite output (an element was not written?)"
    return np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-30)


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (7, 15, 16), (17, 63, 65), (64, 1, 129), (33, 17, 1)])
@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
def test_f32_shapes_and_transposes(m, n, k, trans_a, trans_b):
    a = rand(*((k, m) if trans_a else (m, k)))
    b = rand(*((n, k) if trans_b else (k, n)))
    got = deepgemm.matmul(a, b, trans_a=trans_a, trans_b=trans_b)
    assert got.dtype == np.float32 and got.shape == (m, n)
    assert rel_error(got, reference(a, b, trans_a=trans_a, trans_b=trans_b)) < TOLERANCE["float32"]


@pytest.mark.parametrize("activation", [None, "relu", "gelu", "gelu_tanh", "silu"])
def test_bias_and_activations(activation):
    m, n, k = 19, 23, 37
    a, w, bias = rand(m, k), rand(n, k), rand(n)
    out = np.full((m, n), np.nan, dtype=np.float32)  # poisoned
    got = deepgemm.matmul(a, w, trans_b=True, bias=bias, activation=activation, out=out)
    assert got is out
    ref = reference(a, w, trans_b=True, bias=bias, activation=activation)
    assert rel_error(got, ref) < TOLERANCE["float32"]


def test_alpha_beta_c():
    m, n, k = 31, 9, 40
    a, b, c = rand(m, k), rand(k, n), rand(m, n)
    bias = rand(n)
    got = deepgemm.matmul(a, b, alpha=0.5, beta=-1.25, c=c, bias=bias, activation="relu")
    ref = reference(a, b, alpha=0.5, beta=-1.25, c=c, bias=bias, activation="relu")
    assert rel_error(got, ref) < TOLERANCE["float32"]
    # The cached plan reads alpha/beta at execute time: new values, same plan.
    got = deepgemm.matmul(a, b, alpha=2.0, beta=0.5, c=c)
    assert rel_error(got, reference(a, b, alpha=2.0, beta=0.5, c=c)) < TOLERANCE["float32"]


def test_empty_dimensions():
    """k = 0: the product is empty, D = act(bias) (BLAS semantics); m = 0 or n = 0: nothing to do."""
    bias = rand(6)
    got = deepgemm.matmul(rand(4, 0), rand(0, 6), bias=bias, activation="relu")
    np.testing.assert_allclose(got, np.broadcast_to(np.maximum(bias, 0), (4, 6)), rtol=0, atol=0)
    assert deepgemm.matmul(rand(0, 5), rand(5, 3)).shape == (0, 3)
    assert deepgemm.matmul(rand(2, 5), rand(5, 0)).shape == (2, 0)


def test_non_contiguous_views():
    base_a, base_b = rand(40, 50), rand(60, 80)
    a = base_a[3:20, 5:30]          # row stride 50: a leading dimension larger than needed
    b = np.asfortranarray(rand(25, 11))  # column-major storage: passed as a transposed operand
    got = deepgemm.matmul(a, b)
    assert rel_error(got, reference(a, b)) < TOLERANCE["float32"]
    c = base_b[::2, ::3][:17, :25]   # neither dimension contiguous: copied
    got = deepgemm.matmul(c, b)
    assert rel_error(got, reference(c, b)) < TOLERANCE["float32"]


def test_batched_and_broadcast():
    batch, m, n, k = 3, 12, 10, 21
    a, b = rand(batch, m, k), rand(k, n)  # b is shared by the batch
    got = deepgemm.matmul(a, b)
    assert got.shape == (batch, m, n)
    assert rel_error(got, reference(a, b)) < TOLERANCE["float32"]
    b3 = rand(batch, n, k)
    got = deepgemm.matmul(a, b3, trans_b=True, activation="silu")
    assert rel_error(got, reference(a, b3, trans_b=True, activation="silu")) < TOLERANCE["float32"]


def test_f16():
    m, n, k = 33, 48, 70
    a, b, bias = rand(m, k, dtype=np.float16), rand(k, n, dtype=np.float16), rand(n, dtype=np.float16)
    got = deepgemm.matmul(a, b, bias=bias, activation="gelu")
    assert got.dtype == np.float16
    assert rel_error(got, reference(a, b, bias=bias, activation="gelu")) < TOLERANCE["float16"]
    got = deepgemm.matmul(a, b, out_dtype=np.float32)
    assert got.dtype == np.float32
    assert rel_error(got, reference(a, b)) < TOLERANCE["float32"]


def test_bf16_with_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    m, n, k = 29, 31, 64
    a = rand(m, k).astype(ml_dtypes.bfloat16)
    w = rand(n, k).astype(ml_dtypes.bfloat16)
    bias = rand(n).astype(ml_dtypes.bfloat16)
    got = deepgemm.matmul(a, w, trans_b=True, bias=bias, activation="gelu")
    assert got.dtype == ml_dtypes.bfloat16
    ref = reference(a.astype(np.float64), w.astype(np.float64), trans_b=True, bias=bias.astype(np.float64),
                    activation="gelu")
    assert rel_error(got.astype(np.float64), ref) < TOLERANCE["bfloat16"]


@pytest.mark.parametrize("fp8", ["float8_e4m3fn", "float8_e5m2"])
def test_fp8_with_ml_dtypes(fp8):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    t = getattr(ml_dtypes, fp8)
    m, n, k = 16, 24, 48
    a, b = rand(m, k).astype(t), rand(k, n).astype(t)
    got = deepgemm.matmul(a, b)  # fp8 inputs default to a bf16 output
    assert got.dtype == ml_dtypes.bfloat16
    ref = reference(a.astype(np.float64), b.astype(np.float64))
    assert rel_error(got.astype(np.float64), ref) < TOLERANCE["bfloat16"]


def test_int8():
    m, n, k = 9, 13, 77
    a = RNG.integers(-128, 128, size=(m, k), dtype=np.int8)
    b = RNG.integers(-128, 128, size=(k, n), dtype=np.int8)
    got = deepgemm.matmul(a, b)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, a.astype(np.int64) @ b.astype(np.int64))  # exact


def test_dlpack_producer_on_cpu():
    """An object that only speaks DLPack (no NumPy type) goes through the capsule reader."""
    class OnlyDLPack:
        def __init__(self, array):
            self._array = array

        def __dlpack__(self, stream=None):
            return self._array.__dlpack__()

        def __dlpack_device__(self):
            return self._array.__dlpack_device__()

    a, b = rand(11, 14), rand(20, 14)
    out = np.full((11, 20), np.nan, dtype=np.float32)
    deepgemm.matmul(OnlyDLPack(a), OnlyDLPack(b[:, :]), trans_b=True, out=out)
    assert rel_error(out, reference(a, b, trans_b=True)) < TOLERANCE["float32"]
    view = deepgemm._tensors.as_view(OnlyDLPack(b[2:, 1:]))
    assert view.shape == (18, 13) and view.strides == (14, 1) and view.dtype == "float32"


def test_plan_once_execute_many_and_threads():
    m, n, k = 24, 40, 56
    with deepgemm.Context("cpu") as ctx:
        assert ctx.device == "cpu"
        with ctx.plan(m, n, k, "float32", trans_b=True, bias="float32", activation="gelu_tanh") as plan:
            assert plan.shape == (m, n, k) and plan.workspace_size >= 0
            info = plan.describe()
            assert info["backend"] == "cpu"
            json.dumps(info)
            inputs = [(rand(m, k), rand(n, k), rand(n)) for _ in range(8)]
            outs = [np.full((m, n), np.nan, dtype=np.float32) for _ in inputs]
            errors = []

            def work(i):
                try:
                    a, b, bias = inputs[i]
                    plan.execute(a, b, outs[i], bias=bias)
                except Exception as e:  # pragma: no cover - reported below
                    errors.append(e)

            threads = [threading.Thread(target=work, args=(i,)) for i in range(len(inputs))]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert not errors, errors
            for (a, b, bias), d in zip(inputs, outs):
                ref = reference(a, b, trans_b=True, bias=bias, activation="gelu_tanh")
                assert rel_error(d, ref) < TOLERANCE["float32"]
            # The plan checks what it is given.
            with pytest.raises(ValueError, match="shape"):
                plan.execute(rand(m, k + 1), inputs[0][1], outs[0], bias=inputs[0][2])
            with pytest.raises(TypeError, match="dtype"):
                plan.execute(inputs[0][0].astype(np.float16), inputs[0][1], outs[0], bias=inputs[0][2])
        assert plan._handle is None


def test_plans_differing_only_in_the_last_bit_of_alpha_are_distinct():
    """A cached plan must never change a result: the plan caches (the context's, and matmul's)
    key on the exact bits of alpha and beta, not on a rounded print of them."""
    a, b = np.ones((1, 1), dtype=np.float32), np.full((1, 1), 1e6, dtype=np.float32)
    alpha = np.float32(1.0000049)
    with deepgemm.Context("cpu") as ctx:
        for value in (1.0, alpha, 1.0):
            with ctx.plan(1, 1, 1, "float32", alpha=float(value)) as plan:
                d = np.full((1, 1), np.nan, dtype=np.float32)
                plan.execute(a, b, d)
                assert d[0, 0] == np.float32(value) * np.float32(1e6)
    for value in (1.0, alpha, 1.0):
        assert deepgemm.matmul(a, b, alpha=float(value))[0, 0] == np.float32(value) * np.float32(1e6)


def test_library_errors_carry_status_and_message():
    with deepgemm.Context("cpu") as ctx:
        with pytest.raises(deepgemm.Error) as info:
            ctx.plan(8, 8, 8, "float32", lda=3)
        assert info.value.status == deepgemm.Status.INVALID_ARGUMENT
        assert "lda" in info.value.message
        assert "INVALID_ARGUMENT" in str(info.value)
        with pytest.raises(deepgemm.Error) as info:
            ctx.plan(8, 8, 8, "float32", b_dtype="float16")
        assert info.value.status == deepgemm.Status.NOT_SUPPORTED
        # A plan missing its bias at execute: INVALID_ARGUMENT, output untouched.
        plan = ctx.plan(4, 5, 6, "float32", bias="float32")
        d = np.full((4, 5), np.nan, dtype=np.float32)
        with pytest.raises(deepgemm.Error) as info:
            plan.execute(rand(4, 6), rand(6, 5), d)
        assert info.value.status == deepgemm.Status.INVALID_ARGUMENT
        assert np.all(np.isnan(d))
        # The context refuses to go while a plan is alive.
        with pytest.raises(deepgemm.Error) as info:
            capi_status = deepgemm.capi.dgemm_context_destroy(ctx.handle)
            deepgemm._api._check(capi_status)
        assert info.value.status == deepgemm.Status.INVALID_ARGUMENT
        plan.close()
    with pytest.raises(deepgemm.Error) as info:
        deepgemm.Context(4096)  # no machine has that many GPUs
    assert info.value.status == deepgemm.Status.NO_DEVICE


def test_python_side_errors():
    with pytest.raises(ValueError, match="inner dimensions"):
        deepgemm.matmul(rand(3, 4), rand(5, 6))
    with pytest.raises(ValueError, match="beta"):
        deepgemm.matmul(rand(3, 4), rand(4, 6), beta=1.0)
    with pytest.raises(TypeError):
        deepgemm.matmul(rand(3, 4).astype(np.float64), rand(4, 6).astype(np.float64))
    with pytest.raises(ValueError, match="activation"):
        deepgemm.Context("cpu").plan(2, 2, 2, activation="tanh")
    with pytest.raises(ValueError, match="device"):
        deepgemm.Context("tpu")


def test_gpu_objects_are_routed_to_a_cuda_context():
    """Without a GPU, an object exposing __cuda_array_interface__ must reach the library's CUDA
    path and fail there with NO_DEVICE (not be read as host memory)."""
    with deepgemm.Context("auto") as ctx:
        if ctx.device != "cpu":
            pytest.skip("a GPU is present")

    class FakeCuda:
        def __init__(self, shape):
            self.__cuda_array_interface__ = {"shape": shape, "typestr": "<f4", "data": (0x1000, False),
                                             "version": 3, "strides": None, "stream": 1}

    with pytest.raises(deepgemm.Error) as info:
        deepgemm.matmul(FakeCuda((4, 8)), FakeCuda((8, 2)), out=FakeCuda((4, 2)))
    assert info.value.status == deepgemm.Status.NO_DEVICE
    view = deepgemm._tensors.as_view(FakeCuda((4, 8)))
    assert view.device == "cuda:0" and view.stream == 1 and view.strides == (8, 1)


def test_low_level_capi():
    capi = deepgemm.capi
    assert capi.dgemm_version() == capi.DGEMM_VERSION_NUMBER
    assert capi.dgemm_status_string(capi.DGEMM_STATUS_NO_DEVICE) == "DGEMM_STATUS_NO_DEVICE"
    p = capi.dgemm_problem_t()
    assert capi.dgemm_problem_init(p) == 0
    assert (p.m, p.n, p.k, p.a_type, p.batch_count) == (1, 1, 1, capi.DGEMM_DTYPE_BF16, 1)


def test_torch_tensors_are_read_directly(monkeypatch):
    """The torch path (data_ptr/stride/dtype, torch.empty for the result) with a stand-in torch
    module backed by NumPy, so it runs where torch is not installed; CPU tensors only."""
    import sys
    import types

    if "torch" in sys.modules:
        pytest.skip("real torch imported")

    class DType:
        def __init__(self, name):
            self.text = "torch." + name

        def __str__(self):
            return self.text

    class Device:
        type, index = "cpu", None

    class Tensor:
        def __init__(self, array):
            self.array = array
            self.dtype = DType(array.dtype.name)
            self.device = Device()
            self.shape = array.shape
            self.is_cuda = False

        def data_ptr(self):
            return self.array.ctypes.data

        def stride(self):
            return tuple(s // self.array.itemsize for s in self.array.strides)

    fake = types.ModuleType("torch")
    fake.Tensor = Tensor
    fake.float32 = np.float32
    fake.empty = lambda shape, dtype, device: Tensor(np.full(shape, np.nan, dtype=dtype))
    monkeypatch.setitem(sys.modules, "torch", fake)

    a, w, bias = rand(13, 40), rand(17, 40), rand(17)
    y = deepgemm.matmul(Tensor(a), Tensor(w), trans_b=True, bias=Tensor(bias), activation="gelu")
    assert isinstance(y, Tensor)
    assert rel_error(y.array, reference(a, w, trans_b=True, bias=bias, activation="gelu")) < TOLERANCE["float32"]
    # A transposed view (torch's w.t()) arrives as strides (1, ld).
    y = deepgemm.matmul(Tensor(a), Tensor(w.T))
    assert rel_error(y.array, reference(a, w.T)) < TOLERANCE["float32"]


# ---------------------------------------------------------------------------------------------
# Execute-time epilogue values: output scale, int8 zero point, host and device alpha/beta.
# Inputs are small integers so that every product and sum is exact in float32: the only rounding
# is the output conversion, whose result deepgemm.h defines exactly (round half to even, then the
# zero point, then saturation), so those results are compared bit for bit.

def small_ints(*shape, lo=-6, hi=7, dtype=np.float32):
    return RNG.integers(lo, hi, size=shape).astype(dtype)


def quantize_i8(z, zero_point=0):
    return np.clip(np.rint(z) + zero_point, -128, 127).astype(np.int8)  # rint: half to even


@pytest.mark.parametrize("mode", ["per_tensor", "per_row", "per_column"])
def test_int8_output_scale_and_zero_point(mode):
    m, n, k = 13, 17, 5
    a, b = small_ints(m, k), small_ints(k, n)
    acc = a.astype(np.float64) @ b.astype(np.float64)
    # Scales of 1/4 and 1/2 put many results exactly on .5 ties; 4 drives some past +-127.
    shape = {"per_tensor": (1,), "per_row": (m, 1), "per_column": (n,)}[mode]
    scale = RNG.choice(np.array([0.25, 0.5, 1.5, 4.0], dtype=np.float32), size=shape)
    scale.flat[0] = 0.5  # odd sums times 1/2 are ties, whatever else was drawn
    zp = RNG.integers(-20, 21, size=shape).astype(np.int32)
    out = np.full((m, n), 99, dtype=np.int8)  # poisoned (99 is rarely the answer: checked below)
    got = deepgemm.matmul(a, b, scale=scale, zero_point=zp, out_dtype=np.int8, out=out)
    ref = quantize_i8(acc * scale, zp)
    np.testing.assert_array_equal(got, ref)
    assert np.any(np.abs(acc * scale - np.floor(acc * scale)) == 0.5), "no ties tested"
    # The same through Plan/Context, with another scale and zero point on the same plan.
    with deepgemm.Context("cpu") as ctx:
        with ctx.plan(m, n, k, "float32", out_dtype="int8", scale=mode, zero_point=True) as plan:
            assert plan.scale_length == {"per_tensor": 1, "per_row": m, "per_column": n}[mode]
            for _ in range(2):
                s2 = (RNG.integers(1, 8, size=plan.scale_length) / 4).astype(np.float32)
                z2 = RNG.integers(-128, 128, size=plan.scale_length).astype(np.int32)
                d = np.full((m, n), 99, dtype=np.int8)
                plan.execute(a, b, d, scale=s2, zero_point=z2)
                s2b, z2b = (s2.reshape(m, 1), z2.reshape(m, 1)) if mode == "per_row" else (s2, z2)
                np.testing.assert_array_equal(d, quantize_i8(acc * s2b, z2b))


def test_int8_inputs_to_int8_output():
    m, n, k = 7, 9, 33
    a = RNG.integers(-128, 128, size=(m, k), dtype=np.int8)
    b = RNG.integers(-128, 128, size=(k, n), dtype=np.int8)
    acc = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.full(n, 1.0 / 1024, dtype=np.float32) * RNG.integers(1, 4, size=n).astype(np.float32)
    got = deepgemm.matmul(a, b, scale=scale, zero_point=3, out_dtype="int8")
    assert got.dtype == np.int8
    np.testing.assert_array_equal(got, quantize_i8(acc * scale, 3))


def test_float_output_scale_and_alpha_beta():
    m, n, k = 11, 6, 9
    a, b, c = rand(m, k), rand(k, n), rand(m, n)
    scale = rand(m, 1) + 2.0
    got = deepgemm.matmul(a, b, alpha=0.75, beta=-0.5, c=c, scale=scale, activation="relu")
    ref = reference(a, b, alpha=0.75, beta=-0.5, c=c, activation="relu") * scale
    assert rel_error(got, ref) < TOLERANCE["float32"]
    got = deepgemm.matmul(a, b, scale=3.0)
    assert rel_error(got, reference(a, b) * 3.0) < TOLERANCE["float32"]


@pytest.mark.parametrize("fp8", ["float8_e4m3fn", "float8_e5m2"])
def test_fp8_output_rounding_and_saturation(fp8):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    t = getattr(ml_dtypes, fp8)
    m, n, k = 12, 10, 4
    a, b = small_ints(m, k), small_ints(k, n)
    acc = a.astype(np.float64) @ b.astype(np.float64)
    largest = float(ml_dtypes.finfo(t).max)
    scale = np.float32(largest / 20)  # |acc| goes past 20: some results saturate
    got = deepgemm.matmul(a, b, scale=scale, out_dtype=fp8)
    assert got.dtype == t
    z = acc * np.float64(scale)
    assert np.any(np.abs(z) > largest), "no saturation tested"
    ref = np.clip(z, -largest, largest).astype(t)  # ml_dtypes rounds to nearest even
    np.testing.assert_array_equal(got.astype(np.float64), ref.astype(np.float64))


def test_device_and_host_scalars_per_call():
    """alpha/beta as one-element arrays are read through pointers (DGEMM_SCALARS_DEVICE; on the
    CPU backend "device" memory is host memory); as floats they override the plan's values."""
    m, n, k = 8, 12, 10
    a, b, c = rand(m, k), rand(k, n), rand(m, n)
    with deepgemm.Context("cpu") as ctx, ctx.plan(m, n, k, "float32", alpha=3.0, beta=1.0) as plan:
        d = np.full((m, n), np.nan, dtype=np.float32)
        plan.execute(a, b, d, c=c)
        assert rel_error(d, reference(a, b, alpha=3.0, beta=1.0, c=c)) < TOLERANCE["float32"]
        alpha, beta = np.array([-0.5], dtype=np.float32), np.array([2.0], dtype=np.float32)
        d[:] = np.nan
        plan.execute(a, b, d, c=c, alpha=alpha, beta=beta)
        assert rel_error(d, reference(a, b, alpha=-0.5, beta=2.0, c=c)) < TOLERANCE["float32"]
        alpha[0], beta[0] = 1.25, -1.0  # the pointers are read at each call
        d[:] = np.nan
        plan.execute(a, b, d, c=c, alpha=alpha, beta=beta)
        assert rel_error(d, reference(a, b, alpha=1.25, beta=-1.0, c=c)) < TOLERANCE["float32"]
        d[:] = np.nan
        plan.execute(a, b, d, c=c, alpha=0.25, beta=0.5)
        assert rel_error(d, reference(a, b, alpha=0.25, beta=0.5, c=c)) < TOLERANCE["float32"]
        d[:] = np.nan
        plan.execute(a, b, d, c=c, alpha=2, beta=np.float32(-0.5))  # numbers of any kind are host values
        assert rel_error(d, reference(a, b, alpha=2.0, beta=-0.5, c=c)) < TOLERANCE["float32"]
        with pytest.raises(ValueError, match="device scalars"):
            plan.execute(a, b, d, c=c, alpha=alpha, beta=0.5)
        with pytest.raises(deepgemm.Error) as info:
            plan.execute(a, b, d, c=c, alpha=np.ones(2, dtype=np.float32), beta=beta)
        assert info.value.status == deepgemm.Status.INVALID_ARGUMENT


def test_epilogue_vector_errors():
    m, n, k = 5, 7, 3
    a, b = small_ints(m, k), small_ints(k, n)
    with deepgemm.Context("cpu") as ctx:
        plan = ctx.plan(m, n, k, "float32", out_dtype="int8", scale="per_column", zero_point=True)
        d = np.full((m, n), 99, dtype=np.int8)
        good_s, good_z = np.ones(n, dtype=np.float32), np.zeros(n, dtype=np.int32)
        for scale, zp in ((np.ones(n - 1, dtype=np.float32), good_z), (good_s, np.zeros(m, dtype=np.int32))):
            with pytest.raises(deepgemm.Error) as info:
                plan.execute(a, b, d, scale=scale, zero_point=zp)
            assert info.value.status == deepgemm.Status.INVALID_ARGUMENT
        # Missing vectors: the library's own INVALID_ARGUMENT, output untouched.
        with pytest.raises(deepgemm.Error) as info:
            plan.execute(a, b, d, scale=good_s)
        assert info.value.status == deepgemm.Status.INVALID_ARGUMENT and "zero_point" in info.value.message
        with pytest.raises(deepgemm.Error) as info:
            plan.execute(a, b, d)
        assert info.value.status == deepgemm.Status.INVALID_ARGUMENT
        assert np.all(d == 99)
        with pytest.raises(TypeError, match="dtype"):
            plan.execute(a, b, d, scale=good_s.astype(np.float16), zero_point=good_z)
        plan.close()
        with pytest.raises(ValueError, match="scale"):
            ctx.plan(m, n, k, "float32", scale="per_block")
    with pytest.raises(deepgemm.Error) as info:
        deepgemm.matmul(a, b, scale=np.ones(n + 1, dtype=np.float32), out_dtype="int8")
    assert info.value.status == deepgemm.Status.INVALID_ARGUMENT
    with pytest.raises(deepgemm.Error) as info:
        deepgemm.matmul(a, b, scale=np.ones(n, dtype=np.float32), zero_point=np.zeros(m, dtype=np.int32),
                        out_dtype="int8")
    assert info.value.status == deepgemm.Status.INVALID_ARGUMENT
    with pytest.raises(deepgemm.Error) as info:  # a zero point on a float output: the library says no
        deepgemm.matmul(a, b, scale=1.0, zero_point=1)
    assert info.value.status in (deepgemm.Status.INVALID_ARGUMENT, deepgemm.Status.NOT_SUPPORTED)
