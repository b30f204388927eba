"""Benchmark runs through the API: limits and one run at a time, the worker's side of a run against real
gateway processes (the task function called directly, as Celery's testing guide says for logic), owner-only
reads, CSV/JSON export, cancel and delete; the new fields' checks; two simultaneous POSTs of one user."""

from __future__ import annotations

import csv
import io
import threading
from collections.abc import Iterator
from urllib.parse import urlparse

import pytest
from fastapi.testclient import TestClient

from tests.conftest import login
from tests.gateway.conftest import Gateway
from tests.traces.conftest import Booked
from tierpilot.benchmarks import runs


@pytest.fixture
def clients(gateway: Gateway) -> Iterator[tuple[TestClient, TestClient]]:
    """alice and bob signed in to the API (the gateway's users)."""
    from tierpilot.app.api import create_app

    with TestClient(create_app(), base_url="http://127.0.0.1") as a, \
            TestClient(create_app(), base_url="http://127.0.0.1") as b:
        yield login(a, "alice", "alice-password-1"), login(b, "bob", "bob-password-1")


def test_a_run_is_checked_queued_once_run_by_the_worker_and_exported(
        gateway: Gateway, clients: tuple[TestClient, TestClient], monkeypatch: pytest.MonkeyPatch) -> None:
    alice, bob = clients
    body = {"workload": "put", "object_sizes": [1024], "concurrency": [1, 2], "seconds_per_point": 0.3}
    for bad, field in (({"workload": "copy"}, "workload"), ({"concurrency": [5000]}, "concurrency"),
                       ({"seconds_per_point": 10_000}, "seconds_per_point"), ({"object_sizes": [0]}, "object_sizes")):
        r = alice.post("/api/benchmarks/runs", json={**body, **bad})
        assert 400 <= r.status_code < 500 and field in r.text, r.text
    r = alice.post("/api/benchmarks/runs", json=body)
    assert r.status_code == 202, r.text
    run_id = r.json()["id"]
    assert alice.post("/api/benchmarks/runs", json=body).status_code == 409  # one at a time
    assert bob.get(f"/api/benchmarks/runs/{run_id}").status_code == 404
    assert alice.delete(f"/api/benchmarks/runs/{run_id}").status_code == 409  # cancel first

    from tierpilot.kit.settings import get_settings

    monkeypatch.setattr(get_settings(), "gateway_port", urlparse(gateway.url).port)
    assert runs.execute(run_id) == "done"
    run = alice.get(f"/api/benchmarks/runs/{run_id}").json()
    assert run["state"] == "done" and run["progress"] == 1.0
    assert [(p["workload"], p["concurrency"]) for p in run["points"]] == [("put", 1), ("put", 2)]
    assert all(p["ops_per_s"] > 0 and p["failures"] == 0 and "commit" in p["phases_ms"]
               for p in run["points"]), run["points"]
    rows = list(csv.DictReader(io.StringIO(alice.get(f"/api/benchmarks/runs/{run_id}/export").text)))
    assert [r["concurrency"] for r in rows] == ["1", "2"]
    assert alice.get(f"/api/benchmarks/runs/{run_id}/export", params={"format": "json"}).json()["id"] == run_id
    assert [r["id"] for r in alice.get("/api/benchmarks/runs").json()["items"]][:1] == [run_id]
    assert bob.get("/api/benchmarks/runs").json()["items"] == []
    assert alice.delete(f"/api/benchmarks/runs/{run_id}").status_code == 204
    assert alice.get(f"/api/benchmarks/runs/{run_id}").status_code == 404


def test_a_queued_run_cancelled_never_runs(gateway: Gateway, clients: tuple[TestClient, TestClient]) -> None:
    alice, _ = clients
    r = alice.post("/api/benchmarks/runs", json={"workload": "get", "object_sizes": [10], "concurrency": [1],
                                                 "seconds_per_point": 0.2})
    run_id = r.json()["id"]
    assert alice.post(f"/api/benchmarks/runs/{run_id}/cancel").json()["state"] == "cancelled"
    assert runs.execute(run_id) == "cancelled"
    assert alice.get(f"/api/benchmarks/runs/{run_id}").json()["points"] == []
    assert alice.delete(f"/api/benchmarks/runs/{run_id}").status_code == 204


def test_new_fields_are_checked_with_the_field_named(clients: tuple[TestClient, TestClient]) -> None:
    alice, _ = clients
    body = {"workload": "mixed", "object_sizes": [1024], "concurrency": [1], "seconds_per_point": 0.2}
    for bad, field in (({"ratios": {"copy": 1.0}}, "ratios"), ({"ratios": {"put": -1.0}}, "ratios"),
                       ({"ratios": {"put": 0.0}}, "ratios"),
                       ({"workload": "put", "ratios": {"put": 1.0}}, "ratios"),
                       ({"object_sizes": None, "size_distribution": {"min": 10, "max": 5}}, "size_distribution"),
                       ({"size_distribution": {"min": 1, "max": 5}}, "size_distribution"),
                       ({"object_sizes": None, "size_distribution": {"min": 1, "max": 1 << 40}},
                        "size_distribution"),
                       ({"reservation_id": "not a reservation"}, "reservation_id"),
                       ({"reservation_id": "rsv_nobodyhasthisone"}, "reservation_id")):
        r = alice.post("/api/benchmarks/runs", json={**body, **bad})
        assert r.status_code == 422 and field in r.text, (bad, r.text)
    assert alice.get("/api/benchmarks/runs").json()["items"] == []


def test_a_run_under_a_reservation_must_send_requests_of_its_direction(
        clients: tuple[TestClient, TestClient], read_reservation: Booked) -> None:
    alice, _ = clients
    body = {"object_sizes": [1024], "concurrency": [1], "seconds_per_point": 0.2,
            "reservation_id": read_reservation.reservation_id}
    for workload, extra in (("put", {}), ("head", {}), ("mixed", {"ratios": {"put": 1, "head": 1}})):
        r = alice.post("/api/benchmarks/runs", json={**body, "workload": workload, **extra})
        assert r.status_code == 422 and "reservation_id" in r.text and "GETs" in r.text, (workload, r.text)
    r = alice.post("/api/benchmarks/runs", json={**body, "workload": "mixed", "ratios": {"put": 1, "get": 1}})
    assert r.status_code == 202, r.text
    run = alice.get(f"/api/benchmarks/runs/{r.json()['id']}").json()
    assert run["params"]["reservation_direction"] == "read"
    assert run["params"]["reservation_bucket"] == read_reservation.bucket
    assert alice.post(f"/api/benchmarks/runs/{run['id']}/cancel").json()["state"] == "cancelled"
    assert alice.delete(f"/api/benchmarks/runs/{run['id']}").status_code == 204


def test_two_simultaneous_posts_of_one_user_queue_one_run(gateway: Gateway) -> None:
    from tierpilot.app.api import create_app

    body = {"workload": "put", "object_sizes": [10], "concurrency": [1], "seconds_per_point": 0.2}
    barrier = threading.Barrier(2)
    statuses: list[int] = []
    with TestClient(create_app(), base_url="http://127.0.0.1") as a, \
            TestClient(create_app(), base_url="http://127.0.0.1") as b:
        first, second = login(a, "alice", "alice-password-1"), login(b, "alice", "alice-password-1")

        def post(client: TestClient) -> None:
            barrier.wait()
            statuses.append(client.post("/api/benchmarks/runs", json=body).status_code)

        threads = [threading.Thread(target=post, args=(c,)) for c in (first, second)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(statuses) == [202, 409]
        items = first.get("/api/benchmarks/runs").json()["items"]
        assert [r["state"] for r in items] == ["queued"]
        assert first.post(f"/api/benchmarks/runs/{items[0]['id']}/cancel").json()["state"] == "cancelled"
        assert first.delete(f"/api/benchmarks/runs/{items[0]['id']}").status_code == 204


def test_a_mixed_run_over_a_size_range_is_run_by_the_worker(
        gateway: Gateway, clients: tuple[TestClient, TestClient], monkeypatch: pytest.MonkeyPatch) -> None:
    alice, _ = clients
    r = alice.post("/api/benchmarks/runs", json={
        "workload": "mixed", "ratios": {"put": 1, "get": 2, "head": 1, "delete": 1},
        "size_distribution": {"min": 100, "max": 4000}, "concurrency": [2], "seconds_per_point": 0.5})
    assert r.status_code == 202, r.text
    run_id = r.json()["id"]
    from tierpilot.kit.settings import get_settings

    monkeypatch.setattr(get_settings(), "gateway_port", urlparse(gateway.url).port)
    assert runs.execute(run_id) == "done"
    run = alice.get(f"/api/benchmarks/runs/{run_id}").json()
    assert run["params"]["size_distribution"] == {"min": 100, "max": 4000}
    [point] = run["points"]
    assert point["workload"] == "mixed" and point["object_size"] == 4000
    assert point["size_distribution"] == "log-uniform 100-4000"
    assert point["ops_per_s"] > 0 and point["failures"] == 0 and point["mb_per_s"] > 0
    assert point["traced"] > 0 and point["phases_ms"]["auth"] > 0
    assert alice.delete(f"/api/benchmarks/runs/{run_id}").status_code == 204
