"""The rows GET and HEAD read, kept by a gateway between requests, and changed through another process: gateway B
(a 60 s cache) answers with what gateway A, or a process of the catalog's own, committed just before. On SQLite B's
reader watches the database's WAL index; on PostgreSQL it keeps rows under the objects generation in Redis
(``catalog.changes``), which every commit that changes the table moves."""

from __future__ import annotations

import uuid

import pytest
from botocore.exceptions import ClientError
from sqlalchemy import update

from tests.gateway.conftest import Gateway
from tierpilot.catalog.models import Bucket, Object
from tierpilot.kit.db import transaction
from tierpilot.kit.settings import get_settings


def _status(call: object) -> int:
    try:
        call()  # type: ignore[operator]
    except ClientError as exc:
        return int(exc.response["ResponseMetadata"]["HTTPStatusCode"])
    return 200


def test_a_gateway_reads_at_once_what_another_process_committed(gateways: tuple[Gateway, Gateway], redis_url: str,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = gateways[0].client("alice"), gateways[1].client("alice")
    name = f"rows-{uuid.uuid4().hex[:10]}"
    a.create_bucket(Bucket=name)
    a.put_object(Bucket=name, Key="k", Body=b"one")
    for _ in range(3):  # B's row of k, read under the current state
        assert b.get_object(Bucket=name, Key="k")["Body"].read() == b"one"
    assert _status(lambda: b.head_object(Bucket=name, Key="later")) == 404  # an absent key is kept too

    a.put_object(Bucket=name, Key="k", Body=b"two")  # overwritten through A
    assert b.get_object(Bucket=name, Key="k")["Body"].read() == b"two"
    a.put_object(Bucket=name, Key="later", Body=b"now")
    assert b.head_object(Bucket=name, Key="later")["ContentLength"] == 3

    # a change committed by a process of the catalog's own (a lifecycle move, a restore, an edit) set up as the
    # installation is: with its Redis
    monkeypatch.setattr(get_settings(), "redis_url", redis_url)
    assert b.head_object(Bucket=name, Key="k")["ContentType"] != "text/csv"
    with transaction(write=True) as s:
        s.execute(update(Object).where(Object.bucket_id == Bucket.id, Bucket.name == name, Object.key == "k")
                  .values(content_type="text/csv"))
    assert b.head_object(Bucket=name, Key="k")["ContentType"] == "text/csv"

    a.delete_object(Bucket=name, Key="k")
    assert _status(lambda: b.head_object(Bucket=name, Key="k")) == 404
    assert _status(lambda: b.get_object(Bucket=name, Key="k")) == 404
