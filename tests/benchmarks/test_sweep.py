"""A sweep through real gateway processes with a user's own keys: points with rates, percentiles and the
gateway's phase medians of traced requests; the scratch bucket is gone after; the CLI writes the points as CSV;
under a real reservation the gateways meter the sweep's bytes against it."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest

from tests.conftest import ROOT
from tests.gateway.conftest import Gateway, start_gateway, stop
from tests.traces.conftest import Booked
from tests.waiting import wait_until
from tierpilot.benchmarks.sweep import Sweep, check_ratios, phase_medians, sends
from tierpilot.kit.db import transaction
from tierpilot.reservations.models import ReservationSample


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
    done = subprocess.run([sys.executable, "-m", "tierpilot.app.cli", "bench", "sweep", "--endpoint", gateway.url,
                           "--workload", "mixed", "--ratios", "put=1,get=1", "--sizes", "100-2048",
                           "--concurrency", "2", "--seconds", "0.3", "--no-phases", "--output", str(out)],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 1 and rows[0]["workload"] == "mixed" and rows[0]["object_size"] == "2048"
    assert rows[0]["size_distribution"] == "log-uniform 100-2048"
    assert float(rows[0]["ops_per_s"]) > 0 and rows[0]["failures"] == "0" and rows[0]["phases_ms"] == "{}"
    bad = subprocess.run([sys.executable, "-m", "tierpilot.app.cli", "bench", "sweep", "--sizes", "0"], env=env,
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--sizes" in bad.stderr
    bad = subprocess.run([sys.executable, "-m", "tierpilot.app.cli", "bench", "sweep", "--workload", "mixed",
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
    assert sends("put", None, "write") and sends("mixed", None, "read") and sends("mixed", {"put": 1}, "write")
    assert not sends("get", None, "write") and not sends("head", None, "read")
    assert not sends("mixed", {"put": 1, "head": 1}, "read")
    for bad in ({"copy": 1.0}, {"put": -1.0}, {"put": 0.0}, {"put": float("nan")}):
        with pytest.raises(ValueError):
            check_ratios(bad)


GET_BYTES = 'tierpilot_gateway_sent_bytes_total{operation="GET object"}'


def _counter(url: str, series: str) -> float:
    """One series of a gateway's /metrics (summed over the gateway processes of this machine)."""
    text = httpx.get(f"{url}/_tierpilot/metrics", timeout=10).text
    return sum(float(line[len(series) + 1:]) for line in text.splitlines() if line.startswith(series + " "))


def test_a_sweep_under_a_read_reservation_is_metered_against_it(gateway: Gateway, read_reservation: Booked) -> None:
    """A mixed put/get sweep with alice's read reservation: every GET byte the gateways sent is counted against
    the reservation; its PUTs (and seeding) go best effort instead of being refused for the wrong direction."""
    alice, rid = gateway.users["alice"], read_reservation.reservation_id
    sent = _counter(gateway.url, GET_BYTES)
    sweep = Sweep(gateway.url, alice.access_key_id, alice.secret_access_key, reservation=rid, direction="read",
                  ratios={"put": 1, "get": 3}, bucket=read_reservation.bucket, read_phases=False)
    [point] = sweep.run(["mixed"], [64 << 10], [2], 0.5)
    assert point.failures == 0 and point.retries == 0 and point.mb_per_s > 0
    got = _counter(gateway.url, GET_BYTES) - sent
    assert got > 0 and got % (64 << 10) == 0

    def metered() -> int:
        with transaction() as s:
            return sum(x.nbytes for x in s.query(ReservationSample).filter_by(reservation_id=rid))

    wait_until(lambda: metered() >= got, timeout=15)  # each gateway process writes its counters every second
    assert metered() == got
    listed = gateway.client("alice").list_objects_v2(Bucket=read_reservation.bucket)
    assert listed.get("KeyCount") == 0  # the scratch prefix was emptied


def test_slowdowns_of_a_pushing_back_gateway_are_retried_and_counted(gateway: Gateway, db_url: str,
                                                                     data_dir: Path) -> None:
    """A gateway with one slot and no wait answers 503 SlowDown to the sweep's other requests: each one is a
    retry, or a failure once a request's 3 retries are spent, as the research counted client-side."""
    log = data_dir / f"obs-one-slot-{uuid.uuid4().hex[:6]}.log"
    url, proc = start_gateway(db_url, log, {"TIERPILOT_GATEWAY_MAX_INFLIGHT": "1",
                                            "TIERPILOT_GATEWAY_QUEUE_WAIT_S": "0"})
    try:
        alice = gateway.users["alice"]
        refused = _counter(url, "tierpilot_gateway_slowdowns_total")
        [point] = Sweep(url, alice.access_key_id, alice.secret_access_key, read_phases=False).run(
            ["put"], [16 << 10], [8], 0.5)
        refused = _counter(url, "tierpilot_gateway_slowdowns_total") - refused
        assert point.ops_per_s > 0 and point.retries > 0
        assert refused == point.retries + point.failures
    finally:
        stop(proc)
