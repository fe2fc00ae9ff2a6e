#!/usr/bin/env python3
"""Where a kernel's warps wait, by region of its SASS: ncu's per-instruction stall samples summed
over the K loop, the epilogue and the rest, so that two kernels (a plain one and its stream-K twin,
say: sm90 NOTES -3) can be compared region by region.

    ncu --set full --import-source no -o k ./deepgemm-bench ... --profile     (bench/probes/stall_regions.sh)
    ncu --import k.ncu-rep --page source --csv --print-source sass > k-sass.csv
    python3 bench/probes/stall_regions.py k-sass.csv [other-sass.csv ...]
    python3 bench/probes/stall_regions.py --self-test

The CSV has one row per SASS instruction with its address, its text and sample columns (the
"Warp Stall Sampling (All Samples)" total, and per-reason columns where ncu writes them). Regions:
  k-loop    the innermost backward-branch loops whose body issues GMMA (the main loop's MMAs and
            their barrier waits; a ping-pong or stream-K kernel may have several such loops);
  epilogue  the instructions after the first K loop that store D (STG / STS / UTMASTG / ST.) and
            the conversion / math between them: every instruction past the last K loop's end up
            to the next K loop or the kernel's end that is not a branch back into a K loop;
  producer  instructions of the producer warps (after SETMAXREG.DEALLOC up to the next
            SETMAXREG.ALLOC, where the kernel has them): the TMA loop;
  other     the rest (set-up, scheduling, stream-K reduction).
This is a static split of dynamic samples: a region's share says where warps sat, not why. The
totals per reason (columns whose name starts with "stall_" or that ncu labels per reason) are
printed for each region when present. Without those columns only the totals are.
"""
import collections
import csv
import io
import re
import sys


def opcode(instr):
    return re.sub(r"^@!?U?P\w+\s+", "", instr.strip()).split()[0].split(".")[0] if instr.strip() else ""


def load(text):
    """(rows as dicts, address column, source column, total-samples column, per-reason columns)."""
    lines = [l for l in text.splitlines() if l.strip() and not l.startswith("==")]
    # ncu writes a "Kernel Name" line (and may write others) before the header: start at the header.
    head = next((i for i, l in enumerate(lines) if l.startswith('"Address"') or l.startswith("Address")), 0)
    rows = [r for r in csv.DictReader(io.StringIO("\n".join(lines[head:]))) if None not in r]
    if not rows:
        raise ValueError("no CSV rows")
    cols = list(rows[0].keys())
    addr = next((c for c in cols if c.strip().lower() in ("address", "pc", "offset")), None)
    src = next((c for c in cols if c.strip().lower() in ("source", "sass")), None)
    total = next((c for c in cols if "stall sampling (all" in c.lower()), None) or \
        next((c for c in cols if "sampling" in c.lower() and "not" not in c.lower()), None)
    reasons = [c for c in cols if c.lower().startswith("stall_") or c.lower().startswith("smsp__pcsamp_warps_issue_stalled")]
    if not (addr and src and total):
        raise ValueError("columns not found (address %r, source %r, samples %r) in: %s" % (addr, src, total, cols))
    return rows, addr, src, total, reasons


def number(s):
    s = (s or "").replace(",", "").strip()
    try:
        return float(s)
    except ValueError:
        return 0.0


def regions(rows, addr_col, src_col):
    """Region name per row index."""
    ins = []
    for r in rows:
        a = r[addr_col].strip()
        try:
            ins.append((int(a, 16) if a.lower().startswith("0x") or re.search("[a-f]", a.lower()) else int(a), r[src_col]))
        except ValueError:
            ins.append((None, r[src_col]))
    loops = []
    for i, (a, t) in enumerate(ins):
        m = re.search(r"\bBRA(?:\.[A-Z.]+)?\s+(?:`\(\.L_x_\d+\)\s*)?(0x[0-9a-f]+)", t)
        if a is None or not m or int(m.group(1), 16) >= a:
            continue
        start = int(m.group(1), 16)
        body = [(b, u) for b, u in ins if b is not None and start <= b <= a]
        if any("GMMA" in u for _, u in body):
            loops.append((start, a))
    # The K loops: for each GMMA the smallest loop holding it (back edges may interleave, so a loop
    # "containing" another is not a test of nesting).
    gmma = [b for b, u in ins if b is not None and "GMMA" in u]
    inner = sorted({min((l for l in loops if l[0] <= g <= l[1]), key=lambda l: l[1] - l[0]) for g in gmma
                    if any(l[0] <= g <= l[1] for l in loops)})
    # A GMMA peeled out of its K loop (the 8-bit kernels issue a tile's first K block before the
    # loop) finds the persistent tile loop as its smallest: a loop spanning another K loop is not
    # innermost, so it goes (its other instructions fall to the epilogue or the rest).
    inner = [l for l in inner if not any(o != l and l[0] <= o[0] and o[1] <= l[1] for o in inner)]
    out = []
    producer = False
    last_loop_end = None
    for a, t in ins:
        op = opcode(t)
        if "SETMAXREG" in t:
            producer = "DEALLOC" in t
        if a is not None and any(s <= a <= e for s, e in inner):
            out.append("k-loop")
            last_loop_end = max(e for s, e in inner if s <= a <= e)
        elif producer:
            out.append("producer")
        elif last_loop_end is not None and op not in ("BRA", "EXIT"):
            out.append("epilogue")
        else:
            out.append("other")
    return out


def report(path, text):
    rows, addr, src, total, reasons = load(text)
    reg = regions(rows, addr, src)
    tot = collections.Counter()
    per = collections.defaultdict(collections.Counter)
    count = collections.Counter()
    for r, g in zip(rows, reg):
        tot[g] += number(r[total])
        count[g] += 1
        for c in reasons:
            per[g][c] += number(r[c])
    all_samples = sum(tot.values()) or 1.0
    print("== %s: %d instructions, %.0f samples" % (path, len(rows), sum(tot.values())))
    for g in ("k-loop", "epilogue", "producer", "other"):
        top = ", ".join("%s %.0f" % (c.replace("smsp__pcsamp_warps_issue_stalled_", "").replace("stall_", ""), v)
                        for c, v in per[g].most_common(5) if v > 0)
        print("  %-9s %5d instructions  %10.0f samples  %5.1f %%%s" % (g, count[g], tot[g], 100.0 * tot[g] / all_samples,
                                                                     "  (" + top + ")" if top else ""))


SELF_TEST_HEADER = '''"Kernel Name","dgemm_sm90_gemm",
"Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)","stall_long_sb"
'''
SELF_TEST = SELF_TEST_HEADER + '''"0x0000","MOV R1, c[0x0][0x28] ;","3","1","0"
"0x0010","SETMAXREG.DEALLOC 0x28 ;","1","1","0"
"0x0020","UTMALDG.2D [UR8], [UR4] ;","50","40","0"
"0x0030","BRA 0x20 ;","5","1","0"
"0x0040","SETMAXREG.ALLOC 0xe8 ;","1","1","0"
"0x0050","SYNCS.PHASECHK.TRANS64 P0, [UR4], R2 ;","100","90","0"
"0x0060","HGMMA.64x128x16.F32.BF16 R24, gdesc[UR8], R24 ;","300","10","0"
"0x0070","BRA 0x50 ;","10","2","0"
"0x0080","F2FP.BF16.F32.PACK_AB R3, R25, R24 ;","20","5","7"
"0x0090","STG.E desc[UR6][R4.64], R3 ;","40","30","30"
"0x00a0","EXIT ;","1","1","0"
'''


# A persistent tile loop (0x40-0xa0) whose tile issues its first K block's GMMA before the K loop
# (0x60-0x80), as the 8-bit kernels do: only the inner loop is a K loop.
SELF_TEST_PEELED = SELF_TEST_HEADER + '''"0x0000","MOV R1, c[0x0][0x28] ;","3","1","0"
"0x0010","SETMAXREG.ALLOC 0xe8 ;","1","1","0"
"0x0040","SYNCS.PHASECHK.TRANS64 P0, [UR4], R2 ;","100","90","0"
"0x0050","QGMMA.64x128x32.F32.E4M3.E4M3 R24, gdesc[UR8], R24 ;","300","10","0"
"0x0060","SYNCS.PHASECHK.TRANS64 P0, [UR4], R2 ;","100","90","0"
"0x0070","QGMMA.64x128x32.F32.E4M3.E4M3 R24, gdesc[UR8], R24 ;","300","10","0"
"0x0080","BRA 0x60 ;","10","2","0"
"0x0090","STG.E desc[UR6][R4.64], R3 ;","40","30","30"
"0x00a0","BRA 0x40 ;","10","2","0"
"0x00b0","EXIT ;","1","1","0"
'''


def self_test():
    for text, want in ((SELF_TEST, ["other", "producer", "producer", "producer", "other", "k-loop", "k-loop", "k-loop",
                                    "epilogue", "epilogue", "other"]),
                       (SELF_TEST_PEELED, ["other", "other", "other", "other", "k-loop", "k-loop", "k-loop", "epilogue",
                                           "other", "other"])):
        rows, addr, src, total, reasons = load(text)
        reg = regions(rows, addr, src)
        if reg != want:
            print("stall_regions self-test FAILED: %s != %s" % (reg, want))
            return 1
    report("self-test", SELF_TEST)
    print("stall_regions self-test passed")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) < 2:
        print(__doc__)
        return 2
    rc = 0
    for p in argv[1:]:
        try:
            report(p, open(p, errors="replace").read())
        except (OSError, ValueError) as e:
            print("stall_regions: %s: %s" % (p, e))
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
