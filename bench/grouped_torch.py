"""grouped_torch.py - deepgemm.grouped_matmul against torch._grouped_mm (where the installed torch
has it; the script says which torch and whether) and a loop of torch.matmul per expert, on
DeepSeek-V3-like mixture-of-experts shapes in bf16 on a CUDA GPU, through the Python binding; then
a CUDA-graph replay check of the masked layout with new counts at every replay.

Rows: expert weights N x K in {4096 x 7168, 7168 x 2048}, G in {8, 32} experts, mean tokens per
expert in {64, 256, 1024}, an uneven (log-normal) load. Both layouts:
  contiguous  deepgemm: tokens sorted by expert, each expert's rows padded to --align (DeepSeek's
              layout; --align 1 = no padding), G + 1 offsets on the device. torch._grouped_mm:
              the unpadded rows with G end offsets (its own layout). loop: torch.matmul per expert.
  masked      deepgemm: a slot of M rows per expert (M = the busiest expert's count, rounded up
              to 128) and G valid-row counts on the device. torch._grouped_mm has no masked form:
              its 3-D x 3-D call computes every slot row ("torch 3d", more work than needed).
Each contender is checked once against float32 products of the valid rows (relative Frobenius
error <= 1e-2) and then timed as a CUDA graph of several calls (median of --reps samples, each
contender in turn). TFLOP/s count the valid rows only. A contender that cannot run reports why
("not supported: ..." for deepgemm before a GPU kernel runs grouped problems) and the row goes on.

Run on the GPU machine (torch installed there), with the wheel built here (CUDA backend included):
  here:    tests/packaging/gpu_torch_check.sh stage . build/pystage
  device:  python3 -m pip install -q --no-deps --no-index --target /tmp/dgemm-py build/pystage/wheels/deepgemm-*.whl &&
           PYTHONPATH=/tmp/dgemm-py python3 bench/grouped_torch.py --out "$OUT"
Options: --quick (fewer rows and reps), --align A, --reps R, --out DIR (grouped_torch.json).
Exit status: 0 all right (an unsupported contender is reported, not a failure), 1 a wrong result,
77 no CUDA or no torch. The short table is printed last.
"""
import argparse
import json
import math
import os
import sys


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="G = 8 and 32 at 256 tokens only, 5 reps")
    ap.add_argument("--align", type=int, default=128, help="contiguous layout: rows per expert padded to this")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--skew", type=float, default=0.6, help="sigma of the log-normal load per expert")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=os.environ.get("OUT", ""), help="folder for grouped_torch.json")
    return ap.parse_args()


def expert_counts(torch, groups, tokens, skew, gen):
    w = torch.exp(skew * torch.randn(groups, generator=gen, dtype=torch.float64))
    return [int(round(groups * tokens * float(x) / float(w.sum()))) for x in w]


def timed(torch, fn, reps, target_ms=2.0):
    """Median milliseconds of one call: a CUDA graph of enough calls for ~target_ms, replayed
    `reps` times (plain launches when capture fails)."""
    fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(3):
        fn()
    stop.record()
    stop.synchronize()
    calls = max(2, min(500, int(math.ceil(target_ms / max(start.elapsed_time(stop) / 3, 1e-3)))))
    graph = None
    try:
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            fn()  # warm-up on the capture stream (allocations, plans)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(calls):
                fn()
        run = graph.replay
        mode = "graph"
    except Exception as e:  # noqa: BLE001 - any capture failure: time plain launches instead
        graph = None
        mode = f"stream ({type(e).__name__})"

        def run():
            for _ in range(calls):
                fn()
    run()
    samples = []
    for _ in range(reps):
        start.record()
        run()
        stop.record()
        stop.synchronize()
        samples.append(start.elapsed_time(stop) / calls)
    samples.sort()
    return samples[len(samples) // 2], mode


def rel_error(torch, got, want):
    got = got.float()
    den = torch.linalg.vector_norm(want)
    return float(torch.linalg.vector_norm(got - want) / den) if float(den) > 0 else float(torch.linalg.vector_norm(got))


def main():
    args = parse_args()
    try:
        import torch
    except ImportError:
        print("SKIP: no torch")
        return 77
    if not torch.cuda.is_available():
        print("SKIP: torch sees no CUDA device")
        return 77
    import deepgemm

    has_grouped_mm = hasattr(torch, "_grouped_mm")
    dev = torch.device("cuda")
    print(f"grouped_torch.py: {torch.cuda.get_device_name(0)}, torch {torch.__version__} "
          f"(torch._grouped_mm {'present' if has_grouped_mm else 'ABSENT'}), deepgemm {deepgemm.version()}, "
          f"bf16, align {args.align}, skew {args.skew}, seed {args.seed}")
    gen = torch.Generator().manual_seed(args.seed)
    torch.manual_seed(args.seed)
    token_list = [256] if args.quick else [64, 256, 1024]
    reps = 5 if args.quick else args.reps
    rows, failures = [], 0
    for n, k in ((4096, 7168), (7168, 2048)):
        for groups in (8, 32):
            w = torch.randn(groups, n, k, device=dev, dtype=torch.bfloat16) / math.sqrt(k)  # (G, N, K): nn.Linear
            for tokens in token_list:
                counts = expert_counts(torch, groups, tokens, args.skew, gen)
                valid = sum(counts)
                flops = 2.0 * valid * n * k
                x = torch.randn(valid, k, device=dev, dtype=torch.bfloat16)  # tokens sorted by expert
                starts = [0]
                for c in counts:
                    starts.append(starts[-1] + c)
                ref = [x[starts[g]:starts[g + 1]].float() @ w[g].float().T for g in range(groups)]
                for layout in ("contiguous", "masked"):
                    row = {"layout": layout, "n": n, "k": k, "groups": groups, "tokens": tokens, "counts": counts,
                           "valid_rows": valid, "ms": {}, "err": {}, "why": {}, "timing": {}}
                    contenders = {}
                    pad = args.align if layout == "contiguous" else 1
                    if layout == "contiguous":
                        padded = [(c + pad - 1) // pad * pad for c in counts]
                        offsets = [0]
                        for p in padded:
                            offsets.append(offsets[-1] + p)
                        xd = torch.zeros(max(offsets[-1], pad), k, device=dev, dtype=torch.bfloat16)
                        for g in range(groups):
                            xd[offsets[g]:offsets[g] + counts[g]] = x[starts[g]:starts[g + 1]]
                        offs_dev = torch.tensor(offsets, device=dev, dtype=torch.int32)
                        out_dg = torch.empty(xd.shape[0], n, device=dev, dtype=torch.bfloat16)
                        contenders["deepgemm"] = (
                            lambda xd=xd, offs=offs_dev, out=out_dg: deepgemm.grouped_matmul(
                                xd, w, offsets=offs, trans_b=True, out=out, m_alignment=pad),
                            lambda out: [out[offsets[g]:offsets[g] + counts[g]] for g in range(groups)])
                        if has_grouped_mm:
                            ends = torch.tensor(starts[1:], device=dev, dtype=torch.int32)
                            wt = w.transpose(-2, -1)  # (G, K, N) view, column-major inner: what _grouped_mm wants
                            contenders["torch_grouped_mm"] = (
                                lambda ends=ends, wt=wt: torch._grouped_mm(x, wt, offs=ends),
                                lambda out: [out[starts[g]:starts[g + 1]] for g in range(groups)])
                    else:
                        slot = max(128, (max(counts) + 127) // 128 * 128)
                        x3 = torch.zeros(groups, slot, k, device=dev, dtype=torch.bfloat16)
                        for g in range(groups):
                            x3[g, :counts[g]] = x[starts[g]:starts[g + 1]]
                        counts_dev = torch.tensor(counts, device=dev, dtype=torch.int32)
                        out3 = torch.empty(groups, slot, n, device=dev, dtype=torch.bfloat16)
                        row["slot"] = slot
                        contenders["deepgemm"] = (
                            lambda x3=x3, cnt=counts_dev, out=out3: deepgemm.grouped_matmul(
                                x3, w, counts=cnt, trans_b=True, out=out),
                            lambda out: [out[g, :counts[g]] for g in range(groups)])
                        if has_grouped_mm:
                            wt = w.transpose(-2, -1)
                            contenders["torch_3d"] = (
                                lambda x3=x3, wt=wt: torch._grouped_mm(x3, wt),
                                lambda out: [out[g, :counts[g]] for g in range(groups)])
                    out_loop = torch.empty(valid, n, device=dev, dtype=torch.bfloat16)

                    def loop(out=out_loop):
                        for g in range(groups):
                            if counts[g]:
                                torch.matmul(x[starts[g]:starts[g + 1]], w[g].T, out=out[starts[g]:starts[g + 1]])
                        return out
                    contenders["torch_loop"] = (loop, lambda out: [out[starts[g]:starts[g + 1]] for g in range(groups)])

                    for name, (fn, pieces) in contenders.items():
                        try:
                            out = fn()
                            torch.cuda.synchronize()
                        except Exception as e:  # noqa: BLE001 - reported per contender
                            status = getattr(e, "status", None)
                            kind = "not supported" if status == deepgemm.Status.NOT_SUPPORTED else type(e).__name__
                            row["why"][name] = f"{kind}: {getattr(e, 'message', str(e))}"
                            continue
                        err = max(rel_error(torch, got, want) for got, want in zip(pieces(out), ref) if want.numel())
                        row["err"][name] = err
                        if not err <= 1e-2:
                            row["why"][name] = f"WRONG: relative error {err:.3g}"
                            if name == "deepgemm":
                                failures += 1
                            continue
                        row["ms"][name], row["timing"][name] = timed(torch, fn, reps)
                    rows.append(row)
                    line = " ".join(f"{c}={row['ms'][c] * 1e3:.1f}us({flops / row['ms'][c] * 1e-9:.0f}TF)"
                                    for c in row["ms"])
                    print(f"{layout:10s} {n}x{k} G={groups:2d} t={tokens:4d} rows={valid:6d}  {line}", flush=True)
                    for c, why in row["why"].items():
                        print(f"    {c}: {why[:300]}")

    replay = graph_replay_check(torch, deepgemm, dev)
    failures += replay.get("failures", 0)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "grouped_torch.json"), "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                       "torch_grouped_mm": has_grouped_mm, "deepgemm": deepgemm.version(), "align": args.align,
                       "rows": rows, "graph_replay": replay}, f, indent=1)

    # The short table, last: ratio = the other's time / deepgemm's (> 1: deepgemm is faster).
    print("\nsummary (us per call; vs_X = X time / deepgemm time, > 1: deepgemm faster)")
    print(f"{'layout':10s} {'NxK':10s} {'G':>3s} {'tok':>5s} {'deepgemm':>9s} {'grouped_mm':>10s} {'loop':>8s} "
          f"{'vs_gmm':>7s} {'vs_loop':>7s}")
    for r in rows:
        ms = r["ms"]
        dg = ms.get("deepgemm")
        gmm = ms.get("torch_grouped_mm", ms.get("torch_3d"))
        lp = ms.get("torch_loop")

        def us(v):
            return f"{v * 1e3:.1f}" if v else "-"

        def ratio(v):
            return f"{v / dg:.3f}" if v and dg else "-"
        print(f"{r['layout']:10s} {str(r['n']) + 'x' + str(r['k']):10s} {r['groups']:3d} {r['tokens']:5d} "
              f"{us(dg) if dg else 'n/s':>9s} {us(gmm):>10s} {us(lp):>8s} {ratio(gmm):>7s} {ratio(lp):>7s}")
    unsupported = [r["why"]["deepgemm"] for r in rows if "deepgemm" in r["why"]]
    if unsupported:
        print(f"deepgemm did not run {len(unsupported)} rows: {unsupported[0][:300]}")
    print(f"masked CUDA-graph replay with changing counts: {replay['result']}")
    print(f"torch {torch.__version__}: torch._grouped_mm {'present' if has_grouped_mm else 'absent'}; "
          f"wrong results: {failures}")
    return 1 if failures else 0


def graph_replay_check(torch, deepgemm, dev):
    """A masked deepgemm call captured once in a CUDA graph and replayed with new counts written
    into the same device tensor before each replay: every replay's valid rows must match, rows
    past each count must keep their NaN poison, and the status word must read 0 (bad counts:
    the documented bits)."""
    groups, slot, n, k = 8, 128, 256, 512
    x3 = torch.randn(groups, slot, k, device=dev, dtype=torch.bfloat16)
    w = torch.randn(groups, n, k, device=dev, dtype=torch.bfloat16) / math.sqrt(k)
    counts = torch.zeros(groups, device=dev, dtype=torch.int32)
    status = torch.full((1,), -1, device=dev, dtype=torch.int32)
    out = torch.empty(groups, slot, n, device=dev, dtype=torch.bfloat16)
    call = lambda: deepgemm.grouped_matmul(x3, w, counts=counts, trans_b=True, out=out, status=status)  # noqa: E731
    try:
        call()  # plans (outside the capture)
        torch.cuda.synchronize()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=stream):
            call()
    except Exception as e:  # noqa: BLE001
        kind = "not supported" if getattr(e, "status", None) == deepgemm.Status.NOT_SUPPORTED else type(e).__name__
        return {"result": f"not run ({kind}: {getattr(e, 'message', str(e))[:200]})", "failures": 0}
    ref = torch.einsum("gmk,gnk->gmn", x3.float(), w.float())
    gen = torch.Generator().manual_seed(5)
    sets = [[slot] * groups, [0] * groups, [1, 0, 127, 64, 65, 2, 128, 33]]
    sets += [torch.randint(0, slot + 1, (groups,), generator=gen).tolist() for _ in range(5)]
    bad = [-3, 7, 200, 0, 0, 0, 0, 128]  # clipped: rows [0, clamp(count, 0, slot)); NEGATIVE | OUT_OF_RANGE
    failures, notes = 0, []
    for c in sets + [bad]:
        counts.copy_(torch.tensor(c, dtype=torch.int32))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        expect_status = 0x3 if c is bad else 0
        for g in range(groups):
            rows = max(0, min(c[g], slot))
            got = out[g, :rows].float()
            if rows and rel_error(torch, got, ref[g, :rows]) > 1e-2:
                failures += 1
                notes.append(f"counts {c}: group {g} wrong")
            if not torch.isnan(out[g, rows:]).all():
                failures += 1
                notes.append(f"counts {c}: group {g} wrote rows past its count")
        if int(status.item()) != expect_status:
            failures += 1
            notes.append(f"counts {c}: status {int(status.item())}, expected {expect_status}")
    result = f"{len(sets) + 1} replays, {failures} failures" + (f" ({'; '.join(notes[:3])})" if notes else "")
    return {"result": result, "failures": failures}


if __name__ == "__main__":
    sys.exit(main())
