"""Does a benchmark run's sweep (``tierpilot.benchmarks.sweep``, what the New run form and
``tierpilot bench sweep`` run) measure what ``bench/gateway_throughput.py`` measures, on the same gateway?

One installation (``gateway_throughput.Installation``: scratch SQLite, one posix tier, one gateway process).
For each point (PUT and GET × 1 KiB and 1 MiB × concurrency 1, 4, 16, 64) in turn:
  (ref)   gateway_throughput's small-object sweep method: SigV4-presigned requests over keep-alive
          ``http.client`` connections from 4 client processes (its ``_sweep_worker``, given the 1 MiB size and the
          ``sized/`` objects at 1 MiB);
  (sweep) ``Sweep.run`` for that one point: ``observability.s3client`` connections in threads of this process
          (SigV4 headers with UNSIGNED-PAYLOAD, no client checksum), a quarter of the first 800 requests traced
          and their phases read back (as a run does).
Printed: requests/s of each, the ratio sweep/ref (the median of the rounds' ratios: a round's reference and
sweep run back to back, so a load change between rounds cancels), p50 of each, the sweep's phase medians, and
the client CPU per request of each (the reference's 4 processes; this process for the sweep).

Run: .venv/bin/python bench/sweep_vs_gateway.py [--seconds 3] [--rounds 1]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gateway_throughput as gt  # noqa: E402

from bench.figures import Run, record  # noqa: E402

SIZES = (1024, 1 << 20)
CONCURRENCY = (1, 4, 16, 64)
SEEDS = 200


def reference(pool: Any, inst: gt.Installation, op: str, size: int, conc: int, seconds: float) -> dict[str, float]:
    procs = min(gt.CLIENT_PROCS, conc)
    per = [conc // procs + (1 if p < conc % procs else 0) for p in range(procs)]
    start_at = time.time() + 1.0
    # 1 KiB points use gateway_throughput's own objects (small/), other sizes the ones seeded under sized/
    sized = () if size == 1024 else (size, "sized")
    results = pool.map(gt._sweep_worker, [(inst.gateway, inst.key_id, inst.secret, op, p, per[p], start_at, seconds,
                                           *sized) for p in range(procs)])
    latency = [x for r in results for x in r["latency"]]
    ok = sum(r["ok"] for r in results)
    return {"rate": ok / seconds, "failed": sum(r["failed"] for r in results),
            "p50": statistics.median(latency) * 1000 if latency else 0.0,
            "cpu": sum(r["cpu_s"] for r in results) / max(ok, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per point and method")
    parser.add_argument("--rounds", type=int, default=1, help="repeat every point (ref then sweep); medians are "
                        "printed, sweep/ref as the median of each round's ratio")
    args = parser.parse_args()
    run = Run()
    print(f"load average at the start {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    inst = gt.Installation(1)
    from tierpilot.benchmarks.sweep import Sweep

    try:
        s3 = inst.s3("gateway")
        for size in SIZES:
            body = os.urandom(size)
            prefix = "small/seed-" if size == 1024 else "sized/seed-"
            for i in range(SEEDS):
                s3.put_object(Bucket="bench", Key=f"{prefix}{i}", Body=body)
        rows: list[tuple[str, int, int, float, float, float, float, float, float, float, dict[str, float], int]] = []
        with mp.get_context("spawn").Pool(gt.CLIENT_PROCS) as pool:
            for op in ("PUT", "GET"):
                for size in SIZES:
                    for conc in CONCURRENCY:
                        refs, sweeps, cpus, p50s, p50r, ref_cpus, ratios = [], [], [], [], [], [], []
                        phases: dict[str, float] = {}
                        traced = 0
                        for _ in range(args.rounds):
                            ref = reference(pool, inst, op, size, conc, args.seconds)
                            refs.append(ref["rate"])
                            ref_cpus.append(ref["cpu"])
                            p50r.append(ref["p50"])
                            cpu0 = resource.getrusage(resource.RUSAGE_SELF)
                            point = Sweep(inst.gateway, inst.key_id, inst.secret).run(
                                [op.lower()], [size], [conc], args.seconds)[0]
                            cpu1 = resource.getrusage(resource.RUSAGE_SELF)
                            sweeps.append(point.ops_per_s)
                            ratios.append(point.ops_per_s / ref["rate"] if ref["rate"] else 0.0)
                            p50s.append(point.p50_ms)
                            requests = max(point.ops_per_s * args.seconds, 1)
                            cpus.append((cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime) / requests)
                            phases, traced = point.phases_ms, point.traced
                        row = (op, size, conc, statistics.median(refs), statistics.median(sweeps),
                               statistics.median(ratios), statistics.median(p50r), statistics.median(p50s),
                               statistics.median(ref_cpus) * 1000, statistics.median(cpus) * 1000, phases, traced)
                        rows.append(row)
                        print(f"  {op} {size:>8d} B x{conc:<3d} ref {row[3]:8.1f} req/s  sweep {row[4]:8.1f} req/s  "
                              f"ratio {row[5]:.2f} (rounds: {' '.join(f'{r:.2f}' for r in ratios)})  p50 ref "
                              f"{row[6]:.1f} ms sweep {row[7]:.1f} ms  client CPU ref {row[8]:.2f} sweep "
                              f"{row[9]:.2f} ms/req", flush=True)
    finally:
        inst.close()
    print()
    print(f"{os.cpu_count()} CPUs; load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"{args.seconds:g} s per point and method, {args.rounds} round(s) (medians)")
    print()
    print("| op | size | concurrency | ref req/s | sweep req/s | sweep/ref | ref p50 ms | sweep p50 ms "
          "| client CPU ms/req ref / sweep | sweep phase medians ms (traced requests) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for op, size, conc, ref_rate, swp, ratio, pr, ps, rcpu, cpu, phases, traced in rows:
        ph = ", ".join(f"{k} {v:.2f}" for k, v in phases.items())
        print(f"| {op} | {'1 KiB' if size == 1024 else '1 MiB'} | {conc} | {ref_rate:,.1f} | {swp:,.1f} | "
              f"{ratio:.2f} | {pr:.1f} | {ps:.1f} | {rcpu:.2f} / {cpu:.2f} | {ph} ({traced}) |")
    ratios = [row[5] for row in rows]
    within = sum(1 for r in ratios if abs(r - 1) <= 0.15)
    median = statistics.median(ratios)
    record([run.row("sweep.vs_gateway", f"a benchmark run's sweep ÷ bench/gateway_throughput.py, median of "
                    f"{len(ratios)} points ({within} within ±15 %)", median, "×",
                    "gateway_throughput's small-object client, same gateway", ratio=median)])


if __name__ == "__main__":
    main()
