"""A/B of the gateway's single-stream throughput: this checkout against another revision, in one run.

Runs `bench/gateway_throughput.py` (each side's own copy, on its own code) alternately A, B, A, B, …
and reports, per side, the median of the gateway's single-stream PUT and GET (MB/s) and of their
ratios to the bare ASGI app measured in the same run, so machine load hits both sides alike.

Run: .venv/bin/python bench/ab_gateway.py --base REV [--runs 3] [--size-mib 512]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.figures import NO_RECORD

ROOT = Path(__file__).resolve().parents[1]
ROWS = ("PUT, 1 stream", "GET, 1 stream")
_NUMBER = r"([\d,.]+)"


def run_once(checkout: Path, size_mib: int) -> dict[str, tuple[float, float]]:
    """{row: (gateway MB/s, gateway / bare ASGI)} of one run of a checkout's benchmark."""
    # each run's figures are one side of the comparison, not the current figures: printed, not recorded
    env = dict(os.environ, PYTHONPATH=f"{checkout / 'backend'}{os.pathsep}{checkout}", **{NO_RECORD: "1"})
    out = subprocess.run([sys.executable, "bench/gateway_throughput.py", "--size-mib", str(size_mib),
                          "--skip-sweep"], cwd=checkout, env=env, capture_output=True, text=True, check=True).stdout
    figures: dict[str, tuple[float, float]] = {}
    for row in ROWS:
        m = re.search(rf"^\| {re.escape(row)} \| {_NUMBER} \| {_NUMBER} \| {_NUMBER} \| {_NUMBER} \| {_NUMBER} \|",
                      out, re.MULTILINE)
        if m is None:
            raise RuntimeError(f"no row {row!r} in the output of {checkout}:\n{out}")
        gateway, ratio = float(m.group(3).replace(",", "")), float(m.group(5))
        figures[row] = (gateway, ratio)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="revision A (B is this checkout's working tree)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--size-mib", type=int, default=512)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tierpilot-ab-") as tmp:
        base = Path(tmp) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(base), args.base], cwd=ROOT, check=True)
        try:
            sides = {f"A {args.base}": base, "B this checkout": ROOT}
            results: dict[str, list[dict[str, tuple[float, float]]]] = {name: [] for name in sides}
            for i in range(args.runs):
                for name, checkout in sides.items():
                    results[name].append(run_once(checkout, args.size_mib))
                    print(f"run {i + 1}/{args.runs} {name}: {results[name][-1]}", flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT, check=False)
    load = os.getloadavg()[0]
    print(f"\n{args.size_mib} MiB objects, median of {args.runs} alternating runs; load average {load:.1f} at the end")
    print("| side | PUT 1 stream MB/s | PUT / bare ASGI | GET 1 stream MB/s | GET / bare ASGI |")
    print("|---|---:|---:|---:|---:|")
    for name, runs in results.items():
        cells = []
        for row in ROWS:
            cells.append(f"{statistics.median(r[row][0] for r in runs):,.0f}")
            cells.append(f"{statistics.median(r[row][1] for r in runs):.2f}")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
