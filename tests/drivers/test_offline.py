"""Offline posix tier: the restore state machine, expiry, persistence across restarts."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.clocks import WallClock
from tierpilot.drivers.base import BlobNotFound, NotRestored, RestoreInProgress
from tierpilot.drivers.offline import OfflinePosixDriver, next_midnight, restore_expiry
from tierpilot.drivers.posix import PosixDriver

T0 = datetime(2026, 11, 22, 10, 30, tzinfo=UTC)
DELAYS = {"expedited": 60, "standard": 3600, "bulk": 5 * 3600}


@pytest.fixture
def clock() -> WallClock:
    return WallClock(T0)


@pytest.fixture
def archive(tmp_path: Path, clock: WallClock) -> OfflinePosixDriver:
    driver = OfflinePosixDriver(tmp_path / "archive", restore_delays=DELAYS, clock=clock)
    driver.put("b/obj~1", iter([b"archived bytes"]))
    return driver


def _read(driver: PosixDriver, locator: str) -> bytes:
    return b"".join(driver.open(locator))


def test_expiry_is_completion_plus_days_rounded_up_to_midnight_utc() -> None:
    assert restore_expiry(T0, 1) == datetime(2026, 11, 24, tzinfo=UTC)
    assert restore_expiry(datetime(2026, 11, 22, tzinfo=UTC), 2) == datetime(2026, 11, 24, tzinfo=UTC)
    assert next_midnight(datetime(2026, 12, 31, 23, 59, 59, 1, tzinfo=UTC)) == datetime(2027, 1, 1, tzinfo=UTC)


def test_unrestored_blob_is_unreadable_but_head_works(archive: OfflinePosixDriver) -> None:
    with pytest.raises(NotRestored):
        archive.open("b/obj~1")
    assert archive.head("b/obj~1").size == 14
    status = archive.restore_status("b/obj~1")
    assert (status.ongoing, status.restored) == (False, False)
    with pytest.raises(BlobNotFound):
        archive.restore("b/missing", 1, "bulk")
    with pytest.raises(BlobNotFound):
        archive.open("b/missing")


def test_restore_completes_after_the_speed_delay_and_expires(archive: OfflinePosixDriver, clock: WallClock) -> None:
    status = archive.restore("b/obj~1", 2, "standard")
    assert status.accepted and status.ongoing and not status.restored
    assert status.ready_at == T0 + timedelta(hours=1)
    clock.advance(minutes=59)
    with pytest.raises(NotRestored):
        archive.open("b/obj~1")
    assert archive.restore_status("b/obj~1").ongoing

    clock.advance(minutes=1)
    status = archive.restore_status("b/obj~1")
    assert (status.ongoing, status.restored, status.speed) == (False, True, "standard")
    assert status.expiry == datetime(2026, 11, 25, tzinfo=UTC)  # 11:30 + 2 days -> next midnight
    assert _read(archive, "b/obj~1") == b"archived bytes"

    clock.now = datetime(2026, 11, 25, tzinfo=UTC)
    with pytest.raises(NotRestored):
        archive.open("b/obj~1")
    assert archive.restore_status("b/obj~1").restored is False
    assert archive.restore("b/obj~1", 1, "bulk").accepted  # a new restore after expiry


def test_repeat_while_ongoing_is_refused_unless_it_upgrades_the_speed(archive: OfflinePosixDriver,
                                                                      clock: WallClock) -> None:
    archive.restore("b/obj~1", 1, "bulk")
    clock.advance(minutes=10)
    with pytest.raises(RestoreInProgress):
        archive.restore("b/obj~1", 1, "bulk")
    upgraded = archive.restore("b/obj~1", 3, "standard")
    assert upgraded.accepted and upgraded.speed == "standard"
    assert upgraded.ready_at == clock.now + timedelta(hours=1)
    for slower in ("standard", "bulk"):  # never downgraded
        with pytest.raises(RestoreInProgress):
            archive.restore("b/obj~1", 1, slower)  # type: ignore[arg-type]
    assert archive.restore_status("b/obj~1").speed == "standard"
    # an upgrade never makes a recall later than it already was
    archive.put("b/obj~2", iter([b"two"]))
    requested = clock.now
    archive.restore("b/obj~2", 1, "bulk")
    clock.advance(hours=4, minutes=59, seconds=30)
    assert archive.restore("b/obj~2", 1, "expedited").ready_at == requested + timedelta(hours=5)


def test_repeat_while_restored_extends_expiry_from_now(archive: OfflinePosixDriver, clock: WallClock) -> None:
    archive.restore("b/obj~1", 1, "expedited")
    clock.advance(minutes=1)
    first = archive.restore_status("b/obj~1")
    assert first.expiry == datetime(2026, 11, 24, tzinfo=UTC)
    clock.advance(days=1)
    again = archive.restore("b/obj~1", 5, "bulk")
    assert (again.accepted, again.restored) == (False, True)
    assert again.expiry == datetime(2026, 11, 29, tzinfo=UTC)
    assert archive.restore_status("b/obj~1").expiry == again.expiry
    assert _read(archive, "b/obj~1") == b"archived bytes"


def test_zero_delay_restores_at_once(tmp_path: Path, clock: WallClock) -> None:
    driver = OfflinePosixDriver(tmp_path / "a", restore_delays={"expedited": 0}, clock=clock)
    driver.put("k", iter([b"x"]))
    status = driver.restore("k", 1, "expedited")
    assert status.accepted and status.restored and _read(driver, "k") == b"x"


def test_purge_removes_expired_copies_only(archive: OfflinePosixDriver, clock: WallClock) -> None:
    archive.put("b/obj~2", iter([b"two"]))
    archive.restore("b/obj~1", 1, "expedited")
    clock.advance(minutes=2)
    archive.restore("b/obj~2", 3, "expedited")
    clock.advance(minutes=2)
    assert archive.restore_status("b/obj~2").restored and archive.restore_status("b/obj~1").restored
    copies = lambda: sorted(p.name for p in archive.blobs.rglob("c_*"))  # noqa: E731
    assert copies() == ["c_obj~1", "c_obj~2"]
    clock.now = datetime(2026, 11, 24, tzinfo=UTC)
    assert archive.purge_expired() == 1
    assert copies() == ["c_obj~2"] and not list(archive.blobs.rglob("r_obj~1"))
    assert _read(archive, "b/obj~2") == b"two"
    assert archive.purge_expired() == 0


def test_delete_removes_blob_state_and_copy(archive: OfflinePosixDriver, clock: WallClock) -> None:
    archive.restore("b/obj~1", 1, "expedited")
    clock.advance(hours=1)
    _read(archive, "b/obj~1")
    archive.delete("b/obj~1")
    archive.delete("b/obj~1")
    assert list(archive.blobs.iterdir()) == []
    with pytest.raises(BlobNotFound):
        archive.restore_status("b/obj~1")


def test_copy_out_of_the_archive_needs_a_restore(archive: OfflinePosixDriver, tmp_path: Path,
                                                 clock: WallClock) -> None:
    hot = PosixDriver(tmp_path / "hot")
    with pytest.raises(NotRestored):
        hot.copy_from(archive, "b/obj~1", "b/obj~9")
    archive.restore("b/obj~1", 1, "expedited")
    clock.advance(hours=1)
    hot.copy_from(archive, "b/obj~1", "b/obj~9")
    assert _read(hot, "b/obj~9") == b"archived bytes"
    # and a copy into the archive is archived
    archive.copy_from(hot, "b/obj~9", "b/back~1")
    with pytest.raises(NotRestored):
        archive.open("b/back~1")


def test_a_blob_stored_as_parts_restores_reads_and_expires_like_any_other(archive: OfflinePosixDriver,
                                                                        clock: WallClock) -> None:
    infos = [archive.put_part("up", n, iter([bytes([n]) * 1000]))[0] for n in (1, 2, 3)]
    archive.complete_multipart("up", "b/parted~1", infos)
    archive.abort_multipart("up")
    with pytest.raises(NotRestored):
        archive.open("b/parted~1")
    archive.restore("b/parted~1", 1, "expedited")
    clock.advance(minutes=2)
    assert _read(archive, "b/parted~1") == b"".join(bytes([n]) * 1000 for n in (1, 2, 3))
    assert archive.head("b/parted~1").size == 3000
    clock.now = datetime(2026, 11, 24, tzinfo=UTC)
    assert archive.purge_expired() == 1
    assert not list(archive.blobs.rglob("c_parted~1"))
    with pytest.raises(NotRestored):
        archive.open("b/parted~1")
    archive.delete("b/parted~1")
    assert [b.locator for b in archive.list()] == ["b/obj~1"]


def test_concurrent_requests_start_exactly_one_restore(archive: OfflinePosixDriver) -> None:
    outcomes: list[str] = []
    barrier = threading.Barrier(8)

    def request() -> None:
        barrier.wait()
        try:
            archive.restore("b/obj~1", 1, "bulk")
            outcomes.append("accepted")
        except RestoreInProgress:
            outcomes.append("in-progress")

    threads = [threading.Thread(target=request) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["accepted"] + ["in-progress"] * 7


def test_restore_state_survives_a_restart_and_completes_on_time(tmp_path: Path, clock: WallClock) -> None:
    """One-second delay: a new driver instance (a restarted process) sees the recall finish, on time."""
    root = tmp_path / "archive"
    first = OfflinePosixDriver(root, restore_delays={"expedited": 1.0}, clock=clock)
    first.put("b/k~1", iter([b"data"]))
    assert first.restore("b/k~1", 1, "expedited").ongoing
    del first

    second = OfflinePosixDriver(root, restore_delays={"expedited": 1.0}, clock=clock)
    assert second.restore_status("b/k~1").ongoing
    with pytest.raises(RestoreInProgress):
        second.restore("b/k~1", 1, "expedited")
    clock.advance(seconds=0.999)
    assert second.restore_status("b/k~1").ongoing
    with pytest.raises(NotRestored):
        _read(second, "b/k~1")
    clock.advance(seconds=0.001)
    assert second.restore_status("b/k~1").restored
    assert _read(second, "b/k~1") == b"data"
