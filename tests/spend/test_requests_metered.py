"""HEAD, LIST and other requests that move no object data are metered by a real gateway process, by kind, in
memory, and written with the data-path counters; spend prices them at S3's request classes."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from tests.gateway.conftest import start_gateway, stop
from tests.waiting import wait_until
from tierpilot.auth import service as auth
from tierpilot.catalog import service as catalog
from tierpilot.kit.db import transaction
from tierpilot.spend import gateway as spend_gateway
from tierpilot.spend import repository, usage
from tierpilot.spend.usage import KINDS, Meter, kind_of
from tierpilot.tiers import service as tiers
from tierpilot.tiers.schemas import TierCreate


@pytest.mark.parametrize("method,level,sub,kind", [
    ("HEAD", "object", "", "head"), ("HEAD", "bucket", "", "head"), ("GET", "bucket", "", "list"),
    ("GET", "bucket", "versions", "list"), ("GET", "object", "uploadId", "list"), ("GET", "object", "tagging", "get"),
    ("PUT", "object", "tagging", "put"), ("POST", "object", "uploads", "put"), ("DELETE", "object", "", "delete"),
    ("POST", "bucket", "delete", "delete")])
def test_each_request_kind_bills_at_its_s3_request_class(method: str, level: str, sub: str, kind: str) -> None:
    assert kind_of(method, level, sub) == kind
    assert KINDS[kind] == {"head": "read", "get": "read", "list": "write", "put": "write", "delete": None}[kind]


def test_the_gateway_hook_counts_each_operation_at_its_kind_and_bills_no_failure(
        monkeypatch: pytest.MonkeyPatch) -> None:
    counter = Meter()
    monkeypatch.setattr(spend_gateway, "meter", counter)
    ops = ["HEAD object", "GET bucket", "GET bucket?tagging", "GET bucket?versions", "DELETE object",
           "POST bucket?delete", "PUT object?tagging", "HEAD bucket"]
    req = SimpleNamespace(flows=[], caller=SimpleNamespace(user_id=7), bucket="b")
    for _ in range(2):  # the second time, each operation's kind is known
        for op in ops:
            spend_gateway.finished(req, op, 200)
    spend_gateway.finished(req, "HEAD object", 500)  # the gateway's failure
    spend_gateway.finished(req, "HEAD object", 499)  # the client left
    spend_gateway.finished(SimpleNamespace(flows=[object()], caller=req.caller, bucket="b"), "GET object", 200)
    named = counter.take()[1]
    assert {kind: n for (_, user, bucket, kind), n in named.items() if (user, bucket) == (7, "b")} == {
        "head": 4, "list": 4, "get": 2, "delete": 4, "put": 2}


def test_past_max_keys_a_new_key_is_dropped_and_counted_but_a_known_one_still_adds(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(usage, "MAX_KEYS", 2)
    counter = Meter()
    counter.add_request(1, "a", "head")
    counter.add_request(1, "b", "head")
    counter.add_request(1, "c", "head", requests=3)  # a third key: dropped
    counter.add_request(1, "a", "head", requests=2)
    assert counter.dropped == 3
    assert sorted((bucket, n) for (_, _, bucket, _), n in counter.take()[1].items()) == [("a", 3), ("b", 1)]


def test_named_counts_become_bucket_ids_at_flush_and_unknown_buckets_are_dropped(db: str, tmp_path: Path) -> None:
    with transaction(write=True) as s:
        user, _ = auth.create_user(s, "counter", "counter-password")
        tiers.create(s, TierCreate(name="disk", driver="posix", config={"path": str(tmp_path)}))
        bucket_id = catalog.create_bucket(s, owner_id=user.id, name="counted", tier_name="disk").id
        user_id = user.id
    meter = Meter()
    for _ in range(3):
        meter.add_request(user_id, "counted", "head", day="2026-11-02")
    meter.add_request(user_id, "counted", "list", day="2026-11-02")
    meter.add_request(user_id, "gone-meanwhile", "list", day="2026-11-02")
    meter.add(user_id, bucket_id, "read", 10, day="2026-11-02")
    assert meter.flush() == 4
    with transaction() as s:
        assert sorted(repository.usage_between(s, "2026-11-01", "2026-11-30", None)) == [
            ("2026-11-02", user_id, bucket_id, "head", 3, 0), ("2026-11-02", user_id, bucket_id, "list", 1, 0),
            ("2026-11-02", user_id, bucket_id, "read", 1, 10)]


@pytest.fixture
def gateway_client(db_url: str, db: str, data_dir: Path) -> Iterator[tuple[Any, int, int]]:
    tag = uuid.uuid4().hex[:8]
    with transaction(write=True) as s:
        user, key = auth.create_user(s, f"meter-{tag}", "meter-password-1")
        tiers.create(s, TierCreate(name=f"meter-{tag}", driver="posix", config={"path": f"meter-{tag}"}))
        bucket = catalog.create_bucket(s, owner_id=user.id, name=f"meter-{tag}", tier_name=f"meter-{tag}")
        ids = (user.id, bucket.id)
    url, proc = start_gateway(db_url, data_dir / f"gateway-meter-{tag}.log")
    s3 = boto3.client("s3", endpoint_url=url, aws_access_key_id=key.access_key_id,
                      aws_secret_access_key=key.secret_access_key, region_name="us-east-1")
    try:
        yield s3, *ids
    finally:
        stop(proc)


def test_a_gateway_meters_head_list_and_other_requests_without_a_flow(
        gateway_client: tuple[Any, int, int]) -> None:
    s3, user_id, bucket_id = gateway_client
    name = s3.list_buckets()["Buckets"][0]["Name"]  # names no bucket: not billed
    s3.put_object(Bucket=name, Key="a", Body=b"x" * 1000)
    for _ in range(3):
        s3.head_object(Bucket=name, Key="a")
    s3.list_objects_v2(Bucket=name)
    s3.list_objects_v2(Bucket=name, Prefix="a", Delimiter="/")
    s3.get_object_tagging(Bucket=name, Key="a")
    with pytest.raises(ClientError):
        s3.get_object(Bucket=name, Key="missing")  # answered before any byte moved: a GET without a flow
    s3.get_object(Bucket=name, Key="a")["Body"].read()
    s3.delete_object(Bucket=name, Key="a")
    want = {"write": (1, 1000), "head": (3, 0), "list": (2, 0), "get": (2, 0), "read": (1, 1000), "delete": (1, 0)}
    got: dict[str, tuple[int, int]] = {}

    def counted() -> bool:  # the gateway writes its counters every 2 s
        with transaction() as s:
            got.clear()
            got.update({kind: (n, nb) for _, u, b, kind, n, nb in repository.usage_between(
                s, "2000-01-01", "2999-12-31", [bucket_id]) if u == user_id})
        return got == want

    wait_until(counted, step=0.5, message=lambda: f"{got} != {want}")
    assert got == want
