"""Debian's real ``prometheus`` server scrapes a real API (with the worker's series) and two gateway processes,
and the shipped Grafana dashboard plots only series that exist."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import ROOT
from tests.gateway.conftest import Gateway
from tests.servers import free_port, wait_port
from tests.traces.conftest import Api
from tests.waiting import wait_until

PROMETHEUS = "/usr/bin/prometheus"
DASHBOARD = ROOT / "deploy" / "grafana-dashboard.json"
SCRAPE_CONFIG = ROOT / "deploy" / "prometheus.yml"

pytestmark = pytest.mark.skipif(not Path(PROMETHEUS).exists(), reason="Debian's prometheus package is not installed")


def _traffic(gateway: Gateway) -> None:
    """Requests of the kinds the dashboard plots: writes, reads, an error (traced)."""
    s3 = gateway.client("alice")
    bucket = f"p-{uuid.uuid4().hex[:10]}"
    s3.create_bucket(Bucket=bucket)
    for i in range(5):
        s3.put_object(Bucket=bucket, Key=f"k{i}", Body=b"z" * 4096)
        s3.get_object(Bucket=bucket, Key=f"k{i}")["Body"].read()
    httpx.get(f"{gateway.url}/{bucket}/k0", headers={"X-Tierpilot-Trace": "1"})  # unsigned: 403, traced


def _book_a_reservation(api: Api, gateway: Gateway) -> None:
    """An active reservation of alice's (booked through the API as the product does)."""
    from datetime import UTC, datetime, timedelta

    root = httpx.Client(base_url=api.url, timeout=10)
    assert root.post("/api/auth/login", json={"username": "root", "password": "root-password-1"}).status_code == 200
    csrf = {"X-CSRF-Token": root.cookies["tierpilot_csrf"]}
    r = root.put("/api/capacity", json={"read_mbps": 300, "write_mbps": 150, "unbookable_share": 0.1}, headers=csrf)
    assert r.status_code == 200, r.text
    alice = httpx.Client(base_url=api.url, timeout=10)
    assert alice.post("/api/auth/login", json={"username": "alice", "password": "alice-password-1"}).status_code == 200
    bucket = f"r-{uuid.uuid4().hex[:10]}"
    gateway.client("alice").create_bucket(Bucket=bucket)
    now = datetime.now(UTC)
    r = alice.post("/api/reservations", headers={"X-CSRF-Token": alice.cookies["tierpilot_csrf"]},
                   json={"bucket": bucket, "direction": "read", "rate_mbps": 5, "start": now.isoformat(),
                         "end": (now + timedelta(minutes=10)).isoformat()})
    assert r.status_code in (200, 201), r.text


def _run_a_task(redis_url: str, monkeypatch: pytest.MonkeyPatch, worker_log: Path) -> None:
    from celery.exceptions import TimeoutError as CeleryTimeout

    monkeypatch.setenv("TIERPILOT_REDIS_URL", redis_url)
    from tierpilot.kit.jobs import make_celery
    from tierpilot.kit.settings import get_settings

    get_settings.cache_clear()
    try:
        try:
            make_celery().send_task("auth.purge_expired_tokens").get(timeout=60)
        except CeleryTimeout:
            pytest.fail(f"the worker ran no task:\n{worker_log.read_text()[-3000:]}")
    finally:
        get_settings.cache_clear()


@pytest.fixture
def prometheus(gateway: Gateway, api: Api) -> Iterator[str]:
    """A prometheus server on 127.0.0.1 scraping the test API and gateway every second (deploy's jobs)."""
    import yaml

    config = yaml.safe_load(SCRAPE_CONFIG.read_text())
    targets = {"tierpilot-api": api.url, "tierpilot-gateway": gateway.url}
    config["global"]["scrape_interval"] = "1s"
    for job in config["scrape_configs"]:
        job["static_configs"] = [{"targets": [targets[job["job_name"]].removeprefix("http://")]}]
    workdir = Path(tempfile.mkdtemp(prefix="tierpilot-prometheus-"))
    (workdir / "prometheus.yml").write_text(yaml.safe_dump(config))
    port = free_port()
    log = open(workdir / "prometheus.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen([PROMETHEUS, f"--config.file={workdir / 'prometheus.yml'}",
                             f"--storage.tsdb.path={workdir / 'data'}", f"--web.listen-address=127.0.0.1:{port}"],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_port(port, timeout=30)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        shutil.rmtree(workdir, ignore_errors=True)


def _query(prometheus: str, expr: str) -> list[dict[str, Any]]:
    r = httpx.get(f"{prometheus}/api/v1/query", params={"query": expr}, timeout=10)
    assert r.status_code == 200, r.text
    return list(r.json()["data"]["result"])


def _until(prometheus: str, expr: str) -> list[dict[str, Any]]:
    """The query's result once it has one (Prometheus scrapes on its own schedule)."""
    return wait_until(lambda: _query(prometheus, expr), step=0.5, message=expr)


def _plotted_metrics(dashboard: dict[str, Any]) -> set[str]:
    names: set[str] = set()
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            names |= set(re.findall(r"\b(tierpilot_[a-z_]+)", target["expr"]))
    return names


def _base(name: str) -> str:
    return re.sub(r"_(bucket|sum|count)$", "", name)


def test_prometheus_scrapes_the_api_worker_and_gateway_series_the_dashboard_plots(
        gateway: Gateway, api: Api, prometheus: str, redis_url: str,
        celery_worker_process: subprocess.Popen[bytes], monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> None:
    _traffic(gateway)
    _book_a_reservation(api, gateway)
    _run_a_task(redis_url, monkeypatch, data_dir / "worker.log")

    puts = _until(prometheus, 'tierpilot_gateway_requests_total{job="tierpilot-gateway",operation="PUT object"}')
    assert puts and float(puts[0]["value"][1]) >= 5
    up = _until(prometheus, "count(up == 1) == 2")  # both jobs scraped, and successfully
    assert up, _query(prometheus, "up")
    tasks = _until(prometheus, 'tierpilot_celery_tasks_total{task="auth.purge_expired_tokens",outcome="success"}')
    assert tasks and tasks[0]["metric"]["job"] == "tierpilot-api"
    phases = _until(prometheus, 'sum by (phase) (tierpilot_gateway_phase_duration_seconds_count'
                                '{operation="GET object"})')
    assert {r["metric"]["phase"] for r in phases} >= {"auth", "lookup", "admission", "tier_open", "transfer"}

    # every series the dashboard plots is in what Prometheus holds of the two jobs
    dashboard = json.loads(DASHBOARD.read_text())
    plotted = _plotted_metrics(dashboard)
    assert len(plotted) >= 12
    known: set[str] = set()

    def all_scraped() -> bool:
        known.clear()
        known.update(httpx.get(f"{prometheus}/api/v1/label/__name__/values", timeout=10).json()["data"])
        return not {_base(n) for n in plotted} - {_base(n) for n in known}

    wait_until(all_scraped, step=0.5, message=lambda: f"not scraped: {sorted(set(plotted) - known)}")
    assert {n for n in plotted if n not in known} == set()
