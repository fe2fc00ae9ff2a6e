#!/usr/bin/env python3
"""Renders a saved bench.json into the deepgemm-bench HTML report, with no GPU and no bench binary
(the same file `deepgemm-bench --html` writes after a run, and `deepgemm-bench --render` writes):

    python3 bench/report/render.py bench.json report.html

The report is bench/report/report.html with the JSON in its data block; its own script draws the
charts. '<', '>' and '&' can only occur inside JSON strings, where \\u escapes mean the same, so
replacing them keeps the JSON intact and the script block closed.
"""
import json
import os
import sys

MARKER = "__DEEPGEMM_BENCH_JSON__"


def render(json_text: str, template: str) -> str:
    json.loads(json_text)  # refuse what the report could not read
    safe = json_text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    if template.count(MARKER) != 1:
        raise ValueError("the template must hold the data marker exactly once")
    return template.replace(MARKER, safe)


def main(argv):
    if len(argv) != 3:
        sys.exit("usage: render.py BENCH_JSON OUT_HTML")
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "report.html"), encoding="utf-8") as f:
        template = f.read()
    with open(argv[1], encoding="utf-8") as f:
        text = f.read()
    try:
        out = render(text, template)
    except ValueError as e:
        sys.exit(f"render.py: {argv[1]}: {e}")
    with open(argv[2], "w", encoding="utf-8") as f:
        f.write(out)


if __name__ == "__main__":
    main(sys.argv)
