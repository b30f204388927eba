"""A restore batch on an s3 tier (GLACIER class) against moto's server: RestoreObject is passed through,
HeadObject's x-amz-restore is polled. moto holds a restore in progress only with its state manager's
{"progression": "manual", "times": 1} (one step per look), the one mode that behaves like S3."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import boto3
import httpx
import pytest
from sqlalchemy import select

from tests.clocks import WallClock
from tests.restores.conftest import Archive
from tierpilot.catalog.models import Object
from tierpilot.drivers.registry import driver_for
from tierpilot.kit.db import transaction
from tierpilot.restores import service, sweep
from tierpilot.restores.models import RestoreBatch, RestoreItem
from tierpilot.tiers.models import Tier


@pytest.fixture
def cloud(archive: Archive, moto_url: str) -> Iterator[Archive]:
    """An s3 tier on a fresh moto bucket, polled every second from the first second (its own schedule)."""
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.schemas import TierCreate

    bucket = f"cold-{uuid.uuid4().hex[:10]}"
    boto3.client("s3", endpoint_url=moto_url, aws_access_key_id="AKIDTEST", aws_secret_access_key="secret",
                 region_name="us-east-1").create_bucket(Bucket=bucket)
    with transaction(write=True) as s:
        tier = tiers.create(s, TierCreate(
            name=f"glacier-{archive.tag}", driver="s3", storage_classes=["GLACIER"],
            config={"endpoint_url": moto_url, "bucket": bucket, "prefix": "tp/", "access_key_id": "AKIDTEST",
                    "secret_access_key": "secret", "storage_class": "GLACIER"},
            price_ref={"catalog": "aws-us-east-1-2026", "storage_class": "GLACIER"}))
        fast = {"phases": [[0, 1]], "max_s": 3600}
        service.set_tier_schedule(s, tier.id, {"expedited": fast, "standard": fast, "bulk": fast})
        archive.tiers["glacier"] = tier.id
    yield archive
    httpx.post(f"{moto_url}/moto-api/state-manager/unset-transition", json={"model_name": "s3::keyrestore"})


def _hold_restores(moto_url: str) -> None:
    r = httpx.post(f"{moto_url}/moto-api/state-manager/set-transition",
                   json={"model_name": "s3::keyrestore", "transition": {"progression": "manual", "times": 1}})
    assert r.status_code == 201


def _states(batch_id: int) -> list[str]:
    with transaction() as s:
        return list(s.scalars(select(RestoreItem.state).where(RestoreItem.batch_id == batch_id)
                              .order_by(RestoreItem.key)))


def _batch_state(batch_id: int) -> str:
    with transaction() as s:
        return str(s.scalar(select(RestoreBatch.state).where(RestoreBatch.id == batch_id)))


def test_an_s3_archive_batch_goes_ongoing_then_ready_as_the_endpoint_reports(cloud: Archive, moto_url: str,
                                                                             clock: WallClock) -> None:
    keys = ["raw/a.h5", "raw/b.h5", "raw/c.h5"]
    cloud.put(cloud.buckets["member"], keys, tier="glacier", storage_class="GLACIER", size=2048)
    _hold_restores(moto_url)
    with transaction(write=True) as s:
        preview = service.preview(s, cloud.user("member"), service.Selection(cloud.buckets["member"], (), ["raw/"]), 7)
        batch_id = service.create_batch(s, cloud.user("member"), service.Selection(cloud.buckets["member"], keys),
                                        "standard", 7).id
    assert preview.objects == 3 and [o.speed for o in preview.speeds if o.available] == ["expedited", "standard",
                                                                                         "bulk"]
    # Glacier's typical 4 h standard recall, seen at the first poll of this tier's 1-second schedule
    assert {o.speed: o.expected_ready_s for o in preview.speeds}["standard"] == 4 * 3600

    submitted = sweep.poll_due(clock=clock)
    assert submitted.outcomes == {"accepted": 3}  # RestoreObject answered 202 for each
    assert _states(batch_id) == ["ongoing"] * 3

    clock.advance(seconds=1.05)  # the next poll of the schedule is due
    first_look = sweep.poll_due(clock=clock)  # moto's first HeadObject step: ongoing-request="true"
    assert first_look.outcomes == {"ongoing": 3} and _states(batch_id) == ["ongoing"] * 3
    clock.advance(seconds=1.05)
    second_look = sweep.poll_due(clock=clock)  # restored, with an expiry
    assert second_look.outcomes == {"ready": 3} and second_look.batches_done == [batch_id]
    assert _batch_state(batch_id) == "ready"
    with transaction() as s:
        rows = s.execute(select(Object.restore_state, Object.restore_expiry)).all()
    assert {r[0] for r in rows} == {"restored"} and all(r[1] is not None for r in rows)

    # a second batch over restored objects extends them: RestoreObject answers 200, ready at once
    with transaction(write=True) as s:
        again = service.create_batch(s, cloud.user("member"), service.Selection(cloud.buckets["member"], keys[:1]),
                                     "bulk", 30).id
    assert sweep.poll_due(clock=clock).outcomes == {"ready": 1}
    assert _batch_state(again) == "ready"
    with transaction() as s:
        expiry = s.scalar(select(Object.restore_expiry).where(Object.key == keys[0]))
        older = s.scalar(select(Object.restore_expiry).where(Object.key == keys[1]))
    assert expiry is not None and older is not None and (expiry - older).days >= 20


def test_objects_missing_on_the_endpoint_fail_and_the_rest_complete(cloud: Archive, moto_url: str,
                                                                   clock: WallClock) -> None:
    keys = ["x/1", "x/2"]
    cloud.put(cloud.buckets["member"], keys, tier="glacier", storage_class="GLACIER")
    with transaction() as s:
        locator = s.scalar(select(Object.locator).where(Object.key == "x/2"))
        tier = s.get(Tier, cloud.tiers["glacier"])
        assert tier is not None and locator is not None
    driver_for(tier).delete(locator)  # the endpoint lost one object
    with transaction(write=True) as s:
        batch_id = service.create_batch(s, cloud.user("member"), service.Selection(cloud.buckets["member"], keys),
                                        "expedited", 1).id
    # RestoreObject: 202 for the one, NoSuchKey for the other (a permanent failure, no retries)
    assert sweep.poll_due(clock=clock).outcomes == {"accepted": 1, "failed": 1}
    clock.advance(seconds=1.05)  # the next poll of the schedule is due
    assert sweep.poll_due(clock=clock).outcomes == {"ready": 1}  # moto completed it at once
    assert _states(batch_id) == ["ready", "failed"]
    assert _batch_state(batch_id) == "failed"
    with transaction() as s:
        error = s.scalar(select(RestoreItem.last_error).where(RestoreItem.key == "x/2"))
    assert error is not None and "BlobNotFound" in error
