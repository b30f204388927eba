"""Run queued moves: copy, verify, switch the catalog, delete the old copy. Safe to run twice, or twice at once.

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

Moves run in batches (a task message carries several): the batch shares its claim, switch and close
transactions, while each move keeps its own state, lease and outcome.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from tierpilot.catalog import events as object_events
from tierpilot.catalog import repository as catalog_repository
from tierpilot.catalog import service as catalog_service
from tierpilot.catalog import versions as catalog_versions
from tierpilot.catalog.errors import ObjectLocked
from tierpilot.catalog.models import Object, ObjectVersion
from tierpilot.drivers import registry
from tierpilot.drivers.base import BlobNotFound, NotRestored, PutResult, TierDriver
from tierpilot.drivers.registry import TierLike, TierSpec, driver_for
from tierpilot.drivers.s3 import ADOPTED
from tierpilot.kit.db import CommitUnknown, transaction, utcnow
from tierpilot.kit.limiter import Throttle, shared_throttle
from tierpilot.kit.settings import get_settings
from tierpilot.lifecycle import repository
from tierpilot.lifecycle.dates import midnight
from tierpilot.lifecycle.models import LifecycleMove
from tierpilot.planner.prices import tier_prices
from tierpilot.pricing.engine import to_nano
from tierpilot.pricing.lifecycle import Prices, TierPrice
from tierpilot.tiers import repository as tiers_repository

log = logging.getLogger(__name__)
HOST = socket.gethostname()
_ASSUMED_COPY_BPS = 50e6  # for the lease of an unthrottled copy: a slow disk's rate
MOVE_SCOPE = "lifecycle-moves"  # the one budget every worker's copies share (TIERPILOT_LIFECYCLE_MOVE_RATE_MBPS)


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


def _tier(tier_id: int | None) -> TierSpec | None:
    """A tier from the process's tier directory: no query per move."""
    if not tier_id:
        return None
    try:
        return registry.tiers.get(tier_id)
    except LookupError:
        return None


def _lease_until(now: datetime, nbytes: int, limiter: Throttle) -> datetime:
    """The lease of a batch: long enough to copy all of its bytes (they are copied one after another)."""
    rate = limiter.rate_bps if limiter.limited else _ASSUMED_COPY_BPS
    return now + timedelta(seconds=get_settings().lifecycle_lease_s + nbytes / rate)


@dataclass
class _Claimed:
    """A move as its lease holder read it, with the object version it acts on (None: changed or gone)."""

    move: LifecycleMove
    obj: Object | None
    previous_copy: str | None  # an earlier attempt's copy on the target tier, to remove


# moves of noncurrent versions and delete markers: their ``object_id`` is an ``object_versions`` id
VERSION_ACTIONS = frozenset({"nc_transition", "nc_expiration", "expire_marker"})


def _version_as_object(version: ObjectVersion | None) -> Object | None:
    """A noncurrent version in the shape the copy and the switch read (its id is the version's)."""
    if version is None:
        return None
    obj = catalog_versions.as_object(version)
    obj.id = version.id
    return obj


def _claim(session: Session, move_ids: list[int], owner: str, limiter: Throttle, now: datetime
           ) -> tuple[list[_Claimed], dict[int, Outcome]]:
    """Take the batch's leases and read what its moves need, in the one transaction that records the attempt."""
    out: dict[int, Outcome] = {}
    peeks = {m.id: m for m in repository.get_moves(session, move_ids)}
    open_ids: list[int] = []
    for move_id in move_ids:
        peek = peeks.get(move_id)
        if peek is None:
            out[move_id] = Outcome(move_id, "missing")
        elif peek.state in ("done", "skipped"):
            out[move_id] = Outcome(move_id, peek.state)
        else:
            open_ids.append(move_id)
    holders = {m.lease_owner for m in peeks.values() if m.lease_owner}
    dead = [h for h in holders if owner_is_dead(h)]
    lease = _lease_until(now, sum(peeks[i].size for i in open_ids), limiter)
    taken = repository.claim_moves(session, open_ids, owner, now, lease, dead)
    for move_id in open_ids:
        if move_id not in taken:
            out[move_id] = Outcome(move_id, "failed" if peeks[move_id].state == "failed" else "busy")
    if not taken:
        return [], out
    moves = repository.get_moves(session, sorted(taken))  # read after the claim: the rows as their holder sees them
    objects = catalog_repository.objects_by_id(session, [m.object_id for m in moves if m.object_id is not None
                                                         and m.action not in VERSION_ACTIONS])
    versions = catalog_repository.versions_by_id(session, [m.object_id for m in moves if m.object_id is not None
                                                           and m.action in VERSION_ACTIONS])
    names = catalog_repository.bucket_names(session, list({m.bucket_id for m in moves}))
    previous = {m.id: m.dst_locator for m in moves}
    locators: dict[int, str] = {}
    claims: list[_Claimed] = []
    for move in moves:
        if move.action in VERSION_ACTIONS:
            obj = _version_as_object(versions.get(move.object_id)) if move.object_id is not None else None
        else:
            obj = objects.get(move.object_id) if move.object_id is not None else None
        if obj is not None and (obj.locator != move.src_locator or obj.etag != move.etag):
            obj = None  # overwritten (or moved by someone else) since the sweep: this version is gone
        if (move.action in ("transition", "nc_transition") and move.state != "switched" and obj is not None
                and move.dst_tier_id not in (None, move.src_tier_id)):
            # a fresh locator per attempt, recorded before the copy starts: a crash leaves a name fsck can place
            locators[move.id] = catalog_service.new_locator(names.get(move.bucket_id, ""), obj.key)
            move.dst_locator = locators[move.id]
        claims.append(_Claimed(move, obj, None))
    repository.set_target_locators(session, locators)
    for c in claims:
        before = previous[c.move.id]
        c.previous_copy = before if before != c.move.dst_locator else None
    session.expunge_all()
    return claims, out


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


def _skip(move: LifecycleMove, owner: str, reason: str) -> Outcome:
    now = utcnow()
    with transaction(write=True) as session:
        if not repository.update_move(session, move.id, owner, state="skipped", error=reason, finished_at=now,
                                      lease_owner=None, lease_until=None):
            raise LeaseLost
    return Outcome(move.id, "skipped")


def _delete_unreferenced(tier: TierLike | None, locator: str | None, object_id: int | None) -> None:
    """Delete a copy this move made, unless the catalog points at it (it never deletes live bytes)."""
    if tier is None or not locator:
        return
    with transaction() as session:
        obj = catalog_repository.get_object_by_id(session, object_id) if object_id is not None else None
        live = obj is not None and obj.locator == locator
    if not live:
        driver_for(tier).delete(locator)


def copy_blob(src: TierDriver, dst: TierDriver, src_locator: str, dst_locator: str, obj: Object,
              storage_class: str, limiter: Throttle) -> PutResult:
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


class _Prices:
    """Tier prices read at most once per batch, and only when an object leaves a tier early."""

    def __init__(self) -> None:
        self._prices: Prices | None = None

    def get(self, session: Session, tier: TierLike) -> TierPrice | None:
        if self._prices is None:
            self._prices = tier_prices(session, tiers_repository.list_tiers(session))
        return self._prices.get(tier.id)


def _early_deletion(session: Session, obj: Object, src: TierLike | None, now: datetime, prices: _Prices
                    ) -> tuple[int, bool]:
    """(nano-USD owed, whether the object leaves early) when it leaves ``src`` now."""
    if src is None or not src.min_storage_days:
        return 0, False
    entered = repository.entered_tier_at(session, obj.id, obj.locator) or obj.created_at
    short_days = src.min_storage_days - (now - entered).total_seconds() / 86400
    if short_days <= 0:
        return 0, False
    price = prices.get(session, src)
    return (to_nano(price.early_deletion(obj.size, short_days)) if price is not None else 0), True


@dataclass
class _Copied:
    """A transition ready to switch: its verified copy (``result`` None: a class change on the same tier)."""

    claimed: _Claimed
    src: TierLike
    dst: TierLike
    result: PutResult | None
    seconds: float = 0.0


class _Meter:
    """Metering of one batch, summed per action and tier pair, written in the switch transaction."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, int, int], dict[str, int]] = {}

    def add(self, action: str, src: int, dst: int, **counts: int) -> None:
        row = self.rows.setdefault((action, src, dst), {})
        for k, v in counts.items():
            row[k] = row.get(k, 0) + v

    def write(self, session: Session, day: str) -> None:
        for (action, src, dst), counts in self.rows.items():
            repository.add_meter(session, day=day, action=action, src_tier_id=src, dst_tier_id=dst, **counts)


BATCH_OBJECTS = 32  # moves per batch: small objects share transactions, large ones spread over workers
BATCH_BYTES = 256 * 1024 * 1024


def batches(move_ids: Sequence[int]) -> list[list[int]]:
    """Group moves into batches of at most BATCH_OBJECTS moves and BATCH_BYTES bytes, in id order."""
    sizes: dict[int, int] = {}
    with transaction() as session:
        for start in range(0, len(move_ids), 1000):
            sizes.update(repository.move_sizes(session, move_ids[start:start + 1000]))
    out: list[list[int]] = []
    current: list[int] = []
    total = 0
    for move_id in move_ids:
        size = sizes.get(move_id, 0)
        if current and (len(current) >= BATCH_OBJECTS or total + size > BATCH_BYTES):
            out.append(current)
            current, total = [], 0
        current.append(move_id)
        total += size
    if current:
        out.append(current)
    return out


def run_moves(move_ids: Sequence[int], limiter: Throttle | None = None, wait_grace: bool = False
              ) -> list[Outcome]:
    """Advance a batch of moves as far as each can go now; one outcome per id, in order.

    ``wait_grace``: wait out the grace after the switch and delete the old copies now, instead of
    answering ``deferred`` (the caller comes back after ``Outcome.delete_after``).
    """
    limiter = limiter or shared_throttle(MOVE_SCOPE, get_settings().lifecycle_move_rate_mbps * 1e6)
    owner = worker_identity()
    ids = list(dict.fromkeys(move_ids))
    with transaction(write=True) as session:
        claims, out = _claim(session, ids, owner, limiter, utcnow())
    switched: list[LifecycleMove] = []
    copies: list[_Copied] = []
    others: list[_Claimed] = []
    for claimed in claims:
        move = claimed.move
        try:
            if move.state == "switched":
                switched.append(move)
            elif move.action in ("transition", "nc_transition"):
                copied = _copy(claimed, owner, limiter)
                if isinstance(copied, Outcome):
                    out[move.id] = copied
                else:
                    copies.append(copied)
            elif move.action in ("expiration", "nc_expiration", "expire_marker", "abort_upload"):
                if move.action != "abort_upload" and claimed.obj is None:
                    out[move.id] = _skip(move, owner, "the object was overwritten or deleted after the sweep "
                                                      "queued it")
                else:
                    others.append(claimed)
            else:
                raise MoveFailed(f"unknown action {move.action!r}", retryable=False)
        except Exception as exc:
            out[move.id] = _failure(move, owner, exc)
    if copies or others:
        try:
            switched.extend(_switch(copies, others, owner, out))
        except Exception as exc:  # nothing of the batch switched: drop the copies, each move tries again
            # a switch whose COMMIT got no answer may have happened: its copies stay (the catalog may point at
            # them; the moves' next attempt finds them switched, or fsck finds the copies unreferenced)
            for cp in copies if not isinstance(exc, CommitUnknown) else ():
                if cp.result is not None and cp.claimed.move.dst_locator:
                    driver_for(cp.dst).delete(cp.claimed.move.dst_locator)
            for move in [cp.claimed.move for cp in copies] + [c.move for c in others]:
                out[move.id] = _failure(move, owner, exc)
    out.update(_finish(switched, owner, wait_grace))
    return [out[i] for i in ids]


def _failure(move: LifecycleMove, owner: str, exc: BaseException) -> Outcome:
    if isinstance(exc, LeaseLost):
        return Outcome(move.id, "lost")
    if isinstance(exc, MoveFailed):
        return _record_failure(move, owner, str(exc), exc.retryable)
    if isinstance(exc, NotRestored):
        return _record_failure(move, owner, "the source copy is archived on an offline tier: restore it first",
                               retryable=False)
    log.error("lifecycle move %s failed", move.id, exc_info=exc)
    return _record_failure(move, owner, f"{type(exc).__name__}: {exc}", retryable=True)


def _copy(claimed: _Claimed, owner: str, limiter: Throttle) -> _Copied | Outcome:
    """Copy and verify a transition's object onto the target tier (nothing recorded yet)."""
    move, obj = claimed.move, claimed.obj
    src_tier, dst_tier = _tier(move.src_tier_id), _tier(move.dst_tier_id)
    if claimed.previous_copy:
        _delete_unreferenced(dst_tier, claimed.previous_copy, move.object_id)  # an earlier attempt's copy
    if obj is None:
        _delete_unreferenced(dst_tier, move.dst_locator, move.object_id)
        return _skip(move, owner, "the object was overwritten or deleted after the sweep queued it")
    if src_tier is None or dst_tier is None:
        raise MoveFailed("the source or target tier no longer exists", retryable=False)
    if src_tier.id == dst_tier.id:  # e.g. GLACIER -> DEEP_ARCHIVE on one archive tier: only the class changes
        return _Copied(claimed, src_tier, dst_tier, None)
    locator = move.dst_locator
    assert locator is not None
    src, dst = driver_for(src_tier), driver_for(dst_tier)
    started = time.perf_counter()
    try:
        result = copy_blob(src, dst, move.src_locator, locator, obj, move.dst_class or obj.storage_class, limiter)
        verify_copy(result, obj)
    except BlobNotFound:
        dst.delete(locator)
        raise MoveFailed(f"the source copy {move.src_locator} is missing on tier {src_tier.name!r} (see fsck)",
                         retryable=False) from None
    except BaseException:
        dst.delete(locator)
        raise
    return _Copied(claimed, src_tier, dst_tier, result, time.perf_counter() - started)


def _switch(copies: list[_Copied], others: list[_Claimed], owner: str, out: dict[int, Outcome]
            ) -> list[LifecycleMove]:
    """One transaction: point objects at their verified copies, delete expired objects' rows, end
    abandoned uploads; each move only while this worker holds its lease. Returns the switched moves."""
    now = utcnow()
    meter = _Meter()
    prices = _Prices()
    switched: list[LifecycleMove] = []
    unused: list[tuple[TierLike, str]] = []  # copies nothing points at once this commits
    with transaction(write=True) as session:
        for cp in copies:
            move, obj = cp.claimed.move, cp.claimed.obj
            assert obj is not None
            dst_class = move.dst_class or obj.storage_class
            # a noncurrent version keeps its lock columns wherever it moves, as the current row does
            switch = (catalog_repository.switch_version if move.action == "nc_transition"
                      else catalog_repository.switch_object)
            if cp.result is None:
                if not repository.update_move(session, move.id, owner, state="done", switched_at=now,
                                              finished_at=now, lease_owner=None, lease_until=None):
                    out[move.id] = Outcome(move.id, "lost")
                elif switch(session, obj.id, obj.locator, obj.etag, tier_id=cp.dst.id, storage_class=dst_class,
                            locator=obj.locator):
                    _transitioned(session, obj, dst_class)
                    meter.add("transition", cp.src.id, cp.dst.id, objects=1, transition_requests=1)
                    out[move.id] = Outcome(move.id, "done")
                else:
                    repository.update_move(session, move.id, state="skipped", error="the object changed meanwhile")
                    out[move.id] = Outcome(move.id, "skipped")
                continue
            assert move.dst_locator is not None
            early_nano, early = _early_deletion(session, obj, cp.src, now, prices)
            if not repository.update_move(session, move.id, owner, state="switched", switched_at=now,
                                          copy_seconds=cp.seconds, bytes_moved=cp.result.size,
                                          early_deletion_nanousd=early_nano):
                out[move.id] = Outcome(move.id, "lost")
                unused.append((cp.dst, move.dst_locator))
            elif switch(session, obj.id, obj.locator, obj.etag, tier_id=cp.dst.id, storage_class=dst_class,
                        locator=move.dst_locator):
                _transitioned(session, obj, dst_class)
                meter.add("transition", cp.src.id, cp.dst.id, objects=1, nbytes=cp.result.size,
                          transition_requests=1, early_deletion_nanousd=early_nano, early_deletions=int(early))
                move.state, move.switched_at = "switched", now
                switched.append(move)
            else:
                repository.update_move(session, move.id, state="skipped", finished_at=now, lease_owner=None,
                                       lease_until=None, error="the object was overwritten during the copy")
                out[move.id] = Outcome(move.id, "skipped")
                unused.append((cp.dst, move.dst_locator))
        for claimed in others:
            move = claimed.move
            if move.action == "expire_marker":
                _expire_marker(session, move, owner, now, out)
            elif move.action == "expiration" and _versioned(session, move.bucket_id):
                _expire_versioned(session, claimed, owner, now, switched, out)
            elif move.action in ("expiration", "nc_expiration"):
                _expire(session, claimed, owner, now, prices, meter, switched, out)
            else:
                _end_upload(session, move, owner, now, meter, switched, out)
        meter.write(session, _day(now))
    for tier, locator in unused:
        driver_for(tier).delete(locator)
    return switched


def _transitioned(session: Session, obj: Object, storage_class: str) -> None:
    object_events.emit(session, [object_events.Change(
        obj.bucket_id, obj.key, "LifecycleTransition", obj.size, obj.etag, obj.version_id,
        {"lifecycleEventData": {"transitionEventData": {"destinationStorageClass": storage_class}}})])


def _expire(session: Session, claimed: _Claimed, owner: str, now: datetime, prices: _Prices, meter: _Meter,
            switched: list[LifecycleMove], out: dict[int, Outcome]) -> None:
    move, obj = claimed.move, claimed.obj
    assert obj is not None
    early_nano, early = _early_deletion(session, obj, _tier(move.src_tier_id), now, prices)
    if not repository.update_move(session, move.id, owner, state="switched", switched_at=now,
                                  early_deletion_nanousd=early_nano):
        out[move.id] = Outcome(move.id, "lost")
    elif (catalog_repository.delete_unlocked_version(session, obj.id, obj.locator) if move.action == "nc_expiration"
          else catalog_repository.delete_object(session, obj.id, obj.locator)):
        catalog_repository.add_usage(session, move.bucket_id, -1, -obj.size)
        object_events.emit(session, [object_events.Change(move.bucket_id, obj.key, "LifecycleExpiration:Delete",
                                                          version_id=obj.version_id)])
        meter.add("expiration", move.src_tier_id, 0, objects=1, nbytes=obj.size, early_deletion_nanousd=early_nano,
                  early_deletions=int(early))
        move.state, move.switched_at = "switched", now
        switched.append(move)
    else:
        repository.update_move(session, move.id, state="skipped", finished_at=now, lease_owner=None,
                               lease_until=None, error="the object was overwritten or deleted meanwhile")
        out[move.id] = Outcome(move.id, "skipped")


def _versioned(session: Session, bucket_id: int) -> bool:
    settings = catalog_repository.bucket_versioning(session, bucket_id)
    return settings is not None and settings[0] is not None


def _close(session: Session, move: LifecycleMove, owner: str, now: datetime, out: dict[int, Outcome], done: bool,
           why: str) -> None:
    """End a move that leaves no old copy to delete: done, or skipped with ``why``."""
    state = "done" if done else "skipped"
    if repository.update_move(session, move.id, owner, state=state, switched_at=now if done else None,
                              finished_at=now, lease_owner=None, lease_until=None, error=None if done else why):
        out[move.id] = Outcome(move.id, state)
    else:
        out[move.id] = Outcome(move.id, "lost")


def _expire_versioned(session: Session, claimed: _Claimed, owner: str, now: datetime, switched: list[LifecycleMove],
                      out: dict[int, Outcome]) -> None:
    """Expiring the current version of a versioned bucket is S3's DeleteObject: a delete marker, the version
    kept as noncurrent (its bytes stay, locked or not). Only a suspended bucket's "null" version goes."""
    move, obj = claimed.move, claimed.obj
    assert obj is not None
    current = catalog_repository.get_object(session, move.bucket_id, move.key, for_update=True)
    if current is None or current.id != obj.id or current.locator != obj.locator:
        _close(session, move, owner, now, out, False, "the object was overwritten or deleted meanwhile")
        return
    try:
        with session.begin_nested():
            deleted = catalog_versions.delete_key(session, move.bucket_id, move.key, None, now=now,
                                                  event_family="LifecycleExpiration")
    except ObjectLocked:
        _close(session, move, owner, now, out, False, "object lock protects the version")
        return
    if any(b.locator == move.src_locator for b in deleted.blobs):  # the null version went: its bytes go too
        if repository.update_move(session, move.id, owner, state="switched", switched_at=now):
            move.state, move.switched_at = "switched", now
            switched.append(move)
        else:
            out[move.id] = Outcome(move.id, "lost")
        return
    _close(session, move, owner, now, out, True, "")


def _expire_marker(session: Session, move: LifecycleMove, owner: str, now: datetime, out: dict[int, Outcome]) -> None:
    """ExpiredObjectDeleteMarker: a delete marker that is all that is left of its key goes."""
    assert move.object_id is not None
    gone = catalog_repository.delete_lone_marker(session, move.bucket_id, move.object_id)
    if gone:
        object_events.emit(session, [object_events.Change(move.bucket_id, move.key, "LifecycleExpiration:Delete")])
    _close(session, move, owner, now, out, gone, "the key has versions again")


def _end_upload(session: Session, move: LifecycleMove, owner: str, now: datetime, meter: _Meter,
                switched: list[LifecycleMove], out: dict[int, Outcome]) -> None:
    upload = catalog_repository.get_upload(session, move.upload_id or "")
    if upload is None:
        if repository.update_move(session, move.id, owner, state="skipped", finished_at=now, lease_owner=None,
                                  lease_until=None, error="the upload was completed or aborted meanwhile"):
            out[move.id] = Outcome(move.id, "skipped")
        else:
            out[move.id] = Outcome(move.id, "lost")
    elif not repository.update_move(session, move.id, owner, state="switched", switched_at=now):
        out[move.id] = Outcome(move.id, "lost")
    else:
        catalog_service.end_upload(session, upload.upload_id)
        meter.add("abort_upload", move.src_tier_id, 0, objects=1)
        move.state, move.switched_at = "switched", now
        switched.append(move)


def _adopted_original(move: LifecycleMove) -> bool:
    """A transition's source is an adopted object in its remote bucket (``tiers adopt``): the bucket is its
    owner's, listed in place, so the original stays there (an expiration, like a DELETE, still removes it)."""
    return move.action == "transition" and move.src_locator.startswith(ADOPTED)


def _finish(moves: list[LifecycleMove], owner: str, wait_grace: bool) -> dict[int, Outcome]:
    """Delete the old copies once the grace after their switch has passed, then close the moves.

    A move that cannot delete now (tier unreachable) stays ``switched`` with its error; the sweep hands it
    out again. A crash between the delete and the close just repeats the (idempotent) delete.
    """
    out: dict[int, Outcome] = {}
    if not moves:
        return out
    grace = timedelta(seconds=get_settings().lifecycle_delete_grace_s)

    def delete_after(m: LifecycleMove) -> datetime:
        assert m.switched_at is not None
        return m.switched_at if m.action == "abort_upload" else m.switched_at + grace

    now = utcnow()
    waiting = [m for m in moves if delete_after(m) > now]
    if waiting and not wait_grace:
        with transaction(write=True) as session:  # let go: the task comes back later, or the sweep hands it out
            for m in waiting:
                released = repository.update_move(session, m.id, owner, lease_owner=None, lease_until=None)
                out[m.id] = Outcome(m.id, "deferred", delete_after=delete_after(m)) if released else Outcome(
                    m.id, "lost")
        moves = [m for m in moves if m.id not in out]
    elif waiting:
        time.sleep(max(0.0, (max(delete_after(m) for m in waiting) - utcnow()).total_seconds()))
    with transaction() as session:
        current = catalog_repository.object_locators(session, [m.object_id for m in moves if m.object_id is not None
                                                               and m.action not in VERSION_ACTIONS])
        kept = catalog_repository.version_locators(session, [m.object_id for m in moves if m.object_id is not None
                                                             and m.action in VERSION_ACTIONS])
    live = {m.id for m in moves if m.object_id is not None
            and (kept if m.action in VERSION_ACTIONS else current).get(m.object_id) == m.src_locator}
    closed: list[LifecycleMove] = []
    for m in moves:
        tier = _tier(m.src_tier_id)
        try:
            if tier is not None and m.action == "abort_upload":
                driver_for(tier).abort_multipart(m.src_locator)
            elif tier is not None and m.id not in live and not _adopted_original(m):
                driver_for(tier).delete(m.src_locator)  # never bytes the catalog points at
            closed.append(m)
        except Exception as exc:
            log.warning("lifecycle move %s: could not delete %s yet: %s", m.id, m.src_locator, exc)
            with transaction(write=True) as session:
                repository.update_move(session, m.id, owner, lease_owner=None, lease_until=None,
                                       error=f"deleting the old copy: {type(exc).__name__}: {exc}"[:2000])
            out[m.id] = Outcome(m.id, "retry", error=str(exc))
    if closed:
        with transaction(write=True) as session:
            done = repository.close_moves(session, [m.id for m in closed], owner, utcnow())
        for m in closed:
            out[m.id] = Outcome(m.id, "done" if m.id in done else "lost")
    return out
