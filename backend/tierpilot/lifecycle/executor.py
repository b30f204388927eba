"""Run one queued move: copy, verify, switch the catalog, delete the old copy. Safe to run twice, or twice at once.

A move is a small state machine kept in its ``lifecycle_moves`` row; each step is recorded before the
next starts, so a worker killed anywhere leaves a row that says what is left to do:

    queued/running  copy to a fresh locator on the target tier (recorded first), verify size and
                    checksum against the catalog, then one transaction switches the object's row
                    (guarded by its old locator and ETag: an overwrite meanwhile wins) and the move
                    to ``switched``
    switched        after a short grace (reads that looked the object up just before the switch
                    finish), delete the old copy, then ``done``

Only the holder of the move's lease may record a step. A worker that lost its lease (it stalled, and
another took the move over) fails its switch transaction as a whole and removes only its own copy.
The catalog never points at a blob before it is complete and verified, and a blob the catalog points
at is never deleted.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from tierpilot.catalog import repository as catalog_repository
from tierpilot.catalog import service as catalog_service
from tierpilot.catalog.models import Object
from tierpilot.kit.db import transaction, utcnow
from tierpilot.lifecycle import repository
from tierpilot.lifecycle.costs import tier_prices, to_nano
from tierpilot.lifecycle.models import LifecycleMove
from tierpilot.lifecycle.ratelimit import RateLimiter, move_limiter
from tierpilot.lifecycle.rules import midnight
from tierpilot.settings import get_settings
from tierpilot.tiers.base import BlobNotFound, NotRestored, PutResult, TierDriver
from tierpilot.tiers.models import Tier
from tierpilot.tiers.registry import driver_for

log = logging.getLogger(__name__)
HOST = socket.gethostname()
_ASSUMED_COPY_BPS = 50e6  # for the lease of an unthrottled copy: a slow disk's rate


class LeaseLost(Exception):
    """Another worker took the move over (this one was presumed dead); stop without recording anything."""


class MoveFailed(Exception):
    def __init__(self, message: str, retryable: bool = True) -> None:
        super().__init__(message)
        self.retryable = retryable


@dataclass(frozen=True)
class Outcome:
    move_id: int
    state: str  # done | skipped | failed | retry | deferred | busy | lost | missing
    delete_after: datetime | None = None
    error: str | None = None


def worker_identity() -> str:
    return f"{HOST}:{os.getpid()}:{threading.get_ident()}"


def owner_is_dead(owner: str) -> bool:
    """A lease holder on this host whose process is gone (or a zombie): its moves can be taken over at once."""
    try:
        host, pid_text, _thread = owner.rsplit(":", 2)
        pid = int(pid_text)
    except ValueError:
        return False
    if host != HOST:
        return False  # another host's worker: only its lease running out tells
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):
        return False


def _tiers(session: Session) -> dict[int, Tier]:
    tiers = {t.id: t for t in repository.list_tiers(session)}
    for t in tiers.values():
        session.expunge(t)
    return tiers


def _lease_until(now: datetime, size: int, limiter: RateLimiter) -> datetime:
    rate = limiter.rate_bps if limiter.limited else _ASSUMED_COPY_BPS
    return now + timedelta(seconds=get_settings().lifecycle_lease_s + size / rate)


def run_move(move_id: int, limiter: RateLimiter | None = None, wait_grace: bool = False) -> Outcome:
    """Advance one move as far as it can go now (idempotent; safe against concurrent runs of the same move)."""
    limiter = limiter or move_limiter()
    owner = worker_identity()
    now = utcnow()
    with transaction(write=True) as session:
        peek = repository.get_move(session, move_id)
        if peek is None:
            return Outcome(move_id, "missing")
        if peek.state in ("done", "skipped"):
            return Outcome(move_id, peek.state)
        steal = peek.lease_owner if peek.lease_owner and owner_is_dead(peek.lease_owner) else None
        if not repository.claim_move(session, move_id, owner, now, _lease_until(now, peek.size, limiter), steal):
            return Outcome(move_id, "failed" if peek.state == "failed" else "busy")
        session.expire_all()
        move = repository.get_move(session, move_id)  # read after the claim: the row as its lease holder sees it
        assert move is not None
        if move.state in ("queued", "failed"):
            repository.update_move(session, move_id, state="running", next_attempt_at=None)
            move.state = "running"
        session.expunge(move)
    try:
        if move.state == "switched":
            return _finish(move, owner, wait_grace)
        if move.action == "transition":
            return _transition(move, owner, limiter, wait_grace)
        if move.action == "expiration":
            return _expire(move, owner, wait_grace)
        if move.action == "abort_upload":
            return _abort_upload(move, owner)
        raise MoveFailed(f"unknown action {move.action!r}", retryable=False)
    except LeaseLost:
        return Outcome(move_id, "lost")
    except MoveFailed as exc:
        return _record_failure(move, owner, str(exc), exc.retryable)
    except NotRestored:
        return _record_failure(move, owner, "the source copy is archived on an offline tier: restore it first",
                               retryable=False)
    except Exception as exc:
        log.exception("lifecycle move %s failed", move_id)
        return _record_failure(move, owner, f"{type(exc).__name__}: {exc}", retryable=True)


def _record_failure(move: LifecycleMove, owner: str, error: str, retryable: bool) -> Outcome:
    s = get_settings()
    now = utcnow()
    with transaction(write=True) as session:
        current = repository.get_move(session, move.id)
        attempts = current.attempts if current is not None else move.attempts
        retry = retryable and attempts < s.lifecycle_max_attempts
        next_at = now + timedelta(seconds=min(3600.0, 30.0 * 2 ** max(0, attempts - 1))) if retry else None
        if not repository.update_move(session, move.id, owner, state="failed", error=error[:2000],
                                      next_attempt_at=next_at, lease_owner=None, lease_until=None):
            return Outcome(move.id, "lost")
        repository.add_meter(session, day=_day(now), action=move.action, src_tier_id=move.src_tier_id,
                             dst_tier_id=move.dst_tier_id or 0, failures=1)
    log.warning("lifecycle move %s (%s %s) failed%s: %s", move.id, move.action, move.key,
                ", will retry" if retry else "", error)
    return Outcome(move.id, "retry" if retry else "failed", error=error)


def _day(now: datetime) -> str:
    return midnight(now).date().isoformat()


def _current_object(move: LifecycleMove) -> tuple[Object | None, dict[int, Tier], str]:
    with transaction() as session:
        obj = repository.get_object(session, move.object_id) if move.object_id is not None else None
        if obj is not None:
            session.expunge(obj)
        bucket = repository.get_bucket(session, move.bucket_id)
        tiers = _tiers(session)
    if obj is not None and (obj.locator != move.src_locator or obj.etag != move.etag):
        obj = None  # overwritten (or moved by someone else) since the sweep: this version is gone
    return obj, tiers, bucket.name if bucket is not None else ""


def _skip(move: LifecycleMove, owner: str, reason: str) -> Outcome:
    now = utcnow()
    with transaction(write=True) as session:
        if not repository.update_move(session, move.id, owner, state="skipped", error=reason, finished_at=now,
                                      lease_owner=None, lease_until=None):
            raise LeaseLost
    return Outcome(move.id, "skipped")


def _delete_unreferenced(tier: Tier | None, locator: str | None, object_id: int | None) -> None:
    """Delete a copy this move made, unless the catalog points at it (it never deletes live bytes)."""
    if tier is None or not locator:
        return
    with transaction() as session:
        obj = repository.get_object(session, object_id) if object_id is not None else None
        live = obj is not None and obj.locator == locator
    if not live:
        driver_for(tier).delete(locator)


def copy_blob(src: TierDriver, dst: TierDriver, src_locator: str, dst_locator: str, obj: Object,
              storage_class: str, limiter: RateLimiter) -> PutResult:
    """Copy one blob between tiers: streamed through the rate limit, or the drivers' fastest way when unbounded."""
    if not limiter.limited:
        result = dst.copy_from(src, src_locator, dst_locator, storage_class=storage_class)
        if not result.md5_hex:  # copied without reading (hard link, server-side copy): check what landed
            result = PutResult(size=dst.head(dst_locator).size, md5_hex="")
        return result
    algorithm = obj.checksum_algorithm if obj.checksum_value and "-" not in obj.checksum_value else None
    return dst.put(dst_locator, limiter.throttle(src.open(src_locator)), checksum_algorithm=algorithm,  # type: ignore[arg-type]
                   storage_class=storage_class)


def verify_copy(result: PutResult, obj: Object) -> None:
    """The copy must have the catalog's size, MD5 (single-part ETag) and full-object checksum."""
    if result.size != obj.size:
        raise MoveFailed(f"copy has {result.size} bytes, the catalog says {obj.size}")
    etag = obj.etag.strip('"')
    if result.md5_hex and "-" not in etag and result.md5_hex != etag:
        raise MoveFailed(f"copy has MD5 {result.md5_hex}, the catalog's ETag is {etag}")
    if (result.checksum_b64 and obj.checksum_value and result.checksum_algorithm == obj.checksum_algorithm
            and result.checksum_b64 != obj.checksum_value):
        raise MoveFailed(f"copy has {obj.checksum_algorithm} {result.checksum_b64}, the catalog says "
                         f"{obj.checksum_value}")


def _early_deletion(obj: Object, src: Tier, tiers: dict[int, Tier], now: datetime) -> tuple[int, bool]:
    """(nano-USD owed, whether the object leaves early) when it leaves ``src`` now."""
    if not src.min_storage_days:
        return 0, False
    with transaction() as session:
        entered = repository.entered_tier_at(session, obj.id, obj.locator) or obj.created_at
        short_days = src.min_storage_days - (now - entered).total_seconds() / 86400
        if short_days <= 0:
            return 0, False
        price = tier_prices(session, [src]).get(src.id)
    return (to_nano(price.early_deletion(obj.size, short_days)) if price is not None else 0), True


def _transition(move: LifecycleMove, owner: str, limiter: RateLimiter, wait_grace: bool) -> Outcome:
    obj, tiers, bucket_name = _current_object(move)
    src_tier, dst_tier = tiers.get(move.src_tier_id), tiers.get(move.dst_tier_id or 0)
    if obj is None:
        _delete_unreferenced(dst_tier, move.dst_locator, move.object_id)
        return _skip(move, owner, "the object was overwritten or deleted after the sweep queued it")
    if src_tier is None or dst_tier is None:
        raise MoveFailed("the source or target tier no longer exists", retryable=False)
    dst_class = move.dst_class or obj.storage_class
    now = utcnow()
    if src_tier.id == dst_tier.id:  # e.g. GLACIER -> DEEP_ARCHIVE on one archive tier: only the class changes
        with transaction(write=True) as session:
            if not repository.update_move(session, move.id, owner, state="done", switched_at=now, finished_at=now,
                                          lease_owner=None, lease_until=None):
                raise LeaseLost
            if not repository.switch_object(session, obj.id, obj.locator, obj.etag, tier_id=dst_tier.id,
                                            storage_class=dst_class, locator=obj.locator):
                repository.update_move(session, move.id, state="skipped", error="the object changed meanwhile")
                return Outcome(move.id, "skipped")
            repository.add_meter(session, day=_day(now), action="transition", src_tier_id=src_tier.id,
                                 dst_tier_id=dst_tier.id, objects=1, transition_requests=1)
        return Outcome(move.id, "done")

    src, dst = driver_for(src_tier), driver_for(dst_tier)
    # a fresh locator per attempt, recorded before the copy starts: a crash leaves a name fsck can place
    locator = catalog_service.new_locator(bucket_name, obj.key)
    with transaction(write=True) as session:
        if not repository.update_move(session, move.id, owner, dst_locator=locator):
            raise LeaseLost
    _delete_unreferenced(dst_tier, move.dst_locator, obj.id)  # an earlier attempt's copy
    started = time.perf_counter()
    try:
        result = copy_blob(src, dst, move.src_locator, locator, obj, dst_class, limiter)
        verify_copy(result, obj)
    except BlobNotFound:
        dst.delete(locator)
        raise MoveFailed(f"the source copy {move.src_locator} is missing on tier {src_tier.name!r} (see fsck)",
                         retryable=False) from None
    except BaseException:
        dst.delete(locator)
        raise
    seconds = time.perf_counter() - started
    now = utcnow()
    early_nano, early = _early_deletion(obj, src_tier, tiers, now)
    switched = False
    try:
        with transaction(write=True) as session:
            if not repository.update_move(session, move.id, owner, state="switched", switched_at=now,
                                          copy_seconds=seconds, bytes_moved=result.size,
                                          early_deletion_nanousd=early_nano):
                raise LeaseLost
            switched = repository.switch_object(session, obj.id, obj.locator, obj.etag, tier_id=dst_tier.id,
                                                storage_class=dst_class, locator=locator)
            if switched:
                repository.add_meter(session, day=_day(now), action="transition", src_tier_id=src_tier.id,
                                     dst_tier_id=dst_tier.id, objects=1, nbytes=result.size, transition_requests=1,
                                     early_deletion_nanousd=early_nano, early_deletions=int(early))
            else:
                repository.update_move(session, move.id, state="skipped", finished_at=now, lease_owner=None,
                                       lease_until=None, error="the object was overwritten during the copy")
    except BaseException:
        dst.delete(locator)  # the switch did not commit: nothing points at this copy
        raise
    if not switched:
        dst.delete(locator)
        return Outcome(move.id, "skipped")
    move.state, move.switched_at, move.dst_locator = "switched", now, locator
    return _finish(move, owner, wait_grace)


def _expire(move: LifecycleMove, owner: str, wait_grace: bool) -> Outcome:
    obj, tiers, _bucket = _current_object(move)
    if obj is None:
        return _skip(move, owner, "the object was overwritten or deleted after the sweep queued it")
    src_tier = tiers.get(move.src_tier_id)
    now = utcnow()
    early_nano, early = _early_deletion(obj, src_tier, tiers, now) if src_tier is not None else (0, False)
    with transaction(write=True) as session:
        if not repository.update_move(session, move.id, owner, state="switched", switched_at=now,
                                      early_deletion_nanousd=early_nano):
            raise LeaseLost
        if not repository.delete_object(session, obj.id, obj.locator):
            repository.update_move(session, move.id, state="skipped", finished_at=now, lease_owner=None,
                                   lease_until=None, error="the object was overwritten or deleted meanwhile")
            return Outcome(move.id, "skipped")
        catalog_repository.add_usage(session, move.bucket_id, -1, -obj.size)
        repository.add_meter(session, day=_day(now), action="expiration", src_tier_id=move.src_tier_id,
                             dst_tier_id=0, objects=1, nbytes=obj.size, early_deletion_nanousd=early_nano,
                             early_deletions=int(early))
    move.state, move.switched_at = "switched", now
    return _finish(move, owner, wait_grace)


def _abort_upload(move: LifecycleMove, owner: str) -> Outcome:
    now = utcnow()
    with transaction(write=True) as session:
        upload = repository.get_upload(session, move.upload_id or "")
        if upload is None:
            if not repository.update_move(session, move.id, owner, state="skipped", finished_at=now,
                                          lease_owner=None, lease_until=None,
                                          error="the upload was completed or aborted meanwhile"):
                raise LeaseLost
            return Outcome(move.id, "skipped")
        if not repository.update_move(session, move.id, owner, state="switched", switched_at=now):
            raise LeaseLost
        catalog_service.end_upload(session, upload.upload_id)
        repository.add_meter(session, day=_day(now), action="abort_upload", src_tier_id=move.src_tier_id,
                             dst_tier_id=0, objects=1)
        tiers = _tiers(session)
    tier = tiers.get(move.src_tier_id)
    if tier is not None:
        driver_for(tier).abort_multipart(move.src_locator)
    return _done(move, owner)


def _finish(move: LifecycleMove, owner: str, wait_grace: bool) -> Outcome:
    """Delete the old copy once the grace after the switch has passed."""
    assert move.switched_at is not None
    delete_after = move.switched_at + timedelta(seconds=get_settings().lifecycle_delete_grace_s)
    if move.action == "abort_upload":
        with transaction() as session:
            tier = _tiers(session).get(move.src_tier_id)
        if tier is not None:
            driver_for(tier).abort_multipart(move.src_locator)
        return _done(move, owner)
    wait = (delete_after - utcnow()).total_seconds()
    if wait > 0:
        if not wait_grace:
            with transaction(write=True) as session:  # let go: the task comes back, or the sweep hands it out
                if not repository.update_move(session, move.id, owner, lease_owner=None, lease_until=None):
                    raise LeaseLost
            return Outcome(move.id, "deferred", delete_after=delete_after)
        time.sleep(wait)
    with transaction() as session:
        tier = _tiers(session).get(move.src_tier_id)
        obj = repository.get_object(session, move.object_id) if move.object_id is not None else None
        live = obj is not None and obj.locator == move.src_locator
    if tier is not None and not live:
        driver_for(tier).delete(move.src_locator)
    return _done(move, owner)


def _done(move: LifecycleMove, owner: str) -> Outcome:
    with transaction(write=True) as session:
        if not repository.update_move(session, move.id, owner, state="done", finished_at=utcnow(),
                                      lease_owner=None, lease_until=None):
            raise LeaseLost
    return Outcome(move.id, "done")
