"""python_overhead.py - the Python binding's host time per call on the hot path (the same shapes,
dtypes and devices as the previous call: the plan is cached), next to the bare C call it wraps.

Rows, each the median over --rounds rounds of --reps back-to-back calls (time.perf_counter; GPU
work is only enqueued, so on a GPU this is the host's time per call while the GPU keeps up):
  C dgemm_execute       capi.dgemm_execute with every argument prepared beforehand: the floor
                        (the GEMM itself on the CPU backend, the launch on a GPU)
  Plan.execute          plan.execute(a, b, d, bias=bias) on a plan made once
  matmul                deepgemm.matmul(x, w, trans_b=True, bias=b, activation="gelu"), 2-D x
  linear                deepgemm.linear(x3, w, b, activation="gelu"), 3-D x (rows folded)
  linear out=           the same into a preallocated out (no allocation)
  torch.ops linear      torch.ops.deepgemm.linear (the custom operator) directly, torch only
  torch F.linear        F.gelu(F.linear(x3, w, b)): what the same call costs in torch, torch only
Each row also says the overhead over the floor ("+us").

Operands, per backend: "numpy" (CPU backend, float32, 4 x 8 x 8: the GEMM is negligible), "torch
cpu" (the same with torch CPU tensors), "torch cuda" (bfloat16, 32 x 256 x 256 on the current
CUDA device: a GEMM of a few microseconds) and, with --h200, the 32 x 1 x 4096 -> 11008 bf16 case
of tests/packaging/gpu_torch_check.py (loops of 50 calls as there, ended by a synchronize).

Usage:  PYTHONPATH=<dir holding deepgemm> python3 bench/python_overhead.py [--device cpu|cuda|all]
          [--reps N] [--rounds R] [--max-us US] [--h200] [--json FILE]
--max-us: exit 1 when a row of BOUNDED (the binding's calls; not the floor, not torch's operator
or layer) with numpy or torch cpu operands takes more than US microseconds per call (the CTest
python_overhead uses a generous bound: it catches gross regressions, not machine noise). Exit 77
when --device cuda has no torch or no CUDA device. The short table is printed last.

On the GPU machine, with the wheel built here (tests/packaging/gpu_torch_check.sh stage . build/pystage):
  python3 -m pip install -q --no-deps --no-index --target /tmp/dgemm-py build/pystage/wheels/deepgemm-*.whl &&
  PYTHONPATH=/tmp/dgemm-py python3 bench/python_overhead.py --device all --h200 --json "$OUT/python_overhead.json"
"""
import argparse
import ctypes
import json
import statistics
import sys
import time


# The rows --max-us bounds: the binding's own calls (not the floor, not torch's operator or layer).
BOUNDED = ("Plan.execute", "matmul", "linear", "linear out=")


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", choices=("cpu", "cuda", "all"), default="cpu")
    ap.add_argument("--reps", type=int, default=2000, help="calls per round")
    ap.add_argument("--rounds", type=int, default=7, help="rounds; the median is reported")
    ap.add_argument("--max-us", type=float, default=None, help="fail when a CPU deepgemm row exceeds this")
    ap.add_argument("--h200", action="store_true", help="also the (32, 1, 4096) x 11008 bf16 linear (CUDA)")
    ap.add_argument("--json", default="", help="write the rows here")
    return ap.parse_args()


def per_call_us(fn, reps, rounds, sync=None):
    """Median over rounds of the host time of one call in a loop of reps calls."""
    for _ in range(max(3, reps // 20)):  # warm: plans, caches, allocator
        fn()
    if sync:
        sync()
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(reps):
            fn()
        if sync:
            sync()
        samples.append((time.perf_counter() - start) * 1e6 / reps)
    return statistics.median(samples)


def c_floor(deepgemm, plan, a, b, d, bias, ws, stream=0):
    """dgemm_execute on the plan with every argument (and the plan's workspace, ws) prepared once:
    what no binding can avoid. Checked once, so that the floor is not a failing call."""
    capi = deepgemm.capi
    args = capi.dgemm_args_t()
    capi.dgemm_args_init(ctypes.byref(args))
    args.bias = bias
    ref = ctypes.byref(args)
    handle, execute, ws_size = plan._handle, capi.dgemm_execute, plan.workspace_size
    status = execute(handle, a, b, None, d, ref, ws, ws_size, stream or None)
    if status != 0:
        raise RuntimeError(f"dgemm_execute: status {status}: {capi.dgemm_last_error()}")

    def call():
        execute(handle, a, b, None, d, ref, ws, ws_size, stream or None)
    return call


def operand_sets(args):
    """(label, make) for each backend asked for; make() returns the operands or a skip reason."""
    sets = []
    if args.device in ("cpu", "all"):
        sets.append(("numpy", numpy_operands))
        sets.append(("torch cpu", lambda: torch_operands("cpu")))
    if args.device in ("cuda", "all"):
        sets.append(("torch cuda", lambda: torch_operands("cuda")))
    return sets


def numpy_operands():
    import numpy as np

    rng = np.random.default_rng(1)
    m, n, k = 4, 8, 8
    x3 = rng.standard_normal((m, 1, k)).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    return dict(lib="numpy", device="cpu", dtype="float32", m=m, n=n, k=k, x3=x3, x=x3.reshape(m, k), w=w, b=b,
                out3=np.empty((m, 1, n), np.float32), d=np.empty((m, n), np.float32),
                ptr=lambda t: t.ctypes.data, sync=None, stream=0, bytes=lambda size: np.empty(size, np.int8))


def torch_operands(device):
    torch = sys.modules.get("torch")
    if torch is None:
        try:
            import torch
        except ImportError:
            return "no torch"
    if device == "cuda" and not torch.cuda.is_available():
        return "no CUDA device"
    if device == "cpu":  # torch's own row: one thread, as ours (a thread pool on a 4 x 8 problem is noise)
        torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(1)
    m, n, k = (4, 8, 8) if device == "cpu" else (32, 256, 256)
    dtype = torch.float32 if device == "cpu" else torch.bfloat16
    x3 = torch.randn(m, 1, k, generator=gen).to(device=device, dtype=dtype)
    w = torch.randn(n, k, generator=gen).to(device=device, dtype=dtype)
    b = torch.randn(n, generator=gen).to(device=device, dtype=dtype)
    stream = torch.cuda.current_stream().cuda_stream if device == "cuda" else 0
    return dict(lib="torch", device=device if device == "cpu" else f"cuda:{torch.cuda.current_device()}",
                dtype=str(dtype).replace("torch.", ""), m=m, n=n, k=k, x3=x3, x=x3.reshape(m, k), w=w, b=b,
                out3=torch.empty(m, 1, n, device=device, dtype=dtype), d=torch.empty(m, n, device=device, dtype=dtype),
                ptr=lambda t: t.data_ptr(), sync=torch.cuda.synchronize if device == "cuda" else None, stream=stream,
                bytes=lambda size: torch.empty(size, dtype=torch.int8, device=device))


def rows_for(deepgemm, label, o, args):
    m, n, k = o["m"], o["n"], o["k"]
    x, x3, w, b, d, out3 = o["x"], o["x3"], o["w"], o["b"], o["d"], o["out3"]
    ctx = deepgemm.Context(o["device"])
    plan = ctx.plan(m, n, k, o["dtype"], trans_b=True, bias=o["dtype"], activation="gelu")
    ws = o["bytes"](plan.workspace_size) if plan.workspace_size else None
    bare = c_floor(deepgemm, plan, o["ptr"](x), o["ptr"](w), o["ptr"](d), o["ptr"](b),
                   o["ptr"](ws) if ws is not None else None, o["stream"])
    cases = [
        ("C dgemm_execute", bare),
        ("Plan.execute", lambda: plan.execute(x, w, d, bias=b)),
        ("matmul", lambda: deepgemm.matmul(x, w, trans_b=True, bias=b, activation="gelu")),
        ("linear", lambda: deepgemm.linear(x3, w, b, activation="gelu")),
        ("linear out=", lambda: deepgemm.linear(x3, w, b, activation="gelu", out=out3)),
    ]
    if o["lib"] == "torch":
        torch = sys.modules["torch"]
        F = torch.nn.functional
        deepgemm.register_torch_ops()
        cases.append(("torch.ops linear", lambda: torch.ops.deepgemm.linear(x3, w, b, "gelu")))
        cases.append(("torch F.linear", lambda: F.gelu(F.linear(x3, w, b))))
    rows = []
    floor = None
    for name, fn in cases:
        us = per_call_us(fn, args.reps, args.rounds, o["sync"])
        floor = us if floor is None else floor
        rows.append(dict(operands=label, device=o["device"], shape=f"{m}x{n}x{k} {o['dtype']}", call=name,
                         us=round(us, 2), over_floor_us=round(us - floor, 2)))
        print(f"  {label:10s} {name:18s} {us:8.2f} us/call", flush=True)
    plan.close()
    ctx.close()
    return rows


def h200_case(deepgemm, args):
    """gpu_torch_check.py's (32, 1, 4096) -> 11008 bf16 bias+gelu linear: loops of 50 calls, each
    ended by a synchronize (there it is timed with CUDA events over the same loop)."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available():
        return []
    F = torch.nn.functional
    x = torch.randn(32, 1, 4096, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(11008, 4096, device="cuda", dtype=torch.bfloat16) / 64
    b = torch.randn(11008, device="cuda", dtype=torch.bfloat16)
    rows = []
    for name, fn in (("linear (50 + sync)", lambda: deepgemm.linear(x, w, b, activation="gelu")),
                     ("torch F.linear (50 + sync)", lambda: F.gelu(F.linear(x, w, b)))):
        us = per_call_us(fn, 50, args.rounds, torch.cuda.synchronize)
        rows.append(dict(operands="torch cuda", device="cuda", shape="(32,1,4096)x11008 bfloat16", call=name,
                         us=round(us, 2), over_floor_us=None))
        print(f"  h200 case  {name:26s} {us:8.2f} us/call", flush=True)
    return rows


def main():
    args = parse_args()
    import deepgemm

    print(f"deepgemm {deepgemm.version()} from {deepgemm.__path__[0]}; Python {sys.version.split()[0]}"
          + (f"; torch {sys.modules['torch'].__version__}" if "torch" in sys.modules else ""), flush=True)
    rows, skipped = [], []
    for label, make in operand_sets(args):
        o = make()
        if isinstance(o, str):
            skipped.append(f"{label}: {o}")
            print(f"  {label}: skipped ({o})", flush=True)
            continue
        rows += rows_for(deepgemm, label, o, args)
    if args.h200:
        rows += h200_case(deepgemm, args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(rows=rows, skipped=skipped, reps=args.reps, rounds=args.rounds), f, indent=1)

    failed = []
    if args.max_us is not None:
        failed = [r for r in rows if r["device"] == "cpu" and r["call"] in BOUNDED and r["us"] > args.max_us]
    print("\noperands    shape                  call                         us/call   over C call")
    for r in rows:
        over = "" if r["over_floor_us"] is None else f"{r['over_floor_us']:+10.2f}"
        flag = "  > --max-us" if r in failed else ""
        print(f"{r['operands']:11s} {r['shape']:22s} {r['call']:26s} {r['us']:10.2f} {over}{flag}")
    if not rows:
        print("nothing measured: " + "; ".join(skipped))
        return 77
    if failed:
        print(f"FAIL: {len(failed)} call(s) above {args.max_us} us per call")
        return 1
    if args.max_us is not None:
        print(f"PASS: every deepgemm call on the CPU within {args.max_us} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
