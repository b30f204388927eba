"""A sweep through real gateway processes with a user's own keys: points with rates, percentiles and the
gateway's phase medians of traced requests; the scratch bucket is gone after; the CLI writes the points as CSV."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.gateway.conftest import Gateway
from tierpilot.observability.sweep import Sweep, check_ratios, phase_medians


def test_a_sweep_measures_each_point_and_leaves_no_bucket(gateway: Gateway) -> None:
    alice = gateway.users["alice"]
    progress: list[tuple[int, int]] = []
    sweep = Sweep(gateway.url, alice.access_key_id, alice.secret_access_key)
    points = sweep.run(["put", "get"], [1024], [1, 4], 0.5, progress=lambda i, n, _p: progress.append((i, n)))
    assert progress == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert [(p.workload, p.concurrency) for p in points] == [("put", 1), ("put", 4), ("get", 1), ("get", 4)]
    for p in points:
        assert p.ops_per_s > 0 and p.failures == 0 and p.object_size == 1024
        assert 0 < p.ttfb_p50_ms <= p.p50_ms <= p.p90_ms <= p.p99_ms
        assert abs(p.mb_per_s - p.ops_per_s * 1024 / 1e6) < 0.01
    assert {"auth", "transfer", "commit"} <= set(points[0].phases_ms)
    assert {"auth", "tier_open", "transfer"} <= set(points[2].phases_ms)
    names = [b["Name"] for b in gateway.client("alice").list_buckets()["Buckets"]]
    assert sweep.bucket not in names


def test_the_cli_sweeps_with_the_keys_of_the_environment(gateway: Gateway, tmp_path: Path) -> None:
    alice = gateway.users["alice"]
    out = tmp_path / "points.csv"
    env = dict(os.environ, AWS_ACCESS_KEY_ID=alice.access_key_id, AWS_SECRET_ACCESS_KEY=alice.secret_access_key)
    done = subprocess.run([sys.executable, "-m", "tierpilot.cli", "bench", "sweep", "--endpoint", gateway.url,
                           "--workload", "mixed", "--ratios", "put=1,get=1", "--sizes", "100-2048",
                           "--concurrency", "2", "--seconds", "0.3", "--no-phases", "--output", str(out)],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 1 and rows[0]["workload"] == "mixed" and rows[0]["object_size"] == "2048"
    assert rows[0]["size_distribution"] == "log-uniform 100-2048"
    assert float(rows[0]["ops_per_s"]) > 0 and rows[0]["failures"] == "0" and rows[0]["phases_ms"] == "{}"
    bad = subprocess.run([sys.executable, "-m", "tierpilot.cli", "bench", "sweep", "--sizes", "0"], env=env,
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--sizes" in bad.stderr
    bad = subprocess.run([sys.executable, "-m", "tierpilot.cli", "bench", "sweep", "--workload", "mixed",
                          "--ratios", "copy=1"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--ratios" in bad.stderr


def test_head_list_and_delete_points_with_phase_medians_of_traced_requests(gateway: Gateway) -> None:
    alice = gateway.users["alice"]
    sweep = Sweep(gateway.url, alice.access_key_id, alice.secret_access_key)
    points = sweep.run(["head", "list", "delete"], [512], [2], 0.4)
    assert [p.workload for p in points] == ["head", "list", "delete"]
    for p in points:
        assert p.ops_per_s > 0 and p.failures == 0 and p.mb_per_s == 0
        assert p.traced > 0 and p.phases_ms["auth"] > 0
    names = [b["Name"] for b in gateway.client("alice").list_buckets()["Buckets"]]
    assert sweep.bucket not in names


def test_phase_medians_count_a_phase_a_request_skipped_as_zero() -> None:
    traces = [[["auth", 0, 1.0], ["transfer", 1.0, 4.0]],
              [["auth", 0, 3.0], ["transfer", 3.0, 2.0], ["limiter_wait", 5.0, 9.0]],
              [["auth", 0, 2.0], ["transfer", 2.0, 6.0]]]
    assert phase_medians(traces) == {"auth": 2.0, "limiter_wait": 0.0, "transfer": 4.0}
    assert phase_medians([]) == {}
    assert check_ratios({"put": 1, "get": 3}) == {"put": 0.25, "get": 0.75}
    for bad in ({"copy": 1.0}, {"put": -1.0}, {"put": 0.0}, {"put": float("nan")}):
        with pytest.raises(ValueError):
            check_ratios(bad)
