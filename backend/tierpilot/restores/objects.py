"""RestoreObject for one object (the gateway's S3 call): ask the tier, then record it so the sweep polls it.

Blocking, with its own transactions (the gateway runs it in a worker thread). The tier call happens
outside any transaction; the record that follows is idempotent per object and blob.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from tierpilot.catalog import events as object_events
from tierpilot.catalog import repository as catalog_repository
from tierpilot.catalog.errors import CatalogError, InvalidObjectState, NoSuchKey
from tierpilot.catalog.models import Bucket, Object
from tierpilot.drivers.base import BlobNotFound, NotArchived, RestoreInProgress, RestoreSpeed, RestoreStatus
from tierpilot.drivers.registry import TierSpec, driver_for
from tierpilot.drivers.registry import tiers as tier_directory
from tierpilot.kit.db import transaction, utcnow
from tierpilot.kit.errors import Conflict
from tierpilot.restores import repository
from tierpilot.restores.models import SPEED_RANK, RestoreItem
from tierpilot.restores.schedule import next_poll_at, tier_schedules
from tierpilot.restores.service import is_archived
from tierpilot.restores.sweep import call_with_backoff, restore_event_data


class RestoreAlreadyInProgress(CatalogError, Conflict):
    s3_code, s3_status = "RestoreAlreadyInProgress", 409


def _not_archived(obj: Object) -> InvalidObjectState:
    return InvalidObjectState("Restore is not allowed for the object's current storage class",
                              StorageClass=obj.storage_class)


def restore_object(bucket: Bucket, key: str, user_id: int, days: int, speed: RestoreSpeed) -> RestoreStatus:
    """Start, upgrade or extend the restore of one archived object, as S3's RestoreObject.

    ``accepted`` in the answer: True for a new or upgraded recall (S3 answers 202), False when the
    copy was already readable and only its expiry moved (200). RestoreAlreadyInProgress (409) for a
    repeated request at the same or a slower speed while the recall runs.
    """
    with transaction() as session:
        obj = catalog_repository.get_object(session, bucket.id, key)
    if obj is None:
        raise NoSuchKey("The specified key does not exist.", Key=key)
    tier = tier_directory.get(obj.tier_id)
    if not is_archived(tier, obj.storage_class):
        raise _not_archived(obj)
    driver = driver_for(tier)
    try:
        status = call_with_backoff(lambda: driver.restore(obj.locator, days, speed))
    except RestoreInProgress:
        raise RestoreAlreadyInProgress("Object restore is already in progress") from None
    except NotArchived:
        raise _not_archived(obj) from None
    except BlobNotFound:
        raise NoSuchKey("The specified key does not exist.", Key=key) from None
    with transaction(write=True) as session:
        record(session, obj, tier, user_id, days, speed, status, utcnow())
    return status


def record(session: Session, obj: Object, tier: TierSpec, user_id: int, days: int, speed: str,
           status: RestoreStatus, now: datetime) -> None:
    """Make the catalog and the restore items say what the tier just answered."""
    if status.restored:
        _extend(session, obj, user_id, days, speed, status.expiry, now)
        return
    override = repository.schedule_overrides(session, [tier.id]).get(tier.id)
    schedule = tier_schedules(tier.driver, tier.restore_delays, override)[speed]
    catalog_repository.set_restore_state(session, [{"_object_id": obj.id, "_locator": obj.locator,
                                                    "restore_state": "ongoing", "restore_speed": speed,
                                                    "restore_expiry": None}])
    _restore_event(session, obj, "ObjectRestore:Post", None)
    item = repository.active_item_for_object(session, obj.id, obj.locator)
    if item is None:
        first = now + timedelta(seconds=schedule.first_offset_at_or_after(
            max((status.ready_at - now).total_seconds(), 0.0) if status.ready_at else 0.0))
        session.add(RestoreItem(batch_id=None, owner_id=user_id, object_id=obj.id, bucket=_bucket_name(session, obj),
                                key=obj.key, size=obj.size, tier_id=tier.id, locator=obj.locator, speed=speed,
                                days=days, state="ongoing", requested_at=now, next_poll_at=first, attempts=1,
                                expected_ready_at=status.ready_at))
    elif SPEED_RANK[speed] < SPEED_RANK[item.speed]:
        item.speed = speed
        item.expected_ready_at = status.ready_at or item.expected_ready_at
        if item.state == "ongoing" and item.claim_token is None and item.requested_at is not None:
            at = next_poll_at(item.requested_at, now, schedule)
            item.next_poll_at = min(at, item.next_poll_at) if item.next_poll_at else at
    session.flush()


def _restore_event(session: Session, obj: Object, name: str, expiry: datetime | None) -> None:
    object_events.emit(session, [object_events.Change(obj.bucket_id, obj.key, name, obj.size, obj.etag,
                                                      obj.version_id, restore_event_data(expiry))])


def _extend(session: Session, obj: Object, user_id: int, days: int, speed: str, expiry: datetime | None,
            now: datetime) -> None:
    catalog_repository.set_restore_state(session, [{"_object_id": obj.id, "_locator": obj.locator,
                                                    "restore_state": "restored",
                                                    "restore_speed": obj.restore_speed or speed,
                                                    "restore_expiry": expiry}])
    _restore_event(session, obj, "ObjectRestore:Completed", expiry)
    ready = repository.ready_items_for_object(session, obj.id, obj.locator)
    for item in ready:
        item.expires_at = expiry
        item.next_poll_at = expiry
    if not ready and repository.active_item_for_object(session, obj.id, obj.locator) is None:
        # readable without any record of ours (restored before, or at once): track it so it expires
        session.add(RestoreItem(batch_id=None, owner_id=user_id, object_id=obj.id, bucket=_bucket_name(session, obj),
                                key=obj.key, size=obj.size, tier_id=obj.tier_id, locator=obj.locator, speed=speed,
                                days=days, state="ready", requested_at=now, ready_at=now, expires_at=expiry,
                                next_poll_at=expiry))
    session.flush()


def _bucket_name(session: Session, obj: Object) -> str:
    bucket = catalog_repository.get_bucket(session, obj.bucket_id)
    return bucket.name if bucket is not None else ""
