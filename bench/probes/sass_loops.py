#!/usr/bin/env python3
"""The loops of a compiled kernel that issue tensor-core MMAs, and where it spills: SASS read
without a GPU.

    deepgemm gen --output k.cuh --arch h200 [problem flags] --force CONFIG
    nvcc -arch=sm_90a -std=c++17 -x cu -cubin k.cuh -o k.cubin
    python3 bench/probes/sass_loops.py k.cubin [other.cubin ...]

cuobjdump (or a saved `cuobjdump -sass` text) is all it needs: the CUDA toolkit's, or the
nvidia-cuda-cuobjdump Python wheel's (pip install nvidia-cuda-cuobjdump; its bin/ folder on PATH)
on a machine whose toolkit ships only nvcc and ptxas. For each loop (a backward branch) whose body
holds a GMMA: its length in instructions and the commonest opcodes, e.g. the K loop's descriptor
arithmetic per wgmma; then every local-memory access (STL/LDL: spills) and whether it lies in the
producer (after the warpgroup's setmaxnreg.dec) or the consumers. Static counts: a path in a loop
that a run never takes (a stream-K partial store, say) counts as much as one it always takes.
"""
import collections
import re
import subprocess
import sys


def sass_text(path):
    if path.endswith(".cubin") or path.endswith(".o"):
        return subprocess.run(["cuobjdump", "-sass", path], check=True, capture_output=True, text=True).stdout
    return open(path).read()


def parse(text):
    out = []
    for line in text.splitlines():
        m = re.match(r"\s*/\*([0-9a-f]+)\*/\s+(.*?)\s*;", line)
        if m:
            out.append((int(m.group(1), 16), m.group(2)))
    return out


def opcode(instr):
    return re.sub(r"^@!?U?P\w+\s+", "", instr).split()[0].split(".")[0]


def report(path):
    ins = parse(sass_text(path))
    print(f"== {path}: {len(ins)} instructions")
    for addr, instr in ins:
        m = re.search(r"\bBRA(?:\.[A-Z.]+)?\s+(0x[0-9a-f]+)", instr)
        if not m or int(m.group(1), 16) >= addr:
            continue
        start = int(m.group(1), 16)
        body = [t for a, t in ins if start <= a <= addr]
        gmma = sum("GMMA" in t for t in body)
        if gmma == 0:
            continue
        ops = collections.Counter(opcode(t) for t in body)
        common = ", ".join(f"{k} {v}" for k, v in ops.most_common(10))
        print(f"  loop {start:#x}-{addr:#x}: {len(body)} instructions, {gmma} GMMA; {common}")
    producer_from = next((a for a, t in ins if "SETMAXREG.DEALLOC" in t), None)
    spills = [(a, t) for a, t in ins if opcode(t) in ("STL", "LDL")]
    if not spills:
        print("  no local-memory accesses (no spills)")
    for a, t in spills:
        side = "producer" if producer_from is not None and a > producer_from else "consumer or shared code"
        print(f"  {a:#x} {t}  ({side})")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    for p in sys.argv[1:]:
        report(p)
