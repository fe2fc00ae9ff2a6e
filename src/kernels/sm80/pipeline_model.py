#!/usr/bin/env python3
# Host-side model of the sm80 variant-1 main loop's schedule (sm80_gemm.cuh, kPipelined), written
# because no GPU is available where the loop was written: it replays the loop's order of cp.async
# commits, wait_group + __syncthreads, stage refills and fragment reads for every stage count,
# slices per K tile and K-tile count, and asserts that each mma uses fragments of its own
# (tile, slice), that every fragment read sees the right tile, landed and made visible by a wait +
# barrier, and that no stage is refilled in a barrier epoch in which some warp may still read it.
# Run: python3 src/kernels/sm80/pipeline_model.py  (prints "ok"; mutating the loop's constants,
# e.g. the first write stage or the wait depth, makes it fail).
def run(S, KK, k_tiles):
    epoch = 0
    stage_tile = {}          # stage -> (tile, group, epoch written)
    committed = 0            # groups committed
    landed_visible = -1      # highest group index guaranteed landed & visible to all
    reads = []               # (epoch, stage)
    writes = []              # (epoch, stage)
    def load_stage(stage, tile):
        stage_tile[stage] = (tile, committed, epoch)
        writes.append((epoch, stage))
    def wait_sync(pending):
        nonlocal epoch, landed_visible
        landed_visible = max(landed_visible, committed - pending - 1)
        epoch += 1
    def read(stage, want_tile, real):
        reads.append((epoch, stage))
        if not real: return
        t, g, e = stage_tile[stage]
        assert t == want_tile, (stage, t, want_tile)
        assert g <= landed_visible, ("not landed", stage, t, g, landed_visible)
    frag = {}
    for s in range(S - 1):
        if s < k_tiles: load_stage(s, s)
        committed += 1
    wait_sync(S - 2)
    read(0, 0, k_tiles > 0); frag['a'] = frag['b0'] = (0, 0)
    rs, ws = 0, S - 1
    cur_tile = 0
    for kt in range(k_tiles):
        for kk in range(KK):
            if kk == KK - 1:
                wait_sync(S - 2); rs = (rs + 1) % S
            nt, nk = (kt + 1, 0) if kk == KK - 1 else (kt, kk + 1)
            read(rs, nt, nt < k_tiles); frag['b%d' % ((kk + 1) % 2)] = (nt, nk)
            if kk == 0:
                if kt + S - 1 < k_tiles: load_stage(ws, kt + S - 1)
                committed += 1
                ws = (ws + 1) % S
            assert frag['a'] == (kt, kk) and frag['b%d' % (kk % 2)] == (kt, kk), (kt, kk, frag)
            read(rs, nt, nt < k_tiles); frag['a'] = (nt, nk)
    # epoch hazards: a write to stage s in epoch e must not share the epoch with a read of s
    for (e, s) in writes:
        assert (e, s) not in set(reads) or all(not (re == e and rs_ == s) for (re, rs_) in reads), ("WAR", e, s)
    return True
for S in (2, 3, 4, 5):
    for KK in (2, 4):
        for k in range(0, 20):
            try:
                run(S, KK, k)
            except AssertionError as ex:
                print("FAIL S=%d KK=%d k=%d: %s" % (S, KK, k, ex)); break
print("ok")
