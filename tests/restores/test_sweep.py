"""The worker's sweeps against a real offline posix tier: submit all at once, poll only what is pending,
mark ready, complete and notify, flag stuck items, expire copies; claims never overlap. The sweeps and the
tier read one clock the tests move."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select, update

from tests.clocks import WallClock
from tests.restores.conftest import Archive
from tierpilot.catalog.models import Object
from tierpilot.drivers.offline import OfflinePosixDriver
from tierpilot.kit.db import transaction, utcnow
from tierpilot.notifications.models import Notification
from tierpilot.restores import repository, service, sweep
from tierpilot.restores.models import RestoreBatch, RestoreBatchTier, RestoreItem


def _create(archive: Archive, keys: list[str], speed: str = "expedited", days: int = 3, user: str = "member") -> int:
    with transaction(write=True) as s:
        batch = service.create_batch(s, archive.user(user), service.Selection(archive.buckets[user], keys), speed,
                                     days)
        return batch.id


def _items(batch_id: int) -> list[RestoreItem]:
    with transaction() as s:
        rows = list(s.scalars(select(RestoreItem).where(RestoreItem.batch_id == batch_id).order_by(RestoreItem.key)))
        s.expunge_all()
        return rows


def _batch(batch_id: int) -> RestoreBatch:
    with transaction() as s:
        batch = s.get(RestoreBatch, batch_id)
        assert batch is not None
        s.expunge(batch)
        return batch


def _counters(batch_id: int) -> dict[str, int]:
    with transaction() as s:
        return repository.batch_totals(s, [batch_id])[batch_id]


def test_a_batch_is_submitted_at_once_polled_and_completed_with_a_notification(archive: Archive,
                                                                               clock: WallClock) -> None:
    keys = [f"run/{i:03d}.dat" for i in range(40)]
    archive.put(archive.buckets["member"], keys)
    batch_id = _create(archive, keys, speed="expedited")
    assert {i.state for i in _items(batch_id)} == {"pending"}

    first = sweep.poll_due(clock=clock)
    assert first.tier_requests == 40 and first.outcomes == {"accepted": 40} and first.chunks == 1
    items = _items(batch_id)
    assert {i.state for i in items} == {"ongoing"}
    # the offline tier told us when it will finish; the first poll is at that moment (delay 1 s)
    for item in items:
        assert item.requested_at is not None and item.next_poll_at is not None
        assert item.expected_ready_at is not None and item.next_poll_at >= item.expected_ready_at
        assert (item.next_poll_at - item.requested_at).total_seconds() <= 1.0 + 1e-6
    assert _counters(batch_id)["ongoing"] == 40
    with transaction() as s:
        states = s.execute(select(Object.restore_state, Object.restore_speed)).all()
    assert set(states) == {("ongoing", "expedited")}

    clock.advance(seconds=0.999)
    assert sweep.poll_due(clock=clock).tier_requests == 0  # nothing due yet: no tier request at all
    clock.advance(seconds=0.001)
    done = sweep.poll_due(clock=clock)
    assert done.outcomes == {"ready": 40} and done.batches_done == [batch_id] and done.notifications == 1

    batch = _batch(batch_id)
    assert batch.state == "ready" and batch.ready_at is not None and batch.submitted_at is not None
    items = _items(batch_id)
    assert {i.state for i in items} == {"ready"} and all(i.poll_count == 1 for i in items)
    expiry = items[0].expires_at
    assert expiry is not None and (expiry.hour, expiry.minute, expiry.second) == (0, 0, 0)
    assert batch.expires_at == expiry
    with transaction() as s:
        catalog = set(s.execute(select(Object.restore_state, Object.restore_expiry)).all())
        note = s.scalar(select(Notification))
    assert catalog == {("restored", expiry)}
    assert note is not None and note.kind == "restore.ready" and note.user_id == int(archive.users["member"]["id"])
    assert note.payload["objects"] == 40 and note.webhook_state == "none"
    assert _counters(batch_id) == {"objects": 40, "bytes": 4000, "pending": 0, "ongoing": 0, "ready": 40,
                                   "ready_bytes": 4000, "failed": 0, "expired": 0}


def test_each_poll_asks_the_tier_only_about_objects_still_pending(archive: Archive, clock: WallClock) -> None:
    keys = [f"k{i:02d}" for i in range(20)]
    archive.put(archive.buckets["member"], keys)
    batch_id = _create(archive, keys, speed="standard")  # 2 s delay
    sweep.poll_due(clock=clock)
    # half of the objects are asked again at expedited through the tier (a gateway user upgrading them)
    driver = OfflinePosixDriver(_tier_path(archive), restore_delays={"expedited": 0.2, "standard": 2}, clock=clock)
    for item in _items(batch_id)[:10]:
        driver.restore(item.locator, 3, "expedited")
    with transaction(write=True) as s:  # their due time comes now (as a gateway upgrade sets it)
        s.execute(update(RestoreItem).where(RestoreItem.id.in_([i.id for i in _items(batch_id)[:10]]))
                  .values(next_poll_at=clock()))
    clock.advance(seconds=0.3)
    polled = sweep.poll_due(clock=clock)
    assert polled.tier_requests == 10 and polled.outcomes == {"ready": 10}
    clock.advance(seconds=1.7)
    assert sweep.poll_due(clock=clock).outcomes == {"ready": 10}
    assert _batch(batch_id).state == "ready"
    items = _items(batch_id)
    assert sum(i.poll_count for i in items) == 20  # one look per object, none at an object already ready


def _tier_path(archive: Archive) -> str:
    from tierpilot.tiers.models import Tier

    with transaction() as s:
        tier = s.get(Tier, archive.tiers["archive"])
        assert tier is not None
        return str(tier.config["path"])


def test_objects_not_archived_are_left_out_and_an_empty_selection_is_refused(archive: Archive) -> None:
    bucket = archive.buckets["member"]
    archive.put(bucket, ["cold/a", "cold/b"])
    archive.put(bucket, ["cold/hot"], tier="hot", storage_class="STANDARD")
    with transaction() as s:
        preview = service.preview(s, archive.user("member"), service.Selection(bucket, ["cold/a", "nope"], ["cold/"]),
                                  days=2)
    assert (preview.objects, preview.bytes, preview.not_archived, preview.missing_keys) == (2, 200, 1, ["nope"])

    from tierpilot.kit.errors import Invalid

    with pytest.raises(Invalid, match="no archived objects"), transaction(write=True) as s:
        service.create_batch(s, archive.user("member"), service.Selection(bucket, ["cold/hot"]), "bulk", 1)
    with transaction() as s:
        assert s.scalar(select(func.count(RestoreBatch.id))) == 0


def test_concurrent_sweeps_claim_disjoint_items(archive: Archive) -> None:
    keys = [f"c/{i:04d}" for i in range(300)]
    archive.put(archive.buckets["member"], keys, size=10)
    _create(archive, keys)
    now = utcnow()
    claims: dict[str, list[int]] = {}
    start, first_round = threading.Barrier(4), threading.Barrier(4)

    def claim(token: str) -> None:
        start.wait()
        got: list[int] = []
        first = True
        while True:
            with transaction(write=True) as s:
                rows = repository.claim_due(s, ("pending", "ongoing"), now, token, now + timedelta(minutes=5), 37)
            if first:
                # every sweep claims once before any claims again: 4 x 37 < 300, so all four overlap
                first_round.wait()
                first = False
            if not rows:
                break
            got.extend(r.id for r in rows)
        claims[token] = got

    threads = [threading.Thread(target=claim, args=(f"t{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    everything = [i for ids in claims.values() for i in ids]
    assert len(everything) == len(set(everything)) == 300
    assert all(claims[f"t{i}"] for i in range(4))  # they really ran side by side
    with transaction() as s:
        owners = dict(s.execute(select(RestoreItem.id, RestoreItem.claim_token)).all())
    assert all(owners[i] == token for token, ids in claims.items() for i in ids)


def test_outcomes_of_a_sweep_whose_lease_ran_out_are_dropped(archive: Archive) -> None:
    archive.put(archive.buckets["member"], ["x"])
    batch_id = _create(archive, ["x"])
    now = utcnow()
    with transaction(write=True) as s:
        [row] = repository.claim_due(s, ("pending",), now, "dead-sweep", now - timedelta(seconds=1), 10)
    # the lease is over: a second sweep takes the item and finishes the submission
    stats = sweep.poll_due()
    assert stats.outcomes == {"accepted": 1}
    with transaction(write=True) as s:
        sweep._apply(s, "dead-sweep", [sweep.Outcome(row.id, "failed", utcnow(), error="late")],
                     {}, late := sweep.SweepStats(), utcnow())
    assert late.dropped == 1
    assert _items(batch_id)[0].state == "ongoing" and _counters(batch_id)["failed"] == 0


def test_a_restore_without_progress_past_the_tier_maximum_is_flagged_and_retryable(archive: Archive,
                                                                                    clock: WallClock) -> None:
    archive.put(archive.buckets["member"], ["slow/1", "slow/2"])
    batch_id = _create(archive, ["slow/1", "slow/2"], speed="bulk")  # 3 s delay: stuck after 2*3+60 s
    sweep.poll_due(clock=clock)
    late = clock() + timedelta(seconds=67)
    with transaction(write=True) as s:  # the recall is older than the tier's maximum
        s.execute(update(RestoreItem).where(RestoreItem.key == "slow/1")
                  .values(requested_at=late - timedelta(seconds=200), next_poll_at=clock()))
        # and the tier has not finished it: move its recorded completion far away
    driver = OfflinePosixDriver(_tier_path(archive), restore_delays={"bulk": 3}, clock=clock)
    item = next(i for i in _items(batch_id) if i.key == "slow/1")
    _push_ready_at(driver, item.locator, clock() + timedelta(hours=1))
    stats = sweep.poll_due(clock=clock)
    assert stats.outcomes == {"stuck": 1}
    stuck = next(i for i in _items(batch_id) if i.key == "slow/1")
    assert stuck.state == "failed" and stuck.last_error is not None and "no progress after" in stuck.last_error
    clock.advance(seconds=3)
    assert sweep.poll_due(clock=clock).outcomes == {"ready": 1}  # slow/2
    batch = _batch(batch_id)
    assert batch.state == "failed" and batch.error is not None and "1 of 2 objects failed" in batch.error
    with transaction() as s:
        assert s.scalar(select(Notification.kind)) == "restore.failed"

    _push_ready_at(driver, stuck.locator, clock())  # the tier recovers
    with transaction(write=True) as s:
        assert service.retry_failed(s, archive.user("member"), batch_id) == 1
    assert _batch(batch_id).state == "in_progress" and _counters(batch_id)["pending"] == 1
    assert sweep.poll_due(clock=clock).outcomes == {"ready": 1}
    assert _batch(batch_id).state == "ready" and _counters(batch_id)["ready"] == 2


def _push_ready_at(driver: OfflinePosixDriver, locator: str, ready_at: datetime) -> None:
    """Rewrite the tier's own record of when a recall completes (what a slow archive would say)."""
    import json

    _blob, state_path, copy = driver._paths(locator)
    state = json.loads(state_path.read_bytes())
    state["ready_at"] = ready_at.isoformat()
    state_path.write_text(json.dumps(state))
    if ready_at > driver.clock():
        copy.unlink(missing_ok=True)


def test_expired_copies_are_retired_and_the_catalog_updated(archive: Archive, clock: WallClock) -> None:
    keys = ["e/1", "e/2", "e/3"]
    archive.put(archive.buckets["member"], keys)
    batch_id = _create(archive, keys, days=1)
    sweep.poll_due(clock=clock)
    clock.advance(seconds=1)
    sweep.poll_due(clock=clock)
    assert _batch(batch_id).state == "ready"
    items = _items(batch_id)
    expiry = items[0].expires_at
    assert expiry is not None
    assert sweep.expire_due(clock=clock).claimed == 0  # nothing expired yet

    # e/3 was asked again for 5 more days (through the tier), so only e/1 and e/2 expire
    path = _tier_path(archive)
    OfflinePosixDriver(path, clock=clock).restore(items[2].locator, 5, "standard")
    future = expiry + timedelta(seconds=1)
    OfflinePosixDriver(path, clock=lambda: future).restore_status(items[0].locator)  # the tier drops it then
    OfflinePosixDriver(path, clock=lambda: future).restore_status(items[1].locator)
    stats = sweep.expire_due(clock=lambda: future)
    assert stats.outcomes == {"expired": 2, "extended": 1}
    items = _items(batch_id)
    assert [i.state for i in items] == ["expired", "expired", "ready"]
    assert items[2].expires_at is not None and items[2].expires_at > expiry
    with transaction() as s:
        catalog = dict(s.execute(select(Object.key, Object.restore_state)).all())
    assert catalog == {"e/1": None, "e/2": None, "e/3": "restored"}
    assert _batch(batch_id).state == "ready" and _counters(batch_id)["expired"] == 2


def test_counter_rows_match_the_items_after_every_transition(archive: Archive, clock: WallClock) -> None:
    keys = [f"m/{i}" for i in range(12)]
    archive.put(archive.buckets["member"], keys)
    batch_id = _create(archive, keys, speed="bulk")
    sweep.poll_due(clock=clock)
    with transaction(write=True) as s:
        service.upgrade_speed(s, archive.user("member"), batch_id, "expedited")
    sweep.poll_due(clock=clock)
    clock.advance(seconds=1)
    sweep.poll_due(clock=clock)
    with transaction() as s:
        actual = dict(s.execute(select(RestoreItem.state, func.count()).where(RestoreItem.batch_id == batch_id)
                                .group_by(RestoreItem.state)).all())
        row = s.scalar(select(RestoreBatchTier).where(RestoreBatchTier.batch_id == batch_id))
        assert row is not None
        counted = {k: getattr(row, k) for k in ("pending", "ongoing", "ready", "failed", "expired") if getattr(row, k)}
    assert actual == counted == {"ready": 12}
    assert {i.speed for i in _items(batch_id)} == {"expedited"}


def test_the_ready_timeline_is_thinned_in_the_database(archive: Archive) -> None:
    keys = [f"t/{i:02d}" for i in range(45)]
    archive.put(archive.buckets["member"], keys, size=10)
    batch_id = _create(archive, keys)
    start = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
    with transaction(write=True) as s:
        for i, item in enumerate(_items(batch_id)):  # key order: t/00 ready first
            s.execute(update(RestoreItem).where(RestoreItem.id == item.id)
                      .values(ready_at=start + timedelta(seconds=i)))
    with transaction() as s:
        curve = repository.ready_curve(s, batch_id, points=10)
    assert [n for _, n in curve] == [4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 45]
    assert curve[0][0] == start + timedelta(seconds=3) and curve[-1][0] == start + timedelta(seconds=44)
