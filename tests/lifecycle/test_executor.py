"""Sweeps and moves on a simulated clock: objects are aged by rewriting their creation time, never by sleeping."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from tests.clocks import Ticks
from tests.lifecycle.conftest import World, age, placement, put, read, set_rules
from tierpilot.catalog.models import Bucket, MultipartUpload, Object
from tierpilot.kit.db import transaction, utcnow
from tierpilot.kit.limiter import THROTTLE_BURST, Throttle
from tierpilot.lifecycle import due, repository
from tierpilot.lifecycle.dates import midnight
from tierpilot.lifecycle.executor import run_moves
from tierpilot.lifecycle.fsck import fsck
from tierpilot.lifecycle.models import LifecycleMeter, LifecycleMove
from tierpilot.lifecycle.runner import run_now

BIG = b"0123456789abcdef" * 16384  # 256 KiB: over S3's 128 KB transition minimum
CHAIN = [{"id": "chain", "filter": {"prefix": "raw/"},
          "transitions": [{"days": 30, "storage_class": "STANDARD_IA"}, {"days": 120, "storage_class": "GLACIER"}],
          "expiration": {"days": 400}}]


def _moves(world: World) -> list[LifecycleMove]:
    with transaction() as s:
        rows = list(s.scalars(select(LifecycleMove).where(LifecycleMove.bucket_id == world.bucket_id)
                              .order_by(LifecycleMove.id)))
        for r in rows:
            s.expunge(r)
    return rows


def _assert_consistent(world: World) -> None:
    report = fsck(min_age_s=0)
    assert report.clean and not report.findings, [f.line() for f in report.findings]


def test_transition_happens_on_its_day_and_not_before(world: World) -> None:
    put(world, "raw/a", BIG)
    set_rules(world, CHAIN)
    today = midnight(utcnow())
    # due at creation + 30 days rounded up to midnight: one microsecond later is tomorrow's work
    age(world, created_at=today - timedelta(days=30) + timedelta(microseconds=1))
    assert run_now(world.bucket_id).sweep.queued == {}
    assert placement(world)["raw/a"] == ("hot", "STANDARD")
    age(world, created_at=today - timedelta(days=30))
    summary = run_now(world.bucket_id)
    assert summary.by_action == {"transition": 1}
    assert placement(world)["raw/a"] == ("infrequent", "STANDARD_IA")
    assert read(world, "raw/a") == BIG
    _assert_consistent(world)


def test_a_chain_of_rules_runs_day_by_day(world: World) -> None:
    put(world, "raw/a", BIG)
    put(world, "other/b", BIG)
    set_rules(world, CHAIN)
    created = utcnow() - timedelta(days=1)
    age(world, created_at=created)
    seen: dict[int, tuple[str, str] | None] = {}
    for day in (29, 30, 119, 120, 399, 400):
        # the sweep's clock moves instead of the objects: both are the same simulation
        run_now(world.bucket_id, now=created + timedelta(days=day) + timedelta(hours=23, minutes=59))
        seen[day] = placement(world).get("raw/a")
        assert placement(world)["other/b"] == ("hot", "STANDARD")
    assert seen == {29: ("hot", "STANDARD"), 30: ("infrequent", "STANDARD_IA"), 119: ("infrequent", "STANDARD_IA"),
                    120: ("archive", "GLACIER"), 399: ("archive", "GLACIER"), 400: None}
    _assert_consistent(world)


def test_a_date_in_the_past_applies_to_every_matching_object_at_the_next_sweep(world: World) -> None:
    put(world, "raw/old", BIG)
    put(world, "raw/new", BIG)
    age(world, ["raw/old"], days=2000)
    set_rules(world, [{"id": "past", "filter": {"prefix": "raw/"},
                       "transitions": [{"date": "2020-01-01T00:00:00Z", "storage_class": "GLACIER"}]},
                      {"id": "future", "filter": {"prefix": "raw/"},
                       "expiration": {"date": (midnight(utcnow()) + timedelta(days=2)).isoformat()}}])
    summary = run_now(world.bucket_id)
    assert summary.by_action == {"transition": 2}
    assert placement(world) == {"raw/old": ("archive", "GLACIER"), "raw/new": ("archive", "GLACIER")}
    # an object written after the date still transitions, at the sweep after it arrives
    put(world, "raw/later", BIG)
    run_now(world.bucket_id)
    assert placement(world)["raw/later"] == ("archive", "GLACIER")


def test_expiration_removes_object_bytes_and_bucket_totals(world: World) -> None:
    put(world, "tmp/a", b"a" * 1000)
    put(world, "keep/b", b"b" * 1000)
    set_rules(world, [{"id": "tmp", "filter": {"prefix": "tmp/"}, "expiration": {"days": 7}}])
    age(world, days=6)
    assert run_now(world.bucket_id).by_action == {}
    age(world, days=8)
    assert run_now(world.bucket_id).by_action == {"expiration": 1}
    assert set(placement(world)) == {"keep/b"}
    with transaction() as s:
        bucket = s.get(Bucket, world.bucket_id)
        assert bucket is not None and (bucket.object_count, bucket.used_bytes) == (1, 1000)
    _assert_consistent(world)


def test_objects_under_128k_stay_unless_the_configuration_or_a_size_filter_says_otherwise(world: World) -> None:
    put(world, "s/small", b"x" * 1000)
    put(world, "s/big", BIG)
    put(world, "g/small", b"y" * 1000)
    age(world, days=100)
    rules = [{"id": "ia", "filter": {"prefix": "s/"}, "transitions": [{"days": 30, "storage_class": "STANDARD_IA"}]},
             {"id": "glacier", "filter": {"prefix": "g/"}, "transitions": [{"days": 30, "storage_class": "GLACIER"}]}]
    set_rules(world, rules)
    run_now(world.bucket_id)
    assert placement(world) == {"s/small": ("hot", "STANDARD"), "s/big": ("infrequent", "STANDARD_IA"),
                                "g/small": ("hot", "STANDARD")}
    set_rules(world, rules, min_size="varies_by_storage_class")
    run_now(world.bucket_id)
    assert placement(world)["g/small"] == ("archive", "GLACIER")
    assert placement(world)["s/small"] == ("hot", "STANDARD")
    # a size filter takes precedence over the default
    set_rules(world, [{"id": "tiny", "filter": {"object_size_less_than": 2000},
                       "transitions": [{"days": 30, "storage_class": "STANDARD_IA"}]}])
    run_now(world.bucket_id)
    assert placement(world)["s/small"] == ("infrequent", "STANDARD_IA")


def test_tag_filters_and_overlapping_rules_resolve_as_s3(world: World) -> None:
    put(world, "a", BIG, tags={"kind": "log", "team": "b2"})
    put(world, "b", BIG, tags={"kind": "log"})
    put(world, "c", BIG, tags={"kind": "raw"})
    put(world, "d", BIG)
    age(world, days=200)
    set_rules(world, [
        {"id": "logs-ia", "filter": {"tag": {"key": "kind", "value": "log"}},
         "transitions": [{"days": 30, "storage_class": "STANDARD_IA"}]},
        {"id": "logs-glacier", "filter": {"and": {"prefix": "", "tags": [{"key": "kind", "value": "log"},
                                                                         {"key": "team", "value": "b2"}]}},
         "transitions": [{"days": 100, "storage_class": "GLACIER"}]},
        {"id": "raw-gone", "filter": {"tag": {"key": "kind", "value": "raw"}}, "expiration": {"days": 150}},
        {"id": "raw-ia", "filter": {"tag": {"key": "kind", "value": "raw"}},
         "transitions": [{"days": 30, "storage_class": "STANDARD_IA"}]},
    ])
    run_now(world.bucket_id)
    # the coldest due transition wins; expiration wins over any transition
    assert placement(world) == {"a": ("archive", "GLACIER"), "b": ("infrequent", "STANDARD_IA"),
                                "d": ("hot", "STANDARD")}


def test_disabled_rules_do_nothing(world: World) -> None:
    put(world, "x", BIG)
    age(world, days=100)
    set_rules(world, [{"id": "off", "status": "Disabled", "filter": {}, "expiration": {"days": 1}}])
    assert run_now(world.bucket_id).sweep.queued == {}
    assert "x" in placement(world)


def test_sweeps_queue_each_object_once_however_often_they_run(world: World) -> None:
    for i in range(20):
        put(world, f"raw/{i:02d}", BIG)
    age(world, days=31)
    set_rules(world, CHAIN)
    results: list[due.SweepResult] = []
    threads = [threading.Thread(target=lambda: results.append(due.sweep(bucket_id=world.bucket_id)))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(len(r.new_move_ids) for r in results) == 20
    assert len(_moves(world)) == 20
    assert due.sweep(bucket_id=world.bucket_id).new_move_ids == []


def test_a_move_delivered_twice_or_run_by_two_workers_at_once_moves_once(world: World) -> None:
    for i in range(8):
        put(world, f"raw/{i}", BIG)
    age(world, days=31)
    set_rules(world, CHAIN)
    ids = due.sweep(bucket_id=world.bucket_id).new_move_ids
    limiter = Throttle(0)
    barrier = threading.Barrier(3)
    outcomes: list[str] = []

    def worker() -> None:
        barrier.wait()
        for move_id in ids:
            outcomes.append(run_moves([move_id], limiter=limiter, wait_grace=True)[0].state)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(m.state == "done" for m in _moves(world))
    assert outcomes.count("busy") + outcomes.count("done") == len(outcomes)
    for move_id in ids:  # delivered once more, much later
        assert run_moves([move_id], limiter=limiter)[0].state == "done"
    assert {p for p in placement(world).values()} == {("infrequent", "STANDARD_IA")}
    with transaction() as s:
        meter = s.scalars(select(LifecycleMeter).where(LifecycleMeter.action == "transition")).one()
        assert (meter.objects, meter.bytes, meter.transition_requests) == (8, 8 * len(BIG), 8)
    for i in range(8):
        assert read(world, f"raw/{i}") == BIG
    _assert_consistent(world)


def test_an_overwrite_during_the_copy_wins_and_the_copy_is_dropped(world: World) -> None:
    payload = b"z" * (4 * 1024 * 1024)
    put(world, "raw/hot", payload)
    age(world, days=31)
    set_rules(world, CHAIN)
    [move_id] = due.sweep(bucket_id=world.bucket_id).new_move_ids
    ticks, copying, overwritten = Ticks(), threading.Event(), threading.Event()

    def paused(seconds: float) -> None:
        """The throttle's first wait: the copy has begun; it goes on once the object is overwritten."""
        copying.set()
        assert overwritten.wait(30)
        ticks.sleep(seconds)

    slow = Throttle(2e6, clock=ticks, sleep=paused)  # waits after the first chunk of the 4 MiB copy
    result: list[str] = []
    mover = threading.Thread(target=lambda: result.append(run_moves([move_id], limiter=slow, wait_grace=True)[0].state))
    mover.start()
    assert copying.wait(30)
    put(world, "raw/hot", b"new version")
    overwritten.set()
    mover.join()
    assert result == ["skipped"]
    assert placement(world)["raw/hot"] == ("hot", "STANDARD")
    assert read(world, "raw/hot") == b"new version"
    _assert_consistent(world)


class _Lookups:
    """Readers between looking an object up and having read it. An old copy is deleted only once no reader is
    inside and one more read finished since the delete was asked for: what the delete grace gives readers in
    production, kept by events here (a loaded machine can stall a reader past any wall-clock grace)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._inside = 0
        self._deleters = 0
        self.reads = 0

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: self._deleters == 0)
            self._inside += 1
        try:
            yield
        finally:
            with self._cond:
                self._inside -= 1
                self.reads += 1
                self._cond.notify_all()

    @contextlib.contextmanager
    def deleting(self) -> Iterator[None]:
        with self._cond:
            asked = self.reads
            assert self._cond.wait_for(lambda: self.reads > asked, timeout=60), "no read between switch and delete"
            self._deleters += 1
            assert self._cond.wait_for(lambda: self._inside == 0, timeout=60)
        try:
            yield
        finally:
            with self._cond:
                self._deleters -= 1
                self._cond.notify_all()


def test_reads_keep_working_while_objects_move(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    from tierpilot.drivers.posix import PosixDriver

    keys = [f"raw/{i:02d}" for i in range(30)]
    for k in keys:
        put(world, k, BIG)
    age(world, days=200)
    set_rules(world, CHAIN)
    lookups, deleted = _Lookups(), []
    original_delete = PosixDriver.delete

    def delete_after_lookups(driver: PosixDriver, locator: str) -> None:
        with lookups.deleting():
            original_delete(driver, locator)
            deleted.append(locator)

    monkeypatch.setattr(PosixDriver, "delete", delete_after_lookups)
    stop = threading.Event()
    errors: list[str] = []

    def reader() -> None:
        from tierpilot.catalog.errors import InvalidObjectState

        while not stop.is_set():
            for k in keys:
                with lookups.reading():
                    try:
                        if read(world, k) != BIG:
                            errors.append(f"{k}: wrong bytes")
                    except InvalidObjectState:
                        pass  # archived now: a restore is needed, as in S3 (GLACIER), not a failure
                    except Exception as exc:
                        errors.append(f"{k}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        run_now(world.bucket_id, now=utcnow() - timedelta(days=80))  # -> STANDARD_IA
        run_now(world.bucket_id)  # -> GLACIER
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors, errors[:5]
    assert len(deleted) == 2 * len(keys)  # each old copy went while readers kept reading (one read at least)
    assert set(placement(world).values()) == {("archive", "GLACIER")}
    _assert_consistent(world)


def test_early_deletion_is_charged_and_metered(world: World) -> None:
    put(world, "ia/x", BIG, storage_class="STANDARD_IA")
    age(world, days=10)
    set_rules(world, [{"id": "gone", "filter": {"prefix": "ia/"}, "expiration": {"days": 5}}])
    run_now(world.bucket_id)
    [move] = _moves(world)
    assert move.action == "expiration" and move.state == "done"
    # 20 of IA's 30 minimum days unpaid: 256 KiB at 0.0125 $/GiB-month for 20/30.42 of a month
    expected = len(BIG) / 2**30 * 0.0125 * 20 / (365 / 12)
    assert move.early_deletion_nanousd / 1e9 == pytest.approx(expected, rel=0.01)
    with transaction() as s:
        meter = s.scalars(select(LifecycleMeter).where(LifecycleMeter.action == "expiration")).one()
        assert (meter.early_deletions, meter.early_deletion_nanousd) == (1, move.early_deletion_nanousd)
        assert meter.src_tier_id == world.tiers["infrequent"]


def test_a_failed_move_is_recorded_retried_and_then_done(world: World) -> None:
    put(world, "raw/a", BIG)
    age(world, days=31)
    set_rules(world, CHAIN)
    # the target tier's directory cannot be written: its path is taken by a file
    from tierpilot.drivers.posix import PosixDriver

    target = PosixDriver(world.dirs["infrequent"]).root
    blobs = target / "blobs"
    moved = target / "blobs.away"
    blobs.rename(moved)
    blobs.write_bytes(b"not a directory")
    summary = run_now(world.bucket_id)
    assert summary.outcomes == {"retry": 1}
    [move] = _moves(world)
    assert move.state == "failed" and move.error and move.next_attempt_at is not None
    assert placement(world)["raw/a"] == ("hot", "STANDARD")
    blobs.unlink()
    moved.rename(blobs)
    assert run_now(world.bucket_id).by_action == {}  # not due for another try yet
    with transaction(write=True) as s:
        s.execute(update(LifecycleMove).values(next_attempt_at=utcnow() - timedelta(seconds=1)))
    assert run_now(world.bucket_id).by_action == {"transition": 1}
    [move] = _moves(world)
    assert move.state == "done" and move.attempts == 2
    assert read(world, "raw/a") == BIG
    _assert_consistent(world)


def test_a_missing_source_fails_for_good_and_fsck_reports_it(world: World) -> None:
    put(world, "raw/a", BIG)
    age(world, days=31)
    set_rules(world, CHAIN)
    with transaction() as s:
        obj = s.scalars(select(Object).where(Object.bucket_id == world.bucket_id)).one()
        locator = obj.locator
    from tierpilot.drivers.posix import PosixDriver

    PosixDriver(world.dirs["hot"]).delete(locator)
    assert run_now(world.bucket_id).outcomes == {"failed": 1}
    [move] = _moves(world)
    assert move.next_attempt_at is None and "missing" in (move.error or "")
    report = fsck(min_age_s=0)
    assert [f.kind for f in report.findings] == ["missing"]
    assert not report.clean


def test_move_throughput_is_bounded_by_the_move_rate(world: World) -> None:
    payload = b"r" * (2 * 1024 * 1024)
    for i in range(3):
        put(world, f"raw/{i}", payload)
    age(world, days=31)
    set_rules(world, CHAIN)
    ticks = Ticks()
    run_now(world.bucket_id, limiter=Throttle(10e6, clock=ticks, sleep=ticks.sleep), workers=3)
    # 6.3 MB at 10 MB/s on the throttle's clock, less its burst allowance
    assert ticks.now >= (6 * 1024 * 1024 - THROTTLE_BURST.class_s * 10e6) / 10e6
    assert set(placement(world).values()) == {("infrequent", "STANDARD_IA")}


def test_incomplete_multipart_uploads_are_aborted_after_their_days(world: World) -> None:
    from tierpilot.catalog import service as catalog_service
    from tierpilot.catalog import store

    with transaction(write=True) as s:
        bucket = s.get(Bucket, world.bucket_id)
        assert bucket is not None
        upload = catalog_service.create_upload(s, bucket, "big/file", owner_id=world.owner_id,
                                               tier_id=world.tiers["hot"], storage_class="STANDARD",
                                               content_type=None, user_metadata={}, headers={},
                                               checksum_algorithm=None)
        s.expunge(upload)
    store.upload_part(upload, 1, iter([b"p" * 1000]))
    set_rules(world, [{"id": "mpu", "filter": {"prefix": "big/"}, "abort_incomplete_multipart_upload_days": 3}])
    assert run_now(world.bucket_id).by_action == {}
    with transaction(write=True) as s:
        s.execute(update(MultipartUpload).values(initiated_at=utcnow() - timedelta(days=4)))
    assert run_now(world.bucket_id).by_action == {"abort_upload": 1}
    with transaction() as s:
        assert s.scalar(select(MultipartUpload.id)) is None
    assert not list(store.driver(world.tiers["hot"]).list_uploads())  # type: ignore[attr-defined]


def test_fsck_finds_and_repairs_orphans_and_repoints_at_an_intact_copy(world: World) -> None:
    from tierpilot.drivers.posix import PosixDriver

    put(world, "raw/a", BIG)
    hot = PosixDriver(world.dirs["hot"])
    hot.put(f"{world.bucket}/stray~0123", iter([b"orphan"]))
    assert [f.kind for f in fsck(min_age_s=0).findings] == ["orphan"]
    assert fsck(min_age_s=3600).clean  # a young orphan is a write in flight
    report = fsck(repair=True, min_age_s=0)
    assert report.clean and report.findings[0].repaired
    assert not hot.exists(f"{world.bucket}/stray~0123")
    # a transition whose old copy survived, then the new copy is lost: fsck points the object back
    age(world, days=31)
    set_rules(world, CHAIN)
    [move_id] = due.sweep(bucket_id=world.bucket_id).new_move_ids
    outcome = run_moves([move_id], limiter=Throttle(0), wait_grace=False)[0]
    with transaction() as s:
        move = repository.get_move(s, move_id)
        assert move is not None and move.dst_locator
        old, new = move.src_locator, move.dst_locator
    assert outcome.state == "done"  # grace 0: the old copy went already; put it back to simulate a kept copy
    hot.put(old, iter([BIG]))
    PosixDriver(world.dirs["infrequent"]).delete(new)
    report = fsck(repair=True, min_age_s=0)
    assert sorted(f.kind for f in report.findings) == ["missing", "orphan"] and report.clean
    assert placement(world)["raw/a"] == ("hot", "STANDARD")
    assert read(world, "raw/a") == BIG


def test_the_sweep_reads_what_is_due_not_the_bucket(world: World) -> None:
    """Not-due objects are outside the scanned index range (the benchmark measures this at 10^6 rows)."""
    for i in range(50):
        put(world, f"raw/{i:02d}", BIG)
    age(world, days=1)
    age(world, [f"raw/{i:02d}" for i in range(5)], days=31)
    set_rules(world, CHAIN)
    result = due.sweep(bucket_id=world.bucket_id)
    assert result.scanned == 5 and len(result.new_move_ids) == 5
    # once moved, they leave the hot tier's range: the next sweep reads nothing
    run_now(world.bucket_id)
    assert due.sweep(bucket_id=world.bucket_id).scanned == 0


def test_due_now_is_judged_in_utc_midnights(world: World) -> None:
    put(world, "raw/a", BIG)
    set_rules(world, CHAIN)
    age(world, created_at=datetime(2026, 1, 10, 15, 0, tzinfo=UTC))
    assert run_now(world.bucket_id, now=datetime(2026, 2, 9, 23, 59, 59, tzinfo=UTC)).by_action == {}
    assert run_now(world.bucket_id, now=datetime(2026, 2, 10, 0, 0, tzinfo=UTC)).by_action == {"transition": 1}
