#!/usr/bin/env python3
"""One row per ncu raw-page CSV (`ncu --import R --page raw --csv`): duration, tensor-pipe activity
and where the operand bytes came from (L2 sectors and requests read by the SMs, hits and misses,
DRAM, the L2 -> SM crossbar). A counter the report lacks prints as '-'. Used by l2_traffic.sh.

    python3 bench/probes/l2_table.py A-raw.csv [B-raw.csv ...]
"""
import csv
import os
import sys

COLUMNS = [  # (header, metric, scale)
    ("us", "gpu__time_duration.sum", 1e-3),  # normalised to ns below, whatever unit the report uses
    ("tensor%", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed", 1.0),
    ("L2 sect rd tex (M)", "lts__t_sectors_srcunit_tex_op_read.sum", 1e-6),
    ("L2 req rd tex (M)", "lts__t_requests_srcunit_tex_op_read.sum", 1e-6),
    ("hit (M)", "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum", 1e-6),
    ("miss (M)", "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum", 1e-6),
    ("L2 sect rd all (M)", "lts__t_sectors_op_read.sum", 1e-6),
    ("xbar->SM (MB)", "l1tex__m_xbar2l1tex_read_bytes.sum", 1e-6),
    ("DRAM rd (MB)", "dram__bytes_read.sum", 1e-6),
    ("warp inst (M)", "smsp__inst_executed.sum", 1e-6),
]


def number(text, unit):
    value = float(text.replace(",", ""))
    # Normalise the units ncu may choose per report to ns, bytes and counts.
    scale = {"us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9,
             "KB": 1e3, "MB": 1e6, "GB": 1e9}.get(unit, 1.0)
    return value * scale


def row(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if len(rows) < 3:
        return None
    header, units, values = rows[0], rows[1], rows[2]
    cells = dict(zip(header, zip(values, units)))
    out = []
    for _, metric, scale in COLUMNS:
        if metric in cells and cells[metric][0] not in ("", "n/a"):
            out.append(f"{number(*cells[metric]) * scale:.2f}")
        else:
            out.append("-")
    return out


def main(paths):
    width = max([len(os.path.basename(p)) for p in paths] + [5])
    print(f"{'entry':{width}s} " + " ".join(f"{h:>18s}" for h, _, _ in COLUMNS))
    for p in paths:
        r = row(p)
        name = os.path.basename(p).removesuffix("-raw.csv")
        print(f"{name:{width}s} " + (" ".join(f"{c:>18s}" for c in r) if r else "(no data)"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]) if len(sys.argv) > 1 else (print(__doc__), 2)[1])
