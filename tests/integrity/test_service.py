"""Fixity audits in the process: owners alerted once per finding, an old object given a checksum, beat's sweep
spreading a tier's cycle, the per-bucket summary API and the CSV export."""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterator
from datetime import timedelta

import pytest
from botocore.client import BaseClient
from fastapi.testclient import TestClient
from sqlalchemy import select, update

from tests.conftest import login
from tests.gateway.conftest import Gateway
from tests.integrity.conftest import blob_file, flip_byte
from tierpilot.integrity import service
from tierpilot.integrity.models import FixityCursor
from tierpilot.kit.db import transaction, utcnow

FAST = service.Pacer(0, 0)


@pytest.fixture
def alice_api(gateway: Gateway) -> Iterator[TestClient]:
    from tierpilot.app.api import create_app

    with TestClient(create_app(), base_url="http://127.0.0.1") as c:
        yield login(c, "alice", "alice-password-1")


def _notices(user_id: int) -> list[str]:
    from tierpilot.notifications.models import Notification

    with transaction() as s:
        return list(s.scalars(select(Notification.title).where(Notification.user_id == user_id,
                                                               Notification.kind == "fixity.failed")))


def test_a_failure_alerts_the_owner_once_and_shows_in_summary_and_csv(
        gateway: Gateway, s3: BaseClient, bucket: str, alice_api: TestClient) -> None:
    bodies = {"good": os.urandom(700), "bad": os.urandom(701)}
    for key, body in bodies.items():
        s3.put_object(Bucket=bucket, Key=key, Body=body)
    flip_byte(blob_file(gateway, bodies["bad"]))
    before = len(_notices(gateway.users["alice"].id))
    first = service.run_audit(bucket=bucket, pacer=FAST)
    second = service.run_audit(bucket=bucket, pacer=FAST)
    assert (first.ok, first.mismatch, second.mismatch) == (1, 1, 1)
    assert len(_notices(gateway.users["alice"].id)) == before + 1  # the second run's finding is not news
    summary = alice_api.get(f"/api/integrity/buckets/{bucket}").json()
    assert summary["failures"] == 1 and summary["checks"] == 4 and summary["checked_objects"] == 2
    assert (summary["failing"][0]["key"], summary["failing"][0]["result"]) == ("bad", "mismatch")
    assert bucket in [b["bucket"] for b in alice_api.get("/api/integrity/buckets").json()]
    exported = alice_api.get(f"/api/integrity/buckets/{bucket}/fixity.csv")
    assert exported.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(exported.text)))
    assert [(r["key"], r["result"]) for r in rows].count(("bad", "mismatch")) == 2
    # an overwrite is new bytes: the failure no longer counts until they are checked
    s3.put_object(Bucket=bucket, Key="bad", Body=b"fresh")
    assert alice_api.get(f"/api/integrity/buckets/{bucket}").json()["failures"] == 0
    assert alice_api.get(f"/api/integrity/buckets/{bucket}x").status_code == 404


def test_an_object_without_a_checksum_gets_one_when_its_etag_verifies(
        gateway: Gateway, s3: BaseClient, bucket: str) -> None:
    from tierpilot.catalog.models import Bucket, Object

    s3.put_object(Bucket=bucket, Key="old", Body=b"written before ingest checksums")
    with transaction(write=True) as s:  # as rows written before every object got one
        bid = s.scalar(select(Bucket.id).where(Bucket.name == bucket))
        s.execute(update(Object).where(Object.bucket_id == bid).values(checksum_algorithm=None, checksum_value=None))
    done = service.run_audit(bucket=bucket, pacer=FAST)
    assert (done.ok, done.backfilled) == (1, 1)
    head = s3.head_object(Bucket=bucket, Key="old", ChecksumMode="ENABLED")
    assert head.get("ChecksumCRC64NVME")


def test_beat_sweep_checks_the_share_of_the_cycle_due_and_resumes_from_its_cursor(
        gateway: Gateway, s3: BaseClient, bucket: str) -> None:
    from tierpilot.catalog.models import Object
    from tierpilot.tiers.models import Tier

    for i in range(10):
        s3.put_object(Bucket=bucket, Key=f"s{i}", Body=os.urandom(50))
    with transaction() as s:
        hot = s.scalar(select(Tier.id).where(Tier.name == "hot-disk"))
        on_tier = s.scalar(select(Object.id).where(Object.tier_id == hot).order_by(Object.id.desc()).limit(1))
        total = len(list(s.scalars(select(Object.id).where(Object.tier_id == hot))))
    now = utcnow()
    service.audit_due(now=now, pacer=FAST)  # creates the cursor: nothing is due at the cycle's first instant
    with transaction(write=True) as s:
        s.execute(update(FixityCursor).where(FixityCursor.tier_id == hot)
                  .values(cycle_started_at=now - timedelta(days=45)))  # half of the posix period gone
    half = service.audit_due(now=now, pacer=FAST)
    assert half.checked == -(-total // 2)
    again = service.audit_due(now=now, pacer=FAST)  # nothing more is due at the same instant
    assert again.checked == 0
    with transaction(write=True) as s:
        s.execute(update(FixityCursor).where(FixityCursor.tier_id == hot)
                  .values(cycle_started_at=now - timedelta(days=91)))
    rest = service.audit_due(now=now, pacer=FAST)
    assert half.checked + rest.checked == total
    with transaction() as s:
        cursor = s.get(FixityCursor, hot)
        assert cursor is not None and cursor.after_id == on_tier and cursor.holder is None
    service.audit_due(now=now, pacer=FAST)  # the cycle reached its end and its period: the next one starts
    with transaction() as s:
        cursor = s.get(FixityCursor, hot)
        assert cursor is not None and (cursor.after_id, cursor.checked_in_cycle) == (0, 0)


def test_offline_tiers_are_skipped_with_the_reason(gateway: Gateway) -> None:
    done = service.run_audit(tier="archive", pacer=FAST)
    assert done.checked == 0 and any("archive skipped: offline tier" in n for n in done.notes)
