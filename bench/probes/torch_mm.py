# Probe: cuBLAS (through torch.mm) on one shape, for `ncu -k regex:'nvjet|gemm|gemv|Kernel'` to
# pick its kernel, and its CUDA-graph replay time. python3 bench/probes/torch_mm.py M N K
import sys, torch
m, n, k = map(int, sys.argv[1:4])
a = torch.randn(m, k, dtype=torch.bfloat16, device="cuda")
b = torch.randn(n, k, dtype=torch.bfloat16, device="cuda")
for _ in range(5):
    d = torch.mm(a, b.t())
torch.cuda.synchronize()
# Graph-replay time for reference (events over 200 GEMMs).
g = torch.cuda.CUDAGraph()
s = torch.cuda.Stream()
with torch.cuda.stream(s):
    with torch.cuda.graph(g):
        for _ in range(50):
            d = torch.mm(a, b.t())
torch.cuda.synchronize()
e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
g.replay(); torch.cuda.synchronize()
e0.record()
for _ in range(4):
    g.replay()
e1.record(); torch.cuda.synchronize()
print(f"torch.mm {m}x{n}x{k}: {e0.elapsed_time(e1) * 1e3 / 200:.2f} us per GEMM (graph)")
