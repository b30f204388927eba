"""GET /api/tiers/health: admins see whether each tier answers; answers are reused briefly; a silent tier times out."""

from __future__ import annotations

import socket
import threading
import uuid
from collections.abc import Iterator

import boto3
import pytest
from fastapi.testclient import TestClient

from tierpilot.kit.db import transaction
from tierpilot.tiers import service
from tierpilot.tiers.schemas import TierUpdate


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def board(monkeypatch: pytest.MonkeyPatch, clock: Clock) -> service.HealthBoard:
    """A fresh board per test (the process-wide one would carry answers between tests) on a clock tests move."""
    fresh = service.HealthBoard(max_age_s=5.0, timeout_s=5.0, clock=clock)
    monkeypatch.setattr(service, "HEALTH_BOARD", fresh)
    return fresh


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections (the kernel's backlog) and never answers."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        yield int(silent.getsockname()[1])


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens once the socket is closed


def _s3_tier(client: TestClient, name: str, endpoint: str, bucket: str) -> dict:
    r = client.post("/api/tiers", json={"name": name, "driver": "s3", "config": {
        "endpoint_url": endpoint, "bucket": bucket, "access_key_id": "AKIDTEST", "secret_access_key": "secret"}})
    assert r.status_code == 201, r.text
    return r.json()


def test_each_tier_reports_whether_it_answers_and_why_not_to_admins_only(
    client: TestClient, member_client: TestClient, board: service.HealthBoard
) -> None:
    hot = client.post("/api/tiers", json={"name": "hot", "driver": "posix", "config": {"path": "hot"}}).json()
    cold = client.post("/api/tiers", json={"name": "cold", "driver": "posix", "config": {"path": "cold"},
                                           "offline": True}).json()
    port = _closed_port()
    dead = _s3_tier(client, "dead", f"http://127.0.0.1:{port}", "cold-data")

    r = client.get("/api/tiers/health")
    assert r.status_code == 200, r.text
    by_name = {h["name"]: h for h in r.json()}
    assert {n: (h["tier_id"], h["kind"], h["ok"]) for n, h in by_name.items() if n in ("hot", "cold", "dead")} == {
        "hot": (hot["id"], "posix", True), "cold": (cold["id"], "offline", True), "dead": (dead["id"], "s3", False)}
    assert by_name["hot"]["detail"] == f"{hot['location']} answers"
    assert f"127.0.0.1:{port}" in by_name["dead"]["detail"] and "connect" in by_name["dead"]["detail"].lower()
    assert all(h["latency_ms"] >= 0 for h in by_name.values())
    assert "secret" not in r.text  # a failure's reason never carries the tier's credentials

    denied = member_client.get("/api/tiers/health")
    assert denied.status_code == 403 and "dead" not in denied.text
    member_client.cookies.clear()
    assert member_client.get("/api/tiers/health").status_code == 401


def test_a_tier_that_never_answers_fails_at_the_deadline_and_is_not_probed_again_while_its_probe_waits(
    client: TestClient, board: service.HealthBoard, clock: Clock, silent_port: int
) -> None:
    board.timeout_s = 0.5
    name = f"silent-{uuid.uuid4().hex[:6]}"
    _s3_tier(client, name, f"http://127.0.0.1:{silent_port}", "cold-data")

    def silent() -> dict:
        return next(h for h in client.get("/api/tiers/health").json() if h["name"] == name)

    first = silent()
    assert (first["ok"], first["detail"], first["latency_ms"]) == (False, "no answer within 0.5 s", 500.0)
    clock.now += 5.1  # the answer is old: the board asks again, but the first probe still hangs in its socket
    again = silent()
    assert again["ok"] is False and again["detail"].startswith("no answer: a probe started")
    assert again["checked_at"] > first["checked_at"]
    assert [t.name for t in threading.enumerate()].count(f"tier-health-{name}") == 1


def test_answers_are_reused_for_a_few_seconds_and_an_edited_tier_is_probed_again(
    client: TestClient, board: service.HealthBoard, clock: Clock, moto_url: str
) -> None:
    bucket = f"tier-{uuid.uuid4().hex[:12]}"
    tier = _s3_tier(client, "cloud", moto_url, bucket)

    def cloud() -> dict:
        return next(h for h in client.get("/api/tiers/health").json() if h["name"] == "cloud")

    first = cloud()
    assert first["ok"] is False  # the bucket does not exist yet
    boto3.client("s3", endpoint_url=moto_url, aws_access_key_id="AKIDTEST", aws_secret_access_key="secret",
                 region_name="us-east-1").create_bucket(Bucket=bucket)
    assert cloud() == first  # within max_age: the same answer, no new probe
    clock.now += 5.1
    again = cloud()
    assert again["ok"] is True and again["checked_at"] > first["checked_at"]

    with transaction(write=True) as s:  # an edited tier is probed at once, whatever the age of its last answer
        service.update(s, tier["id"], TierUpdate(config={"bucket": f"gone-{uuid.uuid4().hex[:8]}"}))
    assert cloud()["ok"] is False
