"""Cost planner speed: a 200-point access-frequency sweep over 20 tiers must answer well under 50 ms.

Run: .venv/bin/python bench/pricing.py  (prints median and worst of repeated runs, in milliseconds)
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from bench.figures import Run, record
from tierpilot.pricing.catalogs import shipped_catalogs
from tierpilot.pricing.engine import TierModel, evaluate, log_frequencies, resolve_tiers, scenario_usage, sweep
from tierpilot.pricing.report import build_report
from tierpilot.pricing.schemas import Scenario

BUDGET_MS = 50.0
TIERS = [
    "STANDARD", "INTELLIGENT_TIERING", "STANDARD_IA", "ONEZONE_IA", "GLACIER_IR", "GLACIER", "GLACIER@bulk",
    "DEEP_ARCHIVE", "DEEP_ARCHIVE@bulk",
    "gcp-us-central1-2026:STANDARD", "gcp-us-central1-2026:NEARLINE", "gcp-us-central1-2026:COLDLINE",
    "gcp-us-central1-2026:ARCHIVE",
    "azure-eastus-2026:HOT", "azure-eastus-2026:COOL", "azure-eastus-2026:COLD", "azure-eastus-2026:ARCHIVE",
    "oracle-us-ashburn-1-2026:STANDARD", "oracle-us-ashburn-1-2026:INFREQUENT_ACCESS",
    "oracle-us-ashburn-1-2026:ARCHIVE",
]
SCENARIO = Scenario.model_validate({
    "catalog": "aws-us-east-1-2026", "tiers": TIERS, "volume_gib": 1024 * 1024, "mean_object_size_mib": 256,
    "reads_per_month": 0.5, "egress": "internet", "restored_copy_days": 7,
    "early_deletion": {"share_per_month": 0.01, "age_days": 20},
    "frequency_range": {"min": 0.001, "max": 100, "points": 200},
})


def sweep_only() -> None:
    """What a slider move costs: price 20 tiers and evaluate each at 200 frequencies."""
    usage = scenario_usage(SCENARIO)
    curves = [TierModel(p, usage).curve() for p in resolve_tiers(SCENARIO, CATALOGS)]
    r = SCENARIO.frequency_range
    sweep(curves, log_frequencies(r.min, r.max, r.points))


def timed(fn: Callable[[], Any], runs: int) -> tuple[float, float]:
    fn()  # warm up (first-call caches)
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples), max(samples)


CATALOGS = shipped_catalogs()


def main() -> int:
    assert len(TIERS) == 20
    run = Run()
    rows = [
        ("200-point sweep over 20 tiers (price tiers + sweep)", *timed(sweep_only, 50)),
        ("full evaluation (breakdowns, 190 break-even pairs, bands, sweep)",
         *timed(lambda: evaluate(SCENARIO, CATALOGS), 20)),
        ("report JSON as the API returns it", *timed(lambda: build_report(SCENARIO, CATALOGS), 20)),
    ]
    print(f"pricing engine, {len(TIERS)} tiers, {SCENARIO.frequency_range.points} frequencies, 1 PiB")
    for name, median, worst in rows:
        print(f"  {name}: median {median:.1f} ms, worst {worst:.1f} ms")
    sweep_median = rows[0][1]
    ok = sweep_median < BUDGET_MS
    print(f"sweep budget {BUDGET_MS:.0f} ms: {'met' if ok else 'MISSED'}")
    record([run.row("pricing.sweep", "cost planner: 200-point sweep over 20 tiers, median", sweep_median, "ms",
                    "budget", BUDGET_MS)])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
