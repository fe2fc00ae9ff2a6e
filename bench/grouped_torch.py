"""grouped_torch.py - deepgemm.grouped_matmul against torch._grouped_mm (where the installed torch
has it; the script says which torch and whether) and a loop of torch.matmul per expert, on
DeepSeek-V3-like mixture-of-experts shapes in bf16 on a CUDA GPU, through the Python binding; with
--dtype fp8, the same shapes in FP8 against torch._scaled_grouped_mm and a loop of torch._scaled_mm;
then a CUDA-graph replay check of the masked layout with new counts at every replay.

Rows: expert weights N x K in {4096 x 7168, 7168 x 2048}, G in {8, 32} experts, mean tokens per
expert in {64, 256, 1024}, an uneven (log-normal) load, for each dtype of --dtype (the same counts
and tokens for each). Both layouts:
  contiguous  deepgemm: tokens sorted by expert, each expert's rows padded to --align (DeepSeek's
              layout; --align 1 = no padding), G + 1 offsets on the device. torch._grouped_mm:
              the unpadded rows with G end offsets (its own layout). loop: torch.matmul per expert.
  masked      deepgemm: a slot of M rows per expert (M = the busiest expert's count, rounded up
              to 128) and G valid-row counts on the device. torch._grouped_mm has no masked form:
              its 3-D x 3-D call computes every slot row ("torch 3d", more work than needed).
FP8 rows (--dtype fp8): A e4m3 (tokens x K), B e4m3 per expert in nn.Linear layout (G, N, K), bf16
out, quantized from the bf16 row's tokens and weights (scale = amax / 448). Contenders:
  deepgemm                     grouped_matmul, row-wise scales: a_scale float32 per row of A ((M,);
                               masked (G, M)), b_scale (G, N) per expert and column.
  deepgemm_block               grouped_matmul with DeepSeek's block scales: a_scale 1 x 128 (M, KB)
                               (masked (G, M, KB); MN-major as DeepGEMM's TMA-aligned tensor),
                               b_scale 128 x 128 (G, ceil(N/128), KB), KB = ceil(K/128). Torch has
                               no block-scaled grouped op, so this one is reported on its own.
  torch_scaled_grouped_mm      torch._scaled_grouped_mm (where it runs here: hasattr and a tiny
  / torch_scaled_3d            trial call; else "not available: <reason>"), row-wise scales as
                               deepgemm's; contiguous: its 2-D x 3-D form on the unpadded rows with
                               G int32 end offsets; masked: its 3-D x 3-D form (every slot row).
  torch_scaled_mm_loop         torch._scaled_mm per expert, the same row-wise scales.
deepgemm runs grouped FP8 on the GPU only by name until a GPU test has passed those kernels: when
it answers NOT_SUPPORTED (and no --force-kernel is given), that is reported and the contender is
tried once more with force_kernel="sm90_128x128x128_s6_t384_p" (a configuration for 8-bit
operands), as "<name> (forced sm90_128x128x128_s6_t384_p)".
Each row's "kernel" names the configuration each deepgemm contender's plan chose (read from the
binding's plan cache after the contender's first call; null where it cannot be read).
Each contender is checked once against float32 products of the valid rows (bf16: of the inputs;
FP8: of the dequantized operands it was given; relative Frobenius error <= 1e-2 bf16, <= 2e-2 FP8)
and then timed as a CUDA graph of several calls (median of --reps samples, each contender in turn).
TFLOP/s count the valid rows only. A contender that cannot run reports why ("not supported: ..."
for deepgemm before a GPU kernel runs grouped problems) and the row goes on.

Run on the GPU machine (torch installed there), with the wheel built here (CUDA backend included):
  here:    tests/packaging/gpu_torch_check.sh stage . build/pystage
  device:  python3 -m pip install -q --no-deps --no-index --target /tmp/dgemm-py build/pystage/wheels/deepgemm-*.whl &&
           PYTHONPATH=/tmp/dgemm-py python3 bench/grouped_torch.py --out "$OUT"
Options: --quick (fewer rows and reps), --align A, --reps R, --out DIR (grouped_torch.json, written
again after every row, so a run cut short keeps the rows it timed; each row has a "dtype"),
--layout contiguous|masked|both, --tokens LIST (mean tokens per expert), --dtype LIST
(comma-separated, of bf16 and fp8; default bf16), --force-kernel NAME (force_kernel for every
deepgemm call), --groups LIST, --nk LIST (e.g. 4096x7168), --counts LIST (each expert's rows, to
repeat a row of an earlier run exactly: the draw depends on the rows before it).
Exit status: 0 all right (an unsupported contender is reported, not a failure), 1 a wrong result
of deepgemm (forced or not), 77 no CUDA or no torch. The short tables are printed last (bf16, then
FP8: ratios to deepgemm row-wise, and the block-scaled time).
"""
import argparse
import json
import math
import os
import sys
from typing import Callable, NamedTuple, Optional

DTYPES = ("bf16", "fp8")
TOLERANCE = {"bf16": 1e-2, "fp8": 2e-2}  # FP8 products with a bf16 output
FORCED_FP8 = "sm90_128x128x128_s6_t384_p"  # a configuration name valid for 8-bit operands
FP8_MAX = 448.0  # the largest finite e4m3 value


def dtype_list(text):
    names = list(dict.fromkeys(t.strip() for t in text.split(",") if t.strip()))
    bad = [t for t in names if t not in DTYPES]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a comma-separated list of {', '.join(DTYPES)}")
    return names


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="G = 8 and 32 at 256 tokens only, 5 reps")
    ap.add_argument("--align", type=int, default=128, help="contiguous layout: rows per expert padded to this")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--skew", type=float, default=0.6, help="sigma of the log-normal load per expert")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=os.environ.get("OUT", ""), help="folder for grouped_torch.json")
    ap.add_argument("--dtype", type=dtype_list, default="bf16", metavar="LIST",
                    help="comma-separated row dtypes, of bf16 and fp8 (e4m3 in, bf16 out); default bf16")
    ap.add_argument("--force-kernel", default=None, metavar="NAME",
                    help="force_kernel for every deepgemm call (a family or configuration name)")
    ap.add_argument("--no-hint", action="store_true",
                    help="masked deepgemm plans without expected_m (default: the mean rows per expert)")
    ap.add_argument("--layout", choices=("contiguous", "masked", "both"), default="both",
                    help="the layouts to time (default both; torch._grouped_mm has the contiguous one)")
    ap.add_argument("--tokens", type=lambda t: [int(x) for x in t.split(",")], default=None, metavar="LIST",
                    help="mean tokens per expert, comma-separated (default 64,256,1024; --quick 256)")
    ap.add_argument("--groups", type=lambda t: [int(x) for x in t.split(",")], default=[8, 32], metavar="LIST",
                    help="experts per row, comma-separated (default 8,32)")
    ap.add_argument("--nk", type=lambda t: [tuple(int(v) for v in x.split("x")) for x in t.split(",")],
                    default=[(4096, 7168), (7168, 2048)], metavar="LIST",
                    help="N x K of the experts' weights, comma-separated (default 4096x7168,7168x2048)")
    ap.add_argument("--counts", type=lambda t: [int(x) for x in t.split(",")], default=None, metavar="LIST",
                    help="the rows of each expert, comma-separated, instead of a log-normal draw (to repeat a "
                         "row of an earlier run: its \"counts\"); sets --groups to their number")
    args = ap.parse_args()
    if args.counts is not None:
        if not args.counts or min(args.counts) < 0:
            ap.error(f"--counts {args.counts}: expected non-negative rows per expert")
        args.groups = [len(args.counts)]
        args.tokens = [max(1, round(sum(args.counts) / len(args.counts)))]
    return args


class Contender(NamedTuple):
    """One way of computing a row: ``fn`` runs it and returns the result, ``pieces`` cuts the
    result into the groups' valid rows, ``ref`` holds the float32 products to compare them with.
    ``forced``: builds the same call with force_kernel=FORCED_FP8, tried when ``fn`` is
    NOT_SUPPORTED."""
    name: str
    fn: Callable
    pieces: Callable
    ref: list
    forced: Optional[Callable] = None


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


def quantize(torch, t, rows_per_block, cols_per_block):
    """t (R x K) as e4m3 values and float32 scales, one per rows_per_block x cols_per_block block
    (scale = the block's amax / 448): returns (q, scale of shape (ceil(R/rb), ceil(K/cb)))."""
    r, k = t.shape
    rb, cb = rows_per_block, cols_per_block
    nr, nc = -(-r // rb), -(-k // cb)
    padded = torch.zeros(nr * rb, nc * cb, device=t.device, dtype=torch.float32)
    padded[:r, :k] = t
    blocks = padded.view(nr, rb, nc, cb)
    scale = blocks.abs().amax(dim=(1, 3)).clamp_min(1e-12) / FP8_MAX
    q = (blocks / scale[:, None, :, None]).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
    return q.view(nr * rb, nc * cb)[:r, :k].contiguous(), scale


def dequantize(q, scale, rows_per_block, cols_per_block):
    """The float32 values that q (R x K) and its block scales stand for."""
    r, k = q.shape
    s = scale.repeat_interleave(rows_per_block, dim=0)[:r].repeat_interleave(cols_per_block, dim=1)[:, :k]
    return q.float() * s


def quantize_weights(torch, w):
    """The experts' weights (G, N, K) in e4m3 twice: row-wise (scales (G, N)) and in 128 x 128
    blocks (scales (G, ceil(N/128), ceil(K/128))), one expert at a time to bound the float copies."""
    groups, n, k = w.shape
    q_row = torch.empty(groups, n, k, device=w.device, dtype=torch.float8_e4m3fn)
    q_blk = torch.empty_like(q_row)
    s_row = torch.empty(groups, n, device=w.device, dtype=torch.float32)
    s_blk = torch.empty(groups, -(-n // 128), -(-k // 128), device=w.device, dtype=torch.float32)
    for g in range(groups):
        q, s = quantize(torch, w[g], 1, k)
        q_row[g], s_row[g] = q, s[:, 0]
        q_blk[g], s_blk[g] = quantize(torch, w[g], 128, 128)
    return {"row": (q_row, s_row), "block": (q_blk, s_blk)}


def expected_rows(args, counts, slot):
    """The masked plans' grouped->expected_m: the mean rows per expert (0 with --no-hint)."""
    return 0 if args.no_hint else min(slot, max(1, round(sum(counts) / len(counts))))


def probe_scaled_grouped_mm(torch, dev):
    """None when torch._scaled_grouped_mm runs here (a tiny 2-D x 3-D call, checked against its
    exact product), else why not."""
    if not hasattr(torch, "_scaled_grouped_mm"):
        return f"torch {torch.__version__} has no torch._scaled_grouped_mm"
    try:
        a = torch.ones(32, 32, device=dev).to(torch.float8_e4m3fn)
        b = torch.ones(2, 32, 32, device=dev).to(torch.float8_e4m3fn)  # (G, N, K)
        sa = torch.full((32,), 0.5, device=dev, dtype=torch.float32)
        sb = torch.full((2, 32), 2.0, device=dev, dtype=torch.float32)
        offs = torch.tensor([16, 32], device=dev, dtype=torch.int32)
        out = torch._scaled_grouped_mm(a, b.transpose(-2, -1), sa, sb, offs=offs, out_dtype=torch.bfloat16)
        torch.cuda.synchronize()
        if tuple(out.shape) != (32, 32) or not bool((out.float() == 32.0).all()):
            return "a tiny 2-D x 3-D call returned a wrong result"
    except Exception as e:  # noqa: BLE001 - whatever refuses it is the reason
        return f"{type(e).__name__}: {(str(e).strip().splitlines() or [''])[0][:200]}"
    return None


def bf16_contenders(torch, deepgemm, dev, args, layout, x, w, counts, starts, ref, has_grouped_mm, row):
    groups, n, k = w.shape
    contenders = []
    if layout == "contiguous":
        pad = args.align
        padded = [(c + pad - 1) // pad * pad for c in counts]
        offsets = [0]
        for p in padded:
            offsets.append(offsets[-1] + p)
        xd = torch.zeros(max(offsets[-1], pad), k, device=dev, dtype=torch.bfloat16)
        for g in range(groups):
            xd[offsets[g]:offsets[g] + counts[g]] = x[starts[g]:starts[g + 1]]
        offs_dev = torch.tensor(offsets, device=dev, dtype=torch.int32)
        out_dg = torch.empty(xd.shape[0], n, device=dev, dtype=torch.bfloat16)
        contenders.append(Contender(
            "deepgemm",
            lambda: deepgemm.grouped_matmul(xd, w, offsets=offs_dev, trans_b=True, out=out_dg, m_alignment=pad,
                                            force_kernel=args.force_kernel),
            lambda out: [out[offsets[g]:offsets[g] + counts[g]] for g in range(groups)], ref))
        if has_grouped_mm:
            ends = torch.tensor(starts[1:], device=dev, dtype=torch.int32)
            wt = w.transpose(-2, -1)  # (G, K, N) view, column-major inner: what _grouped_mm wants
            contenders.append(Contender(
                "torch_grouped_mm", lambda: torch._grouped_mm(x, wt, offs=ends),
                lambda out: [out[starts[g]:starts[g + 1]] for g in range(groups)], ref))
    else:
        slot = max(128, (max(counts) + 127) // 128 * 128)
        x3 = torch.zeros(groups, slot, k, device=dev, dtype=torch.bfloat16)
        for g in range(groups):
            x3[g, :counts[g]] = x[starts[g]:starts[g + 1]]
        counts_dev = torch.tensor(counts, device=dev, dtype=torch.int32)
        out3 = torch.empty(groups, slot, n, device=dev, dtype=torch.bfloat16)
        row["slot"] = slot
        row["expected_m"] = hint = expected_rows(args, counts, slot)
        contenders.append(Contender(
            "deepgemm",
            lambda: deepgemm.grouped_matmul(x3, w, counts=counts_dev, trans_b=True, out=out3,
                                            force_kernel=args.force_kernel, expected_m=hint),
            lambda out: [out[g, :counts[g]] for g in range(groups)], ref))
        if has_grouped_mm:
            wt = w.transpose(-2, -1)
            contenders.append(Contender(
                "torch_3d", lambda: torch._grouped_mm(x3, wt),
                lambda out: [out[g, :counts[g]] for g in range(groups)], ref))
    out_loop = torch.empty(x.shape[0], n, device=dev, dtype=torch.bfloat16)

    def loop(out=out_loop):
        for g in range(groups):
            if counts[g]:
                torch.matmul(x[starts[g]:starts[g + 1]], w[g].T, out=out[starts[g]:starts[g + 1]])
        return out
    contenders.append(Contender("torch_loop", loop,
                                lambda out: [out[starts[g]:starts[g + 1]] for g in range(groups)], ref))
    return contenders


def fp8_operands(torch, x, wq, starts):
    """The tokens x quantized as each recipe wants them, and each recipe's float32 reference per
    expert from the dequantized operands: {"row": (A e4m3, A scales (M,), ref),
    "block": (A e4m3, A scales (M, KB), ref)}."""
    groups = len(starts) - 1
    k = x.shape[1]
    operands = {}
    for recipe, (rb, cb, brb) in (("row", (1, k, 1)), ("block", (1, 128, 128))):
        xq, xs = quantize(torch, x, rb, cb)
        a = dequantize(xq, xs, rb, cb)
        bq, bs = wq[recipe]
        bs2 = bs.unsqueeze(-1) if recipe == "row" else bs
        ref = [a[starts[g]:starts[g + 1]] @ dequantize(bq[g], bs2[g], brb, cb).T for g in range(groups)]
        del a
        operands[recipe] = (xq, xs[:, 0].contiguous() if recipe == "row" else xs, ref)
    return operands


def fp8_contenders(torch, deepgemm, dev, args, layout, operands, wq, counts, starts, sgmm_why, row):
    groups, n, k = wq["row"][0].shape
    kb = -(-k // 128)
    force = args.force_kernel
    u8 = torch.uint8
    contenders = []
    (xq_r, xs_r, ref_r), (xq_b, xs_b, ref_b) = operands["row"], operands["block"]
    (wq_r, ws_r), (wq_b, ws_b) = wq["row"], wq["block"]

    if layout == "contiguous":
        pad = args.align
        padded = [(c + pad - 1) // pad * pad for c in counts]
        offsets = [0]
        for p in padded:
            offsets.append(offsets[-1] + p)
        m = max(offsets[-1], pad)
        m_tma = (m + 3) // 4 * 4  # DeepGEMM's TMA-aligned leading dimension of MN-major float32 scales
        a_r = torch.zeros(m, k, device=dev, dtype=u8)  # e4m3 zero = byte 0; rows built as bytes
        a_b = torch.zeros(m, k, device=dev, dtype=u8)
        sa_r = torch.ones(m, device=dev, dtype=torch.float32)
        sa_b_store = torch.ones(kb, m_tma, device=dev, dtype=torch.float32)
        for g in range(groups):
            dst, src = slice(offsets[g], offsets[g] + counts[g]), slice(starts[g], starts[g + 1])
            a_r[dst] = xq_r.view(u8)[src]
            a_b[dst] = xq_b.view(u8)[src]
            sa_r[dst] = xs_r[src]
            sa_b_store[:, dst] = xs_b[src].T
        a_r, a_b = a_r.view(torch.float8_e4m3fn), a_b.view(torch.float8_e4m3fn)
        sa_b = sa_b_store[:, :m].t()  # (M, KB), MN-major
        offs_dev = torch.tensor(offsets, device=dev, dtype=torch.int32)

        def deepgemm_call(a, sa, b, sb, kernel):
            # NaN poison: a kernel that writes nothing must not pass on another contender's result.
            out = torch.full((m, n), float("nan"), device=dev, dtype=torch.bfloat16)
            return lambda: deepgemm.grouped_matmul(a, b, offsets=offs_dev, trans_b=True, out=out, m_alignment=pad,
                                                   a_scale=sa, b_scale=sb, force_kernel=kernel)
        dg_pieces = lambda out: [out[offsets[g]:offsets[g] + counts[g]] for g in range(groups)]  # noqa: E731
        dg_args = {"deepgemm": (a_r, sa_r, wq_r, ws_r, ref_r), "deepgemm_block": (a_b, sa_b, wq_b, ws_b, ref_b)}
    else:
        slot = max(128, (max(counts) + 127) // 128 * 128)
        row["slot"] = slot
        slot_tma = (slot + 3) // 4 * 4
        a3_r = torch.zeros(groups, slot, k, device=dev, dtype=u8)
        a3_b = torch.zeros(groups, slot, k, device=dev, dtype=u8)
        sa3_r = torch.ones(groups, slot, device=dev, dtype=torch.float32)
        sa3_b_store = torch.ones(groups, kb, slot_tma, device=dev, dtype=torch.float32)
        for g in range(groups):
            src = slice(starts[g], starts[g + 1])
            a3_r[g, :counts[g]] = xq_r.view(u8)[src]
            a3_b[g, :counts[g]] = xq_b.view(u8)[src]
            sa3_r[g, :counts[g]] = xs_r[src]
            sa3_b_store[g, :, :counts[g]] = xs_b[src].T
        a3_r, a3_b = a3_r.view(torch.float8_e4m3fn), a3_b.view(torch.float8_e4m3fn)
        sa3_b = sa3_b_store[:, :, :slot].transpose(1, 2)  # (G, M, KB), MN-major per slot
        counts_dev = torch.tensor(counts, device=dev, dtype=torch.int32)
        row["expected_m"] = hint = expected_rows(args, counts, slot)

        def deepgemm_call(a, sa, b, sb, kernel):
            out = torch.full((groups, slot, n), float("nan"), device=dev, dtype=torch.bfloat16)
            return lambda: deepgemm.grouped_matmul(a, b, counts=counts_dev, trans_b=True, out=out,
                                                   a_scale=sa, b_scale=sb, force_kernel=kernel, expected_m=hint)
        dg_pieces = lambda out: [out[g, :counts[g]] for g in range(groups)]  # noqa: E731
        dg_args = {"deepgemm": (a3_r, sa3_r, wq_r, ws_r, ref_r), "deepgemm_block": (a3_b, sa3_b, wq_b, ws_b, ref_b)}

    for name, (a, sa, b, sb, ref) in dg_args.items():
        forced = None
        if force is None:  # built only if the planner refuses: its own poisoned output
            forced = lambda a=a, sa=sa, b=b, sb=sb: deepgemm_call(a, sa, b, sb, FORCED_FP8)  # noqa: E731
        contenders.append(Contender(name, deepgemm_call(a, sa, b, sb, force), dg_pieces, ref, forced))

    torch_pieces = lambda out: [out[starts[g]:starts[g + 1]] for g in range(groups)]  # noqa: E731
    if sgmm_why is None:
        wt = wq_r.transpose(-2, -1)  # (G, K, N) view of the (G, N, K) weights: column-major, as it requires
        if layout == "contiguous":
            ends = torch.tensor(starts[1:], device=dev, dtype=torch.int32)
            contenders.append(Contender(
                "torch_scaled_grouped_mm",
                lambda: torch._scaled_grouped_mm(xq_r, wt, xs_r, ws_r, offs=ends, out_dtype=torch.bfloat16),
                torch_pieces, ref_r))
        else:
            contenders.append(Contender(
                "torch_scaled_3d", lambda: torch._scaled_grouped_mm(a3_r, wt, sa3_r, ws_r, out_dtype=torch.bfloat16),
                dg_pieces, ref_r))
    if hasattr(torch, "_scaled_mm"):
        out_loop = torch.empty(xq_r.shape[0], n, device=dev, dtype=torch.bfloat16)
        # Row-wise _scaled_mm: scale_a (rows, 1) and scale_b (1, N), float32 and contiguous.
        sa_loop = [xs_r[starts[g]:starts[g + 1]].unsqueeze(1) for g in range(groups)]
        sb_loop = [ws_r[g].unsqueeze(0) for g in range(groups)]

        def scaled_loop(out=out_loop):
            for g in range(groups):
                if counts[g]:
                    torch._scaled_mm(xq_r[starts[g]:starts[g + 1]], wq_r[g].t(), sa_loop[g], sb_loop[g],
                                     out_dtype=torch.bfloat16, out=out[starts[g]:starts[g + 1]])
            return out
        contenders.append(Contender("torch_scaled_mm_loop", scaled_loop, torch_pieces, ref_r))
    return contenders


def last_plan_kernel(deepgemm, device):
    """The configuration name of the plan deepgemm ran last on `device` ("cuda:0"): the most recently
    used plan of the binding's context for it (its cache moves a plan to the end on each use), or
    None where that cannot be read (a private part of the binding: never fail a row for it)."""
    try:
        from deepgemm import _api
        ctx = _api._context_for(device)
        with ctx._lock:
            plan = next(reversed(ctx._cache.values()), None)
        return plan.describe()["chosen"]["config"]["name"] if plan is not None else None
    except Exception:  # noqa: BLE001 - informational only
        return None


def run_contenders(torch, deepgemm, row, contenders, reps, tolerance):
    """Checks and times each contender into row (with the kernel each deepgemm contender's plan
    chose, under "kernel"); returns how many deepgemm results were wrong."""
    failures = 0
    queue = list(contenders)
    while queue:
        c = queue.pop(0)
        try:
            out = c.fn()
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001 - reported per contender
            status = getattr(e, "status", None)
            unsupported = status == deepgemm.Status.NOT_SUPPORTED
            kind = "not supported" if unsupported else type(e).__name__
            row["why"][c.name] = f"{kind}: {getattr(e, 'message', str(e))}"
            if unsupported and c.forced is not None:
                queue.insert(0, Contender(f"{c.name} (forced {FORCED_FP8})", c.forced(), c.pieces, c.ref))
            continue
        if c.name.startswith("deepgemm"):
            row.setdefault("kernel", {})[c.name] = last_plan_kernel(deepgemm, f"cuda:{torch.cuda.current_device()}")
        err = max(rel_error(torch, got, want) for got, want in zip(c.pieces(out), c.ref) if want.numel())
        row["err"][c.name] = err
        if not err <= tolerance:
            row["why"][c.name] = f"WRONG: relative error {err:.3g}"
            if c.name.startswith("deepgemm"):
                failures += 1
            continue
        row["ms"][c.name], row["timing"][c.name] = timed(torch, c.fn, reps)
    return failures


def write_json(torch, deepgemm, args, has_grouped_mm, sgmm_why, rows, replay):
    """OUT/grouped_torch.json with the rows so far (replay None: the run has not reached the graph
    replay check yet)."""
    if not args.out:
        return
    os.makedirs(args.out, exist_ok=True)
    extra = {"dtypes": args.dtype, "force_kernel": args.force_kernel}
    if "fp8" in args.dtype:
        extra["torch_scaled_grouped_mm"] = "available" if sgmm_why is None else f"not available: {sgmm_why}"
    with open(os.path.join(args.out, "grouped_torch.json"), "w") as f:
        json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                   "torch_grouped_mm": has_grouped_mm, "deepgemm": deepgemm.version(), "align": args.align,
                   **extra, "rows": rows, "graph_replay": replay}, f, indent=1)


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
          f"{','.join(args.dtype)}, align {args.align}, skew {args.skew}, seed {args.seed}"
          + (f", force_kernel {args.force_kernel}" if args.force_kernel else ""))
    sgmm_why = None
    if "fp8" in args.dtype:
        if not hasattr(torch, "float8_e4m3fn"):
            print(f"SKIP fp8 rows: torch {torch.__version__} has no float8_e4m3fn")
            args.dtype = [d for d in args.dtype if d != "fp8"]
        else:
            sgmm_why = probe_scaled_grouped_mm(torch, dev)
            print(f"fp8: e4m3 in, bf16 out; torch._scaled_grouped_mm "
                  f"{'available' if sgmm_why is None else 'not available: ' + sgmm_why}; torch._scaled_mm "
                  f"{'present' if hasattr(torch, '_scaled_mm') else 'ABSENT'}")
    gen = torch.Generator().manual_seed(args.seed)
    torch.manual_seed(args.seed)
    token_list = args.tokens or ([256] if args.quick else [64, 256, 1024])
    layouts = ("contiguous", "masked") if args.layout == "both" else (args.layout,)
    reps = 5 if args.quick else args.reps
    rows, failures = [], 0
    for n, k in args.nk:
        for groups in args.groups:
            w = torch.randn(groups, n, k, device=dev, dtype=torch.bfloat16) / math.sqrt(k)  # (G, N, K): nn.Linear
            wq = quantize_weights(torch, w) if "fp8" in args.dtype else None
            for tokens in token_list:
                counts = list(args.counts) if args.counts else expert_counts(torch, groups, tokens, args.skew, gen)
                valid = sum(counts)
                flops = 2.0 * valid * n * k
                x = torch.randn(valid, k, device=dev, dtype=torch.bfloat16)  # tokens sorted by expert
                starts = [0]
                for c in counts:
                    starts.append(starts[-1] + c)
                for dtype in args.dtype:
                    if dtype == "bf16":
                        ref = [x[starts[g]:starts[g + 1]].float() @ w[g].float().T for g in range(groups)]
                    else:
                        operands = fp8_operands(torch, x, wq, starts)
                    for layout in layouts:
                        row = {"dtype": dtype, "layout": layout, "n": n, "k": k, "groups": groups, "tokens": tokens,
                               "counts": counts, "valid_rows": valid, "ms": {}, "err": {}, "why": {}, "timing": {}}
                        if dtype == "bf16":
                            contenders = bf16_contenders(torch, deepgemm, dev, args, layout, x, w, counts, starts,
                                                         ref, has_grouped_mm, row)
                        else:
                            contenders = fp8_contenders(torch, deepgemm, dev, args, layout, operands, wq, counts,
                                                        starts, sgmm_why, row)
                        failures += run_contenders(torch, deepgemm, row, contenders, reps, TOLERANCE[dtype])
                        del contenders
                        rows.append(row)
                        # The rows so far: a run cut short keeps what it timed.
                        write_json(torch, deepgemm, args, has_grouped_mm, sgmm_why, rows, None)
                        line = " ".join(f"{c}={row['ms'][c] * 1e3:.1f}us({flops / row['ms'][c] * 1e-9:.0f}TF)"
                                        for c in row["ms"])
                        tag = "" if dtype == "bf16" else "fp8: "
                        print(f"{layout:10s} {n}x{k} G={groups:2d} t={tokens:4d} rows={valid:6d}  {tag}{line}",
                              flush=True)
                        for c, why in row["why"].items():
                            print(f"    {c}: {why[:300]}")

    replay = graph_replay_check(torch, deepgemm, dev, args.force_kernel)
    failures += replay.get("failures", 0)
    write_json(torch, deepgemm, args, has_grouped_mm, sgmm_why, rows, replay)

    def us(v):
        return f"{v * 1e3:.1f}" if v else "-"

    # The short tables, last: ratio = the other's time / deepgemm's (> 1: deepgemm is faster).
    bf16_rows = [r for r in rows if r["dtype"] == "bf16"]
    if bf16_rows:
        print("\nsummary (us per call; vs_X = X time / deepgemm time, > 1: deepgemm faster)")
        print(f"{'layout':10s} {'NxK':10s} {'G':>3s} {'tok':>5s} {'deepgemm':>9s} {'grouped_mm':>10s} {'loop':>8s} "
              f"{'vs_gmm':>7s} {'vs_loop':>7s}")
    for r in bf16_rows:
        ms = r["ms"]
        dg = ms.get("deepgemm")
        gmm = ms.get("torch_grouped_mm", ms.get("torch_3d"))
        lp = ms.get("torch_loop")

        def ratio(v):
            return f"{v / dg:.3f}" if v and dg else "-"
        print(f"{r['layout']:10s} {str(r['n']) + 'x' + str(r['k']):10s} {r['groups']:3d} {r['tokens']:5d} "
              f"{us(dg) if dg else 'n/s':>9s} {us(gmm):>10s} {us(lp):>8s} {ratio(gmm):>7s} {ratio(lp):>7s}")
    unsupported = [r["why"]["deepgemm"] for r in bf16_rows if "deepgemm" in r["why"]]
    if unsupported:
        print(f"deepgemm did not run {len(unsupported)} rows: {unsupported[0][:300]}")
    fp8_rows = [r for r in rows if r["dtype"] == "fp8"]
    if fp8_rows:
        forced = f" (forced {FORCED_FP8})"
        print(f"\nFP8 summary (us per call, e4m3 in, bf16 out; deepgemm, scaled_gmm, sm_loop: row-wise scales; "
              f"dg_block: 1x128 A, 128x128 B; vs_X = X time / deepgemm row-wise time, > 1: deepgemm faster; "
              f"*: forced {FORCED_FP8})")
        print(f"{'layout':10s} {'NxK':10s} {'G':>3s} {'tok':>5s} {'deepgemm':>9s} {'dg_block':>9s} {'scaled_gmm':>10s} "
              f"{'sm_loop':>8s} {'vs_sgmm':>7s} {'vs_loop':>7s}")
    for r in fp8_rows:
        ms = r["ms"]

        def pick(name):
            """The unforced time, else the forced one (marked *)."""
            if name in ms:
                return ms[name], us(ms[name])
            if name + forced in ms:
                return ms[name + forced], us(ms[name + forced]) + "*"
            return None, "n/s"
        dg, dg_text = pick("deepgemm")
        _, blk_text = pick("deepgemm_block")
        sgmm = ms.get("torch_scaled_grouped_mm", ms.get("torch_scaled_3d"))
        lp = ms.get("torch_scaled_mm_loop")

        def ratio(v):
            return f"{v / dg:.3f}" if v and dg else "-"
        print(f"{r['layout']:10s} {str(r['n']) + 'x' + str(r['k']):10s} {r['groups']:3d} {r['tokens']:5d} "
              f"{dg_text:>9s} {blk_text:>9s} {us(sgmm):>10s} {us(lp):>8s} {ratio(sgmm):>7s} {ratio(lp):>7s}")
    for name in ("deepgemm", "deepgemm_block"):
        refused = [r["why"][name] for r in fp8_rows if name in r["why"]]
        if refused:
            ran = sum(1 for r in fp8_rows if name + forced in r["ms"])
            print(f"fp8 {name} did not run {len(refused)} rows ({ran} ran forced): {refused[0][:300]}")
    print(f"masked CUDA-graph replay with changing counts: {replay['result']}")
    print(f"torch {torch.__version__}: torch._grouped_mm {'present' if has_grouped_mm else 'absent'}; "
          + (f"torch._scaled_grouped_mm {'available' if sgmm_why is None else 'not available'}; "
             if fp8_rows else "") + f"wrong results: {failures}")
    return 1 if failures else 0


def graph_replay_check(torch, deepgemm, dev, force_kernel=None):
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
    call = lambda: deepgemm.grouped_matmul(x3, w, counts=counts, trans_b=True, out=out, status=status,  # noqa: E731
                                           force_kernel=force_kernel)
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
