"""Request ids, phase timing, sampled traces and /metrics on real gateway processes and a real API process."""

from __future__ import annotations

import http.client
import re
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from botocore.client import BaseClient

from tests.gateway.conftest import Gateway, start_gateway, stop
from tests.traces.conftest import Api
from tests.waiting import wait_until

HOLD_S = 0.8  # how long the slot's holder keeps its body back


def _traced_client(gateway: Gateway, user: str) -> BaseClient:
    client = gateway.client(user)

    def add_header(request: object, **_kwargs: object) -> None:
        request.headers["X-Tierpilot-Trace"] = "1"  # type: ignore[attr-defined]

    client.meta.events.register("before-sign.s3", add_header)
    return client


def _login(api: Api, user: str) -> httpx.Client:
    client = httpx.Client(base_url=api.url, timeout=10)
    r = client.post("/api/auth/login", json={"username": user, "password": f"{user}-password-1"})
    assert r.status_code == 200, r.text
    return client


def _trace(client: httpx.Client, request_id: str) -> dict[str, object]:
    """The trace once the gateway flushed it (every couple of seconds)."""
    r = wait_until(lambda: (got := client.get(f"/api/requests/{request_id}")).status_code == 200 and got,
                   step=0.3, message=f"no trace of {request_id}")
    return dict(r.json())


def _sample(text: str, name: str, **labels: str) -> float:
    """The value of one series in a text exposition (0 when absent)."""
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', line.split("}")[0])) if "{" in line else {}
        if all(found.get(k) == v for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_every_answer_carries_a_request_id_and_a_traced_put_has_phases_adding_up(gateway: Gateway,
                                                                                   api: Api) -> None:
    s3 = _traced_client(gateway, "alice")
    bucket = f"o-{uuid.uuid4().hex[:10]}"
    s3.create_bucket(Bucket=bucket)
    put = s3.put_object(Bucket=bucket, Key="k", Body=b"x" * (3 << 20))
    request_id = put["ResponseMetadata"]["RequestId"]
    assert re.fullmatch(r"[0-9A-F]{16}", request_id)
    assert put["ResponseMetadata"]["HTTPHeaders"]["x-amz-id-2"]
    missing = httpx.get(f"{gateway.url}/{bucket}/nope")
    assert missing.status_code == 403 and missing.headers["x-amz-request-id"]

    trace = _trace(_login(api, "alice"), request_id)
    assert trace["operation"] == "PUT object" and trace["bucket"] == bucket and trace["status"] == 200
    assert trace["bytes"] == 3 << 20
    phases = trace["phases"]
    assert isinstance(phases, list)
    names = [p["name"] for p in phases]
    assert names[:2] == ["headers", "auth"] and "transfer" in names and "commit" in names
    total = float(trace["total_ms"])  # type: ignore[arg-type]
    assert abs(sum(p["duration_ms"] for p in phases) - total) <= 0.05 * total
    for before, after in zip(phases, phases[1:], strict=False):  # a waterfall: each phase starts as one ends
        assert after["start_ms"] == pytest.approx(before["start_ms"] + before["duration_ms"], abs=0.01)

    # someone else's trace is not there for bob; an admin sees it and finds it by bucket
    assert _login(api, "bob").get(f"/api/requests/{request_id}").status_code == 404
    listed = _login(api, "root").get("/api/requests", params={"bucket": bucket, "operation": "PUT object"})
    assert [t["request_id"] for t in listed.json()["items"]] == [request_id]
    assert _login(api, "bob").get("/api/requests", params={"bucket": bucket}).json()["items"] == []


def test_a_request_that_waited_for_the_only_slot_shows_a_queue_phase(gateway: Gateway, api: Api, db_url: str,
                                                                     data_dir: Path) -> None:
    """A gateway with one slot: a PUT whose body comes late holds it, so a traced GET sent meanwhile waits in the
    admission queue; its trace starts with that wait, and its phases still add up to its time."""
    url, proc = start_gateway(db_url, data_dir / f"obs-queue-{uuid.uuid4().hex[:6]}.log",
                              {"TIERPILOT_GATEWAY_MAX_INFLIGHT": "1", "TIERPILOT_GATEWAY_QUEUE_WAIT_S": "10"})
    try:
        one = Gateway(url=url, proc=proc, log=gateway.log, users=gateway.users, tier_dirs=gateway.tier_dirs)
        bucket = f"q-{uuid.uuid4().hex[:10]}"
        one.client("alice").create_bucket(Bucket=bucket)
        one.client("alice").put_object(Bucket=bucket, Key="k", Body=b"q" * 1024)
        target = urlsplit(one.client("alice").generate_presigned_url(
            "put_object", Params={"Bucket": bucket, "Key": "held"}))
        holder = http.client.HTTPConnection(target.hostname or "127.0.0.1", target.port, timeout=30)
        holder.putrequest("PUT", f"{target.path}?{target.query}")
        holder.putheader("Content-Length", "4")
        holder.endheaders()  # the gateway admits the request on its headers: the slot is taken until its answer
        in_flight = 'tierpilot_gateway_requests_in_flight'
        wait_until(lambda: _sample(httpx.get(f"{url}/_tierpilot/metrics").text, in_flight) >= 1)

        def release() -> None:  # the GET waits for the slot before the holder lets it go, however slow the machine
            waiting = 'tierpilot_gateway_requests_waiting'
            wait_until(lambda: _sample(httpx.get(f"{url}/_tierpilot/metrics").text, waiting) >= 1)
            time.sleep(HOLD_S)
            holder.send(b"body")

        releaser = threading.Thread(target=release)
        releaser.start()
        got = _traced_client(one, "alice").get_object(Bucket=bucket, Key="k")
        releaser.join()
        assert holder.getresponse().status == 200
        holder.close()
        trace = _trace(_login(api, "alice"), got["ResponseMetadata"]["RequestId"])
        phases = trace["phases"]
        assert isinstance(phases, list) and phases[0]["name"] == "queue", phases
        assert phases[0]["duration_ms"] >= HOLD_S * 1000 / 2
        total = float(trace["total_ms"])  # type: ignore[arg-type]
        assert abs(sum(p["duration_ms"] for p in phases) - total) <= 0.05 * total
    finally:
        stop(proc)


def test_metrics_add_up_over_the_gateway_processes(gateway: Gateway) -> None:
    s3 = gateway.client("alice")
    bucket = f"m-{uuid.uuid4().hex[:10]}"
    s3.create_bucket(Bucket=bucket)
    before = httpx.get(f"{gateway.url}/_tierpilot/metrics").text
    n = 40
    for i in range(n):
        s3.put_object(Bucket=bucket, Key=f"k{i}", Body=b"y" * 1024)
    # two processes share the port: whichever answers the scrape reports both processes' requests
    for _ in range(4):
        after = httpx.get(f"{gateway.url}/metrics").text
        puts = (_sample(after, "tierpilot_gateway_requests_total", operation="PUT object", status="200")
                - _sample(before, "tierpilot_gateway_requests_total", operation="PUT object", status="200"))
        assert puts == n
    received = (_sample(after, "tierpilot_gateway_received_bytes_total", operation="PUT object")
                - _sample(before, "tierpilot_gateway_received_bytes_total", operation="PUT object"))
    assert received == n * 1024
    for phase in ("headers", "auth", "lookup", "admission", "transfer", "commit", "response"):
        assert _sample(after, "tierpilot_gateway_phase_duration_seconds_count", operation="PUT object",
                       phase=phase) >= n, phase
    assert bucket not in after  # labels carry operations and ids, never names


def test_a_signed_request_for_the_bucket_named_metrics_is_s3_not_the_exposition(gateway: Gateway) -> None:
    from botocore.exceptions import ClientError

    with pytest.raises(ClientError) as err:  # nobody owns it here: S3 answers, not Prometheus
        gateway.client("alice").list_objects_v2(Bucket="metrics")
    assert err.value.response["Error"]["Code"] == "NoSuchBucket"


def test_metrics_need_loopback_or_the_token(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    from tierpilot.kit.metrics import may_scrape
    from tierpilot.kit.settings import get_settings

    assert may_scrape("127.0.0.1", None) and may_scrape("::1", None)
    assert not may_scrape("10.1.2.3", None) and not may_scrape(None, None)
    monkeypatch.setattr(get_settings(), "metrics_token", "s3cret-token")
    assert may_scrape("10.1.2.3", "Bearer s3cret-token")
    assert not may_scrape("10.1.2.3", "Bearer wrong") and not may_scrape("127.0.0.1", "Bearer wrong")
    r = httpx.get(f"{api.url}/metrics")
    assert r.status_code == 200 and "tierpilot_db_pool_connections" in r.text


def test_activity_shows_admins_the_gateway_counters_and_members_only_their_own(gateway: Gateway, api: Api) -> None:
    admin, bob = _login(api, "root"), _login(api, "bob")
    before = admin.get("/api/activity").json()
    s3 = gateway.client("bob")
    bucket = f"a-{uuid.uuid4().hex[:10]}"
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="k", Body=b"a" * 5000)
    after = admin.get("/api/activity").json()
    assert after["gateway"]["requests"] - before["gateway"]["requests"] >= 2
    assert after["gateway"]["bytes_in"] - before["gateway"]["bytes_in"] >= 5000
    mine = bob.get("/api/activity").json()
    assert mine["gateway"] is None and mine["lifecycle_backlog"] is None
    assert mine["reservations"] == [] and mine["restores_in_flight"] == 0
