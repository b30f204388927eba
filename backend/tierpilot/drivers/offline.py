"""Offline posix tier: a directory with archive semantics (restore before read), like S3 Glacier.

A restore is a small JSON state file (``r_<name>``) next to the blob, written atomically. Completion is
computed from the clock (``ready_at``), so a restore finishes on time across process restarts without
any timer; the first look after ``ready_at`` (read, status, restore request or the sweep) links the
readable restored copy (``c_<name>``, a hard link: no extra space). The copy expires at ``expiry``
(completion + days, rounded up to the next midnight UTC, as S3); ``purge_expired`` removes expired
copies. State changes hold an exclusive flock on the blob, so threads and processes do not race.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, cast

from tierpilot.drivers.base import (
    BlobNotFound,
    NotRestored,
    RestoreInProgress,
    RestoreSpeed,
    RestoreStatus,
)
from tierpilot.drivers.posix import PosixDriver, _fsync_dir, _link_blob, _unlink_quiet, lock_file, map_locator
from tierpilot.kit.db import utcnow

SPEEDS: tuple[RestoreSpeed, ...] = ("expedited", "standard", "bulk")  # fastest first
DEFAULT_RESTORE_DELAYS: dict[RestoreSpeed, float] = {"expedited": 5, "standard": 30, "bulk": 60}
MAX_RESTORE_DAYS = 30000


def next_midnight(moment: datetime) -> datetime:
    """``moment`` rounded up to a midnight UTC (a midnight stays itself)."""
    midnight = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    return midnight if midnight == moment else midnight + timedelta(days=1)


def restore_expiry(completed: datetime, days: int) -> datetime:
    """S3's expiry of a restored copy: completion + days, rounded up to the next midnight UTC."""
    return next_midnight(completed + timedelta(days=days))


@dataclass(frozen=True)
class _State:
    speed: RestoreSpeed
    requested_at: datetime
    ready_at: datetime
    days: int
    expiry: datetime

    def to_json(self) -> bytes:
        return json.dumps({
            "speed": self.speed, "requested_at": self.requested_at.isoformat(),
            "ready_at": self.ready_at.isoformat(), "days": self.days, "expiry": self.expiry.isoformat(),
        }).encode()

    @classmethod
    def from_json(cls, raw: bytes) -> _State:
        data: dict[str, Any] = json.loads(raw)
        return cls(speed=cast(RestoreSpeed, data["speed"]),
                   requested_at=datetime.fromisoformat(data["requested_at"]),
                   ready_at=datetime.fromisoformat(data["ready_at"]), days=int(data["days"]),
                   expiry=datetime.fromisoformat(data["expiry"]))


class OfflinePosixDriver(PosixDriver):
    """Archive tier on a directory: reads need a restore that completes after a delay per speed."""

    offline = True
    _SIDECARS = ("l_", "c_", "r_")

    def __init__(self, root: str | os.PathLike[str], name: str = "archive",
                 restore_delays: Mapping[str, float] | None = None,
                 clock: Callable[[], datetime] = utcnow, tier_id: int | None = None) -> None:
        super().__init__(root, name, tier_id)
        delays = dict(DEFAULT_RESTORE_DELAYS)
        for speed, seconds in (restore_delays or {}).items():
            if speed in delays and seconds is not None:
                delays[cast(RestoreSpeed, speed)] = float(seconds)
        self.restore_delays = delays
        self.clock = clock

    # state files ---------------------------------------------------------------------------------------

    def _paths(self, locator: str) -> tuple[Path, Path, Path]:
        """(blob, restore state, restored copy) of a locator."""
        bp = map_locator(locator)
        directory = self.blobs.joinpath(*bp.dirs)
        return directory / bp.name, directory / bp.sidecar("r_"), directory / bp.sidecar("c_")

    @staticmethod
    def _load(state_path: Path) -> _State | None:
        try:
            return _State.from_json(state_path.read_bytes())
        except FileNotFoundError:
            return None
        except (ValueError, KeyError):  # unreadable state cannot be trusted: as if never restored
            return None

    def _save(self, state_path: Path, state: _State) -> None:
        tmp = self._write_tmp(iter((state.to_json(),)), None)
        self._install(tmp, state_path.parent, state_path.name, self.blobs)

    def _materialize(self, blob: Path, copy: Path) -> None:
        """Link the readable restored copy into place (idempotent)."""
        if copy.exists():
            return
        tmp = self._new_tmp()
        _link_blob(blob, tmp)
        self._install(tmp, copy.parent, copy.name, self.blobs)

    def _drop(self, state_path: Path, copy: Path) -> None:
        """Expire a restore: the copy goes first, so a crash never leaves a copy without its state."""
        removed = self._remove(copy)
        removed = _unlink_quiet(state_path) or removed
        if removed:
            _fsync_dir(state_path.parent)

    def _settle(self, blob: Path, state_path: Path, copy: Path, now: datetime) -> _State | None:
        """Bring the files in line with the clock (call holding the blob's lock); returns the live state."""
        state = self._load(state_path)
        if state is None:
            self._remove(copy)
            return None
        if now >= state.expiry:
            self._drop(state_path, copy)
            return None
        if now >= state.ready_at:
            self._materialize(blob, copy)
        return state

    @contextlib.contextmanager
    def _locked(self, blob: Path, locator: str) -> Iterator[None]:
        try:
            fd = lock_file(blob)
        except BlobNotFound:
            raise BlobNotFound(locator) from None
        try:
            yield
        finally:
            os.close(fd)  # releases the flock

    @staticmethod
    def _status(state: _State | None, now: datetime, accepted: bool = False) -> RestoreStatus:
        if state is None:
            return RestoreStatus(ongoing=False, restored=False, accepted=accepted)
        if now < state.ready_at:
            return RestoreStatus(ongoing=True, restored=False, speed=state.speed, ready_at=state.ready_at,
                                 accepted=accepted)
        return RestoreStatus(ongoing=False, restored=True, expiry=state.expiry, speed=state.speed,
                             ready_at=state.ready_at, accepted=accepted)

    # driver interface ----------------------------------------------------------------------------------

    def _missing(self, locator: str) -> Exception:
        # the restored copy may expire between the check and the open
        return NotRestored(locator) if self.exists(locator) else BlobNotFound(locator)

    def _readable_path(self, locator: str) -> Path:
        blob, state_path, copy = self._paths(locator)
        now = self.clock()
        if copy.exists():
            state = self._load(state_path)
            if state is not None and state.ready_at <= now < state.expiry:
                return copy
        with self._locked(blob, locator):
            state = self._settle(blob, state_path, copy, now)
        if state is None or now < state.ready_at:
            raise NotRestored(locator)
        return copy

    def restore(self, locator: str, days: int, speed: RestoreSpeed) -> RestoreStatus:
        """Start, upgrade or extend a restore; see TierDriver.restore."""
        if speed not in SPEEDS:
            raise ValueError(f"restore speed must be one of {', '.join(SPEEDS)}")
        if not 1 <= days <= MAX_RESTORE_DAYS:
            raise ValueError(f"restore days must be 1..{MAX_RESTORE_DAYS}")
        blob, state_path, copy = self._paths(locator)
        with self._locked(blob, locator):
            now = self.clock()
            state = self._settle(blob, state_path, copy, now)
            if state is not None and now < state.ready_at:
                if SPEEDS.index(speed) >= SPEEDS.index(state.speed):
                    raise RestoreInProgress(locator)
                ready_at = min(state.ready_at, now + timedelta(seconds=self.restore_delays[speed]))
                state = _State(speed, state.requested_at, ready_at, days, restore_expiry(ready_at, days))
                accepted = True
            elif state is not None:
                state = _State(state.speed, state.requested_at, state.ready_at, days, restore_expiry(now, days))
                accepted = False
            else:
                ready_at = now + timedelta(seconds=self.restore_delays[speed])
                state = _State(speed, now, ready_at, days, restore_expiry(ready_at, days))
                accepted = True
            self._save(state_path, state)
            if now >= state.ready_at:
                self._materialize(blob, copy)
            return self._status(state, now, accepted)

    def restore_status(self, locator: str) -> RestoreStatus:
        """Current restore state (BlobNotFound for a missing blob)."""
        blob, state_path, copy = self._paths(locator)
        with self._locked(blob, locator):
            now = self.clock()
            return self._status(self._settle(blob, state_path, copy, now), now)

    def purge_expired(self) -> int:
        """Remove restored copies past their expiry (and state left by deleted blobs); returns how many."""
        now = self.clock()
        purged = 0
        for dirpath, dirs, files in os.walk(self.blobs):
            names = set(files) | {d for d in dirs if not d.startswith("d_")}  # blobs stored as parts are dirs
            dirs[:] = [d for d in dirs if d.startswith("d_")]
            for name in sorted(names):
                directory = Path(dirpath)
                if name.startswith("c_") and "r_" + name[2:] not in names:  # copy whose state is gone
                    purged += self._remove(directory / name)
                if not name.startswith("r_"):
                    continue
                blob, state_path, copy = (directory / f"{kind}{name[2:]}" for kind in ("f_", "r_", "c_"))
                try:
                    fd = lock_file(blob)
                except BlobNotFound:  # blob deleted; its restore leftovers go too
                    self._drop(state_path, copy)
                    purged += 1
                    continue
                try:
                    state = self._load(state_path)
                    if state is None or now >= state.expiry:
                        self._drop(state_path, copy)
                        purged += 1
                    elif now >= state.ready_at:
                        self._materialize(blob, copy)
                finally:
                    os.close(fd)
        return purged
