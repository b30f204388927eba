"""RestoreObject, HeadObject's x-amz-restore and reads of archived objects, with boto3 against a real
gateway process; an offline posix tier with recall delays of seconds; a real sweep polls in the background."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime
from pathlib import Path

import boto3
import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError
from sqlalchemy import func, select

from tests.conftest import _truncate_all, make_user
from tests.gateway.conftest import start_gateway, stop
from tests.restores.conftest import build_archive
from tests.waiting import wait_until
from tierpilot.catalog import repository, store
from tierpilot.catalog import service as catalog
from tierpilot.drivers.base import RestoreStatus
from tierpilot.kit.db import transaction
from tierpilot.restores import sweep
from tierpilot.restores.models import RestoreItem

BODY = b"detector simulation, run 42\n" * 1000


@dataclass
class Setup:
    url: str
    s3: BaseClient
    bucket: str
    tag: str
    sweeping: threading.Event  # cleared: the background sweep pauses


def _client(url: str, user: dict[str, str]) -> BaseClient:
    return boto3.client("s3", endpoint_url=url, aws_access_key_id=user["access_key_id"],
                        aws_secret_access_key=user["secret_access_key"], region_name="us-east-1")


@pytest.fixture(scope="module")
def gw(db_url: str, data_dir: Path) -> Iterator[Setup]:
    users = {"admin": make_user("gw-admin", "admin-password-1", is_admin=True),
             "member": make_user("gw-member", "member-password-1")}
    archive = build_archive(users, delays=(1, 2, 3))
    log = data_dir / f"gateway-restores-{archive.tag}.log"
    url, proc = start_gateway(db_url, log)
    stop_sweeping = threading.Event()
    allowed = threading.Event()
    allowed.set()

    def sweeping() -> None:  # what the worker's beat does, every 0.2 s
        while not stop_sweeping.is_set():
            if allowed.is_set():
                sweep.poll_due(budget_s=5)
            stop_sweeping.wait(0.2)

    sweeper = threading.Thread(target=sweeping, daemon=True)
    sweeper.start()
    try:
        yield Setup(url, _client(url, users["member"]), archive.buckets["member"], archive.tag, allowed)
    finally:
        stop_sweeping.set()
        sweeper.join(30)
        stop(proc)
        _truncate_all()


def _put(gw: Setup, storage_class: str = "GLACIER") -> str:
    key = f"runs/{uuid.uuid4().hex[:8]}.root"
    gw.s3.put_object(Bucket=gw.bucket, Key=key, Body=BODY, StorageClass=storage_class)
    return key


def _restore(gw: Setup, key: str, days: int = 1, tier: str | None = None) -> int:
    request: dict[str, object] = {"Days": days}
    if tier:
        request["GlacierJobParameters"] = {"Tier": tier}
    reply = gw.s3.restore_object(Bucket=gw.bucket, Key=key, RestoreRequest=request)
    return int(reply["ResponseMetadata"]["HTTPStatusCode"])


def _error(exc: pytest.ExceptionInfo[ClientError]) -> tuple[int, str]:
    return exc.value.response["ResponseMetadata"]["HTTPStatusCode"], exc.value.response["Error"]["Code"]


def _expiry_for(moment: datetime, days: int) -> datetime:
    end = moment + timedelta(days=days)
    midnight = end.replace(hour=0, minute=0, second=0, microsecond=0)
    return midnight if midnight == end else midnight + timedelta(days=1)


def test_a_new_restore_is_202_and_head_says_ongoing_until_the_copy_is_readable(gw: Setup) -> None:
    key = _put(gw)
    head = gw.s3.head_object(Bucket=gw.bucket, Key=key)
    assert head["StorageClass"] == "GLACIER" and "Restore" not in head
    with pytest.raises(ClientError) as exc:
        gw.s3.get_object(Bucket=gw.bucket, Key=key)
    assert _error(exc) == (403, "InvalidObjectState")

    assert _restore(gw, key, days=2, tier="Standard") == 202
    assert gw.s3.head_object(Bucket=gw.bucket, Key=key)["Restore"] == 'ongoing-request="true"'
    with pytest.raises(ClientError) as exc:
        gw.s3.get_object(Bucket=gw.bucket, Key=key)
    assert _error(exc) == (403, "InvalidObjectState")
    with pytest.raises(ClientError) as exc:  # the same speed again while it runs
        _restore(gw, key, days=2, tier="Standard")
    assert _error(exc) == (409, "RestoreAlreadyInProgress")
    with pytest.raises(ClientError) as exc:  # a slower one never replaces it
        _restore(gw, key, days=2, tier="Bulk")
    assert _error(exc) == (409, "RestoreAlreadyInProgress")

    wait_until(lambda: "false" in gw.s3.head_object(Bucket=gw.bucket, Key=key).get("Restore", ""))
    header = gw.s3.head_object(Bucket=gw.bucket, Key=key)["Restore"]
    expiry = parsedate_to_datetime(header.split('expiry-date="')[1].rstrip('"'))
    assert header == f'ongoing-request="false", expiry-date="{format_datetime(expiry, usegmt=True)}"'
    now = datetime.now(UTC)
    assert expiry in (_expiry_for(now, 2), _expiry_for(now - timedelta(seconds=10), 2))  # next midnight UTC
    assert gw.s3.get_object(Bucket=gw.bucket, Key=key)["Body"].read() == BODY
    assert gw.s3.get_object(Bucket=gw.bucket, Key=key, Range="bytes=0-7")["Body"].read() == BODY[:8]


def test_restoring_a_restored_object_is_200_and_extends_its_expiry(gw: Setup) -> None:
    key = _put(gw)
    assert _restore(gw, key, days=1, tier="Expedited") == 202
    wait_until(lambda: "false" in gw.s3.head_object(Bucket=gw.bucket, Key=key).get("Restore", ""))
    before = gw.s3.head_object(Bucket=gw.bucket, Key=key)["Restore"]
    assert _restore(gw, key, days=9) == 200
    after = gw.s3.head_object(Bucket=gw.bucket, Key=key)["Restore"]
    first = parsedate_to_datetime(before.split('expiry-date="')[1].rstrip('"'))
    extended = parsedate_to_datetime(after.split('expiry-date="')[1].rstrip('"'))
    assert extended == _expiry_for(datetime.now(UTC), 9) and extended - first >= timedelta(days=7)
    def expiries() -> set[datetime | None]:
        with transaction() as s:
            return set(s.scalars(select(RestoreItem.expires_at).where(RestoreItem.key == key)))

    # the restore the sweep tracks expires later too, once a sweep has seen it (HEAD asks the tier itself)
    wait_until(lambda: expiries() == {extended})


def test_head_tells_a_finished_recall_before_the_sweep_records_it(gw: Setup) -> None:
    key = _put(gw)
    gw.sweeping.clear()
    try:
        assert _restore(gw, key, tier="Expedited") == 202  # ready in 1 s
        assert gw.s3.head_object(Bucket=gw.bucket, Key=key)["Restore"] == 'ongoing-request="true"'
        wait_until(lambda: "false" in gw.s3.head_object(Bucket=gw.bucket, Key=key).get("Restore", ""))
        restore = gw.s3.head_object(Bucket=gw.bucket, Key=key)["Restore"]
        with transaction() as s:  # nothing swept: the catalog still has the recall running
            states = set(s.scalars(select(RestoreItem.state).where(RestoreItem.key == key)))
        assert states and "ready" not in states, states
        expiry = parsedate_to_datetime(restore.split('expiry-date="')[1].rstrip('"'))
        assert expiry == _expiry_for(datetime.now(UTC), 1)
        assert gw.s3.get_object(Bucket=gw.bucket, Key=key)["Body"].read() == BODY
    finally:
        gw.sweeping.set()


def _recall(gw: Setup, key: str) -> RestoreStatus:
    """The archive tier's own record of the key's recall (its speed, when its copy is ready)."""
    with transaction() as s:
        obj = repository.get_object(s, catalog.get_bucket(s, gw.bucket).id, key)
        assert obj is not None
        tier_id, locator = obj.tier_id, obj.locator
    return store.driver(tier_id).restore_status(locator)


def test_a_running_restore_can_be_sped_up(gw: Setup) -> None:
    # the tier's ready time moves up to the faster speed's; no wall-clock bound (the machine may be slow)
    key = _put(gw, "DEEP_ARCHIVE")
    assert _restore(gw, key, tier="Bulk") == 202  # 3 s
    bulk = _recall(gw, key)
    assert _restore(gw, key, tier="Expedited") == 202  # upgrade: 1 s from now
    upgraded = _recall(gw, key)
    assert bulk.ready_at is not None and upgraded.ready_at is not None
    assert upgraded.speed == "expedited" and upgraded.ready_at < bulk.ready_at
    with pytest.raises(ClientError) as exc:
        _restore(gw, key, tier="Expedited")
    assert _error(exc) == (409, "RestoreAlreadyInProgress")
    wait_until(lambda: "false" in gw.s3.head_object(Bucket=gw.bucket, Key=key).get("Restore", ""))
    assert gw.s3.get_object(Bucket=gw.bucket, Key=key)["Body"].read() == BODY
    with transaction() as s:
        speeds = list(s.scalars(select(RestoreItem.speed).where(RestoreItem.key == key)))
    assert speeds == ["expedited"]


def _item_count() -> int:
    with transaction() as s:
        return int(s.scalar(select(func.count(RestoreItem.id))) or 0)


@pytest.mark.parametrize("body, status, code", [
    (b"<RestoreRequest><Days>1</Days>", 400, "MalformedXML"),
    (b"<Restore><Days>1</Days></Restore>", 400, "MalformedXML"),
    (b"<RestoreRequest><Days>zero</Days></RestoreRequest>", 400, "MalformedXML"),
    (b"<RestoreRequest><Days>0</Days></RestoreRequest>", 400, "InvalidArgument"),
    (b"<RestoreRequest></RestoreRequest>", 400, "InvalidArgument"),
    (b"<RestoreRequest><Days>1</Days><GlacierJobParameters><Tier>Fast</Tier></GlacierJobParameters>"
     b"</RestoreRequest>", 400, "MalformedXML"),
])
def test_bad_restore_requests_get_s3_errors_and_change_nothing(gw: Setup, body: bytes, status: int,
                                                                code: str) -> None:
    key = _put(gw)
    before = _item_count()
    url = gw.s3.generate_presigned_url("restore_object", Params={"Bucket": gw.bucket, "Key": key})
    import httpx

    reply = httpx.post(url, content=body)
    assert reply.status_code == status, reply.text
    assert f"<Code>{code}</Code>" in reply.text
    assert _item_count() == before
    assert "Restore" not in gw.s3.head_object(Bucket=gw.bucket, Key=key)


def test_objects_that_need_no_restore_and_missing_keys_are_refused(gw: Setup) -> None:
    key = _put(gw, "STANDARD")
    with pytest.raises(ClientError) as exc:
        _restore(gw, key)
    assert _error(exc) == (403, "InvalidObjectState")
    with pytest.raises(ClientError) as exc:
        _restore(gw, "runs/absent.root")
    assert _error(exc) == (404, "NoSuchKey")
    assert gw.s3.get_object(Bucket=gw.bucket, Key=key)["Body"].read() == BODY
