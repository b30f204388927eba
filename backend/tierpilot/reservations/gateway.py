"""Reservation enforcement in the gateway: the flow policy installed at the gateway's start.

``open`` checks a request's ``X-Tierpilot-Reservation`` against an in-memory directory of the
reservations around now (refreshed from the database every second; an id not in it costs one
lookup, then is cached briefly), and hands back a flow whose ``consume`` pays each chunk out of
the shared token buckets (``kit.limiter``) and counts it for metering. No database or Redis call
happens per chunk.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import select

from tierpilot.gateway.ext import invalid_reservation
from tierpilot.kit.cache import TTLCache
from tierpilot.kit.db import session_factory, utcnow
from tierpilot.kit.flow import Flow, FlowRequest, set_policy
from tierpilot.kit.limiter import HEARTBEAT_S, Scheduler, SharedBuckets
from tierpilot.kit.settings import get_settings
from tierpilot.reservations import metering, repository, service
from tierpilot.reservations.admission import bookable_bps
from tierpilot.reservations.models import Reservation

log = logging.getLogger(__name__)

STATUS_HEADER = b"x-tierpilot-reservation-status"
REFRESH_S = 1.0
LOOKUP_TTL_S = 2.0  # a cancellation reaches requests that open new flows within this
LOOKUP_CACHE_MAX = 10_000
SNAPSHOT_BEHIND = timedelta(minutes=1)
SNAPSHOT_AHEAD = timedelta(minutes=5)
BEST_EFFORT = "best-effort"
PROCESSES_KEY = "tp:gateways"  # the live gateway processes: their count divides rates while Redis is down


@dataclass(frozen=True, slots=True)
class Entry:
    id: str
    owner_id: int
    bucket: str
    direction: str
    rate_bps: int
    start: float  # Unix seconds
    end: float
    cancelled: bool

    @classmethod
    def of(cls, r: Reservation) -> Entry:
        return cls(r.id, r.owner_id, r.bucket, r.direction, r.rate_bps, r.start_at.timestamp(),
                   r.end_at.timestamp(), r.state == "cancelled")


@dataclass(frozen=True, slots=True)
class Pool:
    read_bps: int
    write_bps: int
    unbookable_share: float

    def capacity(self, direction: str) -> int:
        return self.read_bps if direction == "read" else self.write_bps


@dataclass(frozen=True, slots=True)
class Rates:
    at: float
    contended: bool  # some reservation of the direction is live: best-effort must go through the buckets
    scale: float
    best_effort_bps: int


class Directory:
    """The reservations around now and the pool's capacity, as this process last read them."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.entries: dict[str, Entry] = {}
        self.pool = Pool(service.DEFAULT_READ_BPS, service.DEFAULT_WRITE_BPS, service.DEFAULT_UNBOOKABLE_SHARE)
        self.refreshed_at = 0.0
        self.error = ""
        # one-tuples, so that an unknown id is remembered too (the cache answers None for a miss)
        self._lookups: TTLCache[str, tuple[Entry | None]] = TTLCache(LOOKUP_TTL_S, LOOKUP_CACHE_MAX, clock)
        self._rates: dict[str, Rates] = {}

    def load(self) -> None:
        """Read the snapshot (blocking: runs in a worker thread)."""
        now = utcnow()
        with session_factory()() as session:
            pool = repository.get_pool(session)
            rows = session.scalars(select(Reservation).where(
                Reservation.start_at <= now + SNAPSHOT_AHEAD, Reservation.end_at > now - SNAPSHOT_BEHIND,
            )).all()
            entries = {r.id: Entry.of(r) for r in rows}
        if pool is not None:
            self.pool = Pool(pool.read_bps, pool.write_bps, pool.unbookable_share)
        self.entries = entries
        self._rates.clear()
        self.refreshed_at = time.time()
        self.error = ""

    def fetch(self, reservation_id: str) -> Entry | None:
        """One reservation straight from the database (blocking)."""
        with session_factory()() as session:
            r = session.get(Reservation, reservation_id)
            return Entry.of(r) if r is not None else None

    async def lookup(self, reservation_id: str) -> Entry | None:
        entry = self.entries.get(reservation_id)
        if entry is not None:
            return entry
        cached = self._lookups.get(reservation_id)
        if cached is not None:
            return cached[0]
        from tierpilot.kit.streaming import run

        entry = await run(self.fetch, reservation_id)
        self._lookups.put(reservation_id, (entry,))
        return entry

    def live(self, entry: Entry, now: float) -> bool:
        """Still entitled to its rate: inside its window and not cancelled (as last seen)."""
        current = self.entries.get(entry.id, entry)
        return not current.cancelled and current.start <= now < current.end

    def rates(self, direction: str, now: float) -> Rates:
        """The scheduling figures of a direction at ``now``, recomputed ten times a second.

        Bookings may exceed a capacity an admin lowered later: then every reservation gets the
        same fraction of its rate, and best-effort keeps the unbookable share.
        """
        cached = self._rates.get(direction)
        if cached is not None and now - cached.at < 0.1:
            return cached
        capacity = self.pool.capacity(direction)
        limit = bookable_bps(capacity, self.pool.unbookable_share)
        booked = sum(e.rate_bps for e in self.entries.values()
                     if e.direction == direction and not e.cancelled and e.start <= now < e.end)
        scale = 1.0 if booked <= limit else limit / booked
        rates = Rates(now, booked > 0, scale, max(0, capacity - int(booked * scale)))
        self._rates[direction] = rates
        return rates


class ReservationFlow:
    """One request's flow: its reservation's class while live, best-effort otherwise."""

    __slots__ = ("headers", "_policy", "_direction", "_entry")

    def __init__(self, policy: ReservationPolicy, direction: str, entry: Entry | None,
                 headers: list[tuple[bytes, bytes]]) -> None:
        self._policy = policy
        self._direction = direction
        self._entry = entry
        self.headers = headers

    def _class(self) -> tuple[str, int]:
        directory = self._policy.directory
        now = time.time()
        rates = directory.rates(self._direction, now)
        entry = self._entry
        if entry is not None and directory.live(entry, now):
            return entry.id, int(entry.rate_bps * rates.scale)
        return BEST_EFFORT, rates.best_effort_bps

    async def consume(self, nbytes: int) -> None:
        policy = self._policy
        policy.moved[self._direction] += nbytes
        # while no reservation of this direction is live there is nothing to protect: best-effort
        # bytes move untouched (and without a lease) until one starts
        if self._entry is None and not policy.directory.rates(self._direction, time.time()).contended:
            return
        await policy.scheduler.pay(self._direction, nbytes, self._class)
        if self._entry is not None:
            policy.meter.add(self._entry.id, nbytes)

    async def close(self) -> None:
        return None


class ReservationPolicy:
    """Validates reservation ids and schedules every flow of this gateway process."""

    def __init__(self, redis_url: str | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.directory = Directory(clock)
        self.buckets = SharedBuckets(redis_url if redis_url is not None else get_settings().redis_url,
                                     processes_key=PROCESSES_KEY, clock=clock)
        self.scheduler = Scheduler(self.buckets, self._pool_rate)
        self.meter = metering.Meter()
        self.moved = {"read": 0, "write": 0}
        self._tasks: list[asyncio.Task[None]] = []

    def _pool_rate(self, direction: str) -> int:
        return self.directory.pool.capacity(direction)

    async def start(self) -> None:
        """Start the refresh, heartbeat and metering loops (idempotent; ``open`` calls it)."""
        if self._tasks:
            return
        self._tasks = [asyncio.ensure_future(self._every(REFRESH_S, self._refresh)),
                       asyncio.ensure_future(self._every(HEARTBEAT_S, self.buckets.heartbeat)),
                       asyncio.ensure_future(self._every(1.0, self.flush_meter))]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(BaseException):
                await task
        self._tasks = []
        await self.flush_meter()
        await self.buckets.close()

    @staticmethod
    async def _every(period: float, fn: Any) -> None:
        while True:
            try:
                await fn()
            except Exception:
                log.exception("reservation enforcement loop %s failed", getattr(fn, "__name__", fn))
            await asyncio.sleep(period)

    async def _refresh(self) -> None:
        from tierpilot.kit.streaming import run

        try:
            await run(self.directory.load)
        except Exception as exc:
            # keep enforcing with the last snapshot; health says how old it is
            self.directory.error = f"{type(exc).__name__}: {exc}"[:300]
            raise
        self.scheduler.forget({BEST_EFFORT, *self.directory.entries})

    async def flush_meter(self) -> None:
        rows = self.meter.take()
        if not rows:
            return
        client = self.buckets.client
        if client is not None and self.buckets.status.mode == "redis":
            try:
                await metering.push_to_redis(client, rows)
                return
            except Exception as exc:  # noqa: BLE001  (Redis down: the database takes the counters)
                log.warning("metering to redis failed, writing to the database: %s", exc)
        from tierpilot.kit.streaming import run

        try:
            await run(metering.write_to_database, rows)
        except Exception:
            self.meter.put_back(rows)
            raise

    async def open(self, request: FlowRequest) -> Flow:
        await self.start()
        rid = request.reservation_id
        if not rid:
            return ReservationFlow(self, request.direction, None, [])
        entry = await self.directory.lookup(rid)
        if entry is None:
            raise invalid_reservation("The reservation id is unknown.")
        if entry.owner_id != request.user_id:
            raise invalid_reservation("The reservation belongs to another user.")
        if entry.cancelled:
            raise invalid_reservation("The reservation was cancelled.")
        if entry.bucket != request.bucket:
            raise invalid_reservation(
                f"The reservation is for bucket {entry.bucket!r}, not {request.bucket!r}.")
        if entry.direction != request.direction:
            raise invalid_reservation(
                f"The reservation is for {entry.direction}s; this request {request.direction}s.")
        now = time.time()
        if not entry.start <= now < entry.end:
            when = "not started yet" if now < entry.start else "over"
            return ReservationFlow(self, request.direction, None,
                                   [(STATUS_HEADER, f"outside-window; best-effort; window {when}".encode())])
        return ReservationFlow(self, request.direction, entry, [(STATUS_HEADER, b"active")])

    def status(self) -> dict[str, Any]:
        """For the gateway's health and metrics."""
        s = self.buckets.status
        return {
            "limiter": s.mode, "redis": s.redis, "gateway_processes": s.processes,
            "snapshot_age_s": round(time.time() - self.directory.refreshed_at, 3)
            if self.directory.refreshed_at else None,
            "snapshot_error": self.directory.error or None,
            "moved_bytes": dict(self.moved),
            "classes": {f"{d}:{k}": {"guaranteed_bytes": b.guaranteed, "spare_bytes": b.spare,
                                     "waited_s": round(b.waited_s, 3)}
                        for (d, k), b in self.scheduler.buffers().items()},
            "metering_dropped_bytes": self.meter.dropped,
        }


policy = ReservationPolicy()


async def startup() -> None:
    """Gateway start-up hook (``tierpilot.wiring.GATEWAY_EXTENSIONS``): enforce reservations from now on."""
    set_policy(policy)
    await policy.start()


async def shutdown() -> None:
    await policy.stop()


def health() -> dict[str, Any]:
    """What the gateway's health answer says about reservations (limiter mode, Redis, snapshot age)."""
    return policy.status()
