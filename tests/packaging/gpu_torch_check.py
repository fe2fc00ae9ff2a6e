"""gpu_torch_check.py - the Python binding on a GPU with PyTorch tensors: bf16 (and f16) GEMMs with
bias + GELU on the current, non-default stream, compared with torch in float64; exits 77 (skipped)
without CUDA.

What it checks, each case on fresh random inputs with a poisoned (NaN) output:
  - matmul on bf16 tensors (DLPack path: torch has no __cuda_array_interface__ for bf16) and on
    f16 tensors (__cuda_array_interface__ path), y = gelu(x @ w.T + b), against torch in float64
    (relative Frobenius error < 1e-2 for bf16, 2e-3 for f16) and reported next to torch's own bf16
    result's error;
  - the work goes on torch's current stream: the input is written on that stream after a long
    GPU sleep, so a kernel launched on any other stream would read NaNs;
  - objects exposing only DLPack (bf16) or only __cuda_array_interface__ (f16), as CuPy/JAX
    arrays would;
  - Context/Plan: plan once, execute on several inputs (plan.execute with torch tensors);
  - CUDA-graph capture of matmul, replayed on new inputs;
  - deepgemm.linear (issue 15): F.linear's shapes on (4, 512, H) and (32, 1, H) bf16 activations,
    one GEMM with the leading dimensions folded into M (the plan cache is checked), timed against
    F.linear (it ran 15-19x slower when a batch was planned as B small GEMMs: failing below 0.25x);
    matmul of a 3-D activation against a shared weight folded the same way;
  - the custom operator torch.ops.deepgemm.linear: torch.library.opcheck on CUDA tensors,
    torch.compile(fullgraph=True) of a small MLP through deepgemm.linear (no graph break) against
    eager, and CUDA-graph capture + replay of deepgemm.linear.

Usage (the wheel installed by tests/packaging/gpu_torch_check.sh run, libdeepgemm with CUDA support):
    PYTHONPATH=<site> python3 tests/packaging/gpu_torch_check.py
"""
import sys
import time


def main():
    try:
        import torch
    except ImportError:
        print("SKIP: no torch")
        return 77
    if not torch.cuda.is_available():
        print("SKIP: no CUDA device")
        return 77
    import deepgemm
    import torch.nn.functional as F

    print(f"deepgemm {deepgemm.version()} from {deepgemm.__path__[0]}; torch {torch.__version__}, "
          f"{torch.cuda.get_device_name()}")
    results = []  # (case, ok, detail)
    torch.manual_seed(int(time.time()))

    def rel(got, ref):
        got = got.double()
        if not torch.isfinite(got).all():
            return float("inf")
        return ((got - ref).norm() / ref.norm()).item()

    def reference(x, w, b):
        return F.gelu(x.double() @ w.double().T + b.double())

    def record(case, fn):
        try:
            ok, detail = fn()
        except Exception as e:  # one failing case must not hide the others
            ok, detail = False, f"{type(e).__name__}: {e}"
        results.append((case, ok, detail))
        print(f"{'PASS' if ok else 'FAIL'}  {case}: {detail}", flush=True)

    side = torch.cuda.Stream()

    def matmul_case(m, n, k, dtype, tol):
        def run():
            with torch.cuda.stream(side):
                x = torch.randn(m, k, device="cuda", dtype=dtype)
                w = torch.randn(n, k, device="cuda", dtype=dtype) / k**0.5
                b = torch.randn(n, device="cuda", dtype=dtype)
                y = deepgemm.matmul(x, w, trans_b=True, bias=b, activation="gelu")
                torch_y = F.gelu(F.linear(x, w, b))
            side.synchronize()
            ref = reference(x, w, b)
            err, torch_err = rel(y, ref), rel(torch_y, ref)
            ok = y.dtype == dtype and y.shape == (m, n) and err < tol
            return ok, f"rel err {err:.2e} (torch {dtype} {torch_err:.2e}, limit {tol:g})"
        return run

    for m, n, k in [(1, 4096, 4096), (7, 1000, 4093), (128, 4096, 4096), (129, 1029, 127), (4096, 4096, 4096)]:
        record(f"matmul bf16 {m}x{n}x{k} bias+gelu", matmul_case(m, n, k, torch.bfloat16, 1e-2))
    record("matmul f16 257x513x1000 bias+gelu (CAI)", matmul_case(257, 513, 1000, torch.float16, 2e-3))

    def stream_ordering():
        m, n, k = 256, 512, 1024
        src = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) / k**0.5
        b = torch.randn(n, device="cuda", dtype=torch.bfloat16)
        x = torch.full((m, k), float("nan"), device="cuda", dtype=torch.bfloat16)
        with torch.cuda.stream(side):  # plan (and compile) first, so the timed call only launches
            deepgemm.matmul(src, w, trans_b=True, bias=b, activation="gelu")
        torch.cuda.synchronize()
        with torch.cuda.stream(side):
            torch.cuda._sleep(200_000_000)  # ~0.1 s of GPU time on this stream only
            x.copy_(src)                     # ready only after the sleep, on `side`
            y = deepgemm.matmul(x, w, trans_b=True, bias=b, activation="gelu")
        default_idle = torch.cuda.default_stream().query()
        side_busy = not side.query()
        side.synchronize()
        err = rel(y, reference(src, w, b))
        ok = err < 1e-2 and side_busy
        return ok, (f"rel err {err:.2e}; side stream busy after the call: {side_busy}; "
                    f"default stream idle: {default_idle}")

    record("runs on torch's current stream", stream_ordering)

    # The generic protocols, as a library other than torch would present its arrays: an object
    # with only __dlpack__ (bf16) and one with only __cuda_array_interface__ (f16).
    class OnlyDLPack:
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None):
            return self.t.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    class OnlyCAI:
        def __init__(self, t):
            self.t = t
            cai = dict(t.__cuda_array_interface__)
            cai["stream"] = torch.cuda.current_stream().cuda_stream or 1
            self.__cuda_array_interface__ = cai

    def protocol_case(wrap, dtype):
        def run():
            m, n, k = 100, 300, 520
            x = torch.randn(m, k, device="cuda", dtype=dtype)
            w = torch.randn(n, k, device="cuda", dtype=dtype) / k**0.5
            b = torch.randn(n, device="cuda", dtype=dtype)
            y = torch.full((m, n), float("nan"), device="cuda", dtype=dtype)
            deepgemm.matmul(wrap(x), wrap(w), trans_b=True, bias=wrap(b), activation="gelu", out=wrap(y))
            torch.cuda.synchronize()
            err = rel(y, reference(x, w, b))
            return err < (1e-2 if dtype == torch.bfloat16 else 2e-3), f"rel err {err:.2e}"
        return run

    record("DLPack-only objects (bf16)", protocol_case(OnlyDLPack, torch.bfloat16))
    record("__cuda_array_interface__-only objects (f16)", protocol_case(OnlyCAI, torch.float16))

    def plan_execute():
        m, n, k = 64, 1024, 2048
        with deepgemm.Context(f"cuda:{torch.cuda.current_device()}") as ctx:
            plan = ctx.plan(m, n, k, "bfloat16", trans_b=True, bias="bfloat16", activation="gelu")
            info = plan.describe()
            worst = 0.0
            for _ in range(3):
                x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
                w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) / k**0.5
                b = torch.randn(n, device="cuda", dtype=torch.bfloat16)
                y = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
                ws = None
                if plan.workspace_size:
                    ws = torch.empty(plan.workspace_size, device="cuda", dtype=torch.int8)
                plan.execute(x, w, y, bias=b, workspace=ws)  # w is stored n x k: the plan has trans_b
                torch.cuda.synchronize()
                worst = max(worst, rel(y, reference(x, w, b)))
            plan.close()
        return worst < 1e-2, f"worst rel err {worst:.2e}; plan: {info.get('family')} {info.get('chosen', {}).get('config', {}).get('name')}"

    record("Context/Plan execute x3", plan_execute)

    def graph_capture():
        m, n, k = 32, 2048, 2048
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) / k**0.5
        b = torch.randn(n, device="cuda", dtype=torch.bfloat16)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            deepgemm.matmul(x, w, trans_b=True, bias=b, activation="gelu")  # plans (and compiles) outside capture
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            y = deepgemm.matmul(x, w, trans_b=True, bias=b, activation="gelu")
        x.copy_(torch.randn_like(x))
        g.replay()
        torch.cuda.synchronize()
        err = rel(y, reference(x, w, b))
        return err < 1e-2, f"replayed on new inputs: rel err {err:.2e}"

    record("CUDA graph capture + replay", graph_capture)

    # ---- issue 15: linear (leading dimensions folded into M), the custom op, compile, graphs -----
    def timed(fn, reps=50):
        for _ in range(3):
            fn()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            fn()
        stop.record()
        torch.cuda.synchronize()
        return start.elapsed_time(stop) * 1e3 / reps  # us

    def folded_plans(m, n, k):
        ctx = deepgemm._api._context_for(f"cuda:{torch.cuda.current_device()}")
        return [key for key in ctx._cache if key[:3] == (m, n, k) and key[13] == 1]

    def linear_case(lead, hidden, out_features):
        def run():
            x = torch.randn(*lead, hidden, device="cuda", dtype=torch.bfloat16)
            w = torch.randn(out_features, hidden, device="cuda", dtype=torch.bfloat16) / hidden**0.5
            b = torch.randn(out_features, device="cuda", dtype=torch.bfloat16)
            y = deepgemm.linear(x, w, b, activation="gelu")
            torch.cuda.synchronize()
            ref = F.gelu(F.linear(x.double(), w.double(), b.double()))
            err = rel(y, ref)
            m = x.numel() // hidden
            one_gemm = bool(folded_plans(m, out_features, hidden))
            ours = timed(lambda: deepgemm.linear(x, w, b, activation="gelu"))
            theirs = timed(lambda: F.gelu(F.linear(x, w, b)))
            ratio = theirs / ours
            ok = err < 1e-2 and y.shape == (*lead, out_features) and one_gemm and ratio > 0.25
            return ok, (f"rel err {err:.2e}; one GEMM with M = {m}: {one_gemm}; {ours:.1f} us vs torch "
                        f"F.gelu(F.linear) {theirs:.1f} us (torch time / ours = {ratio:.2f})")
        return run

    record("linear (4, 512, 4096) -> 4096 bf16 bias+gelu, folded", linear_case((4, 512), 4096, 4096))
    record("linear (32, 1, 4096) -> 11008 bf16 bias+gelu, folded", linear_case((32, 1), 4096, 11008))

    def matmul_folded():
        x = torch.randn(4, 256, 1024, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(2048, 1024, device="cuda", dtype=torch.bfloat16) / 32
        y = deepgemm.matmul(x, w, trans_b=True)
        torch.cuda.synchronize()
        err = rel(y, x.double() @ w.double().T)
        one_gemm = bool(folded_plans(1024, 2048, 1024))
        return err < 1e-2 and one_gemm, f"rel err {err:.2e}; one GEMM with M = 1024: {one_gemm}"

    record("matmul (4, 256, 1024) @ w.T folded into one GEMM", matmul_folded)

    def opcheck():
        if not hasattr(torch.library, "opcheck"):
            return False, "torch.library.opcheck missing"
        op = deepgemm.register_torch_ops()
        x = torch.randn(3, 5, 256, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(128, 256, device="cuda", dtype=torch.bfloat16) / 16
        b = torch.randn(128, device="cuda", dtype=torch.bfloat16)
        torch.library.opcheck(op, (x, w, b, "gelu"))
        torch.library.opcheck(op, (x, w, None, "none"))
        return True, "schema, fake tensor and dispatch checks passed"

    record("torch.library.opcheck(torch.ops.deepgemm.linear)", opcheck)

    class MLP(torch.nn.Module):
        def __init__(self, hidden):
            super().__init__()
            self.up = torch.nn.Linear(hidden, 4 * hidden, dtype=torch.bfloat16, device="cuda")
            self.down = torch.nn.Linear(4 * hidden, hidden, dtype=torch.bfloat16, device="cuda")

        def forward(self, x):
            h = deepgemm.linear(x, self.up.weight, self.up.bias, activation="gelu")
            return deepgemm.linear(h, self.down.weight, self.down.bias) + x

    def compiled():
        torch._dynamo.reset()
        model = MLP(512)
        x = torch.randn(2, 64, 512, device="cuda", dtype=torch.bfloat16)
        with torch.no_grad():
            eager = model(x)
            fast = torch.compile(model, fullgraph=True)(x)
        torch.cuda.synchronize()
        diff = rel(fast, eager.double())
        return diff < 1e-2, f"fullgraph compile (no graph break); compiled vs eager rel diff {diff:.2e}"

    record("torch.compile(fullgraph=True) of an MLP using deepgemm.linear", compiled)

    def linear_graph():
        x = torch.randn(8, 16, 1024, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(2048, 1024, device="cuda", dtype=torch.bfloat16) / 32
        b = torch.randn(2048, device="cuda", dtype=torch.bfloat16)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            deepgemm.linear(x, w, b, activation="gelu")  # plan outside the capture
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            y = deepgemm.linear(x, w, b, activation="gelu")
        x.copy_(torch.randn_like(x))
        g.replay()
        torch.cuda.synchronize()
        err = rel(y, F.gelu(F.linear(x.double(), w.double(), b.double())))
        return err < 1e-2, f"replayed on new inputs: rel err {err:.2e}"

    record("CUDA graph capture + replay of deepgemm.linear", linear_graph)

    print("\n| case | result | detail |\n|---|---|---|")
    for case, ok, detail in results:
        print(f"| {case} | {'PASS' if ok else 'FAIL'} | {detail} |")
    return 0 if all(ok for _, ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
