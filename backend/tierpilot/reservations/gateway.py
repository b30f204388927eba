"""Reservation enforcement in the gateway: the flow policy installed at the gateway's start.

``open`` checks a request's ``X-Tierpilot-Reservation`` against an in-memory directory of the
reservations around now, and hands back a flow whose ``consume`` pays each chunk out of the shared
token buckets (``kit.limiter``) and counts it for metering. No database or Redis call happens per chunk.

A reservation holds from its first second on every process: bookings, cancellations and capacity
changes arrive over Redis as they are committed (``reservations.changes``) and apply at once; the
snapshot read from the database every second is the fall-back; windows open and close on this
process's clock, not at a refresh; a reservation found by a lookup joins the directory at once. While
no window of a direction is open, best-effort bytes move without leases, so the buckets' savings are
fiction then: the first chunk of a contended period drains them (``SharedBuckets.drain``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from prometheus_client import Counter
from sqlalchemy import select

from tierpilot.gateway.ext import invalid_reservation
from tierpilot.kit import metrics
from tierpilot.kit.cache import TTLCache
from tierpilot.kit.db import session_factory, utcnow
from tierpilot.kit.flow import Flow, FlowRequest, set_policy
from tierpilot.kit.limiter import HEARTBEAT_S, REDIS_RETRY_S, Burst, Grant, Lease, Scheduler, SharedBuckets
from tierpilot.kit.settings import get_settings
from tierpilot.kit.streaming import BLOCK
from tierpilot.reservations import achieved, changes, repository, service
from tierpilot.reservations.admission import bookable_bps
from tierpilot.reservations.models import Reservation

log = logging.getLogger(__name__)

STATUS_HEADER = b"x-tierpilot-reservation-status"
REFRESH_S = 1.0
LOOKUP_TTL_S = 2.0  # a cancellation reaches requests that open new flows within this
LOOKUP_CACHE_MAX = 10_000
SNAPSHOT_BEHIND = timedelta(minutes=1)
SNAPSHOT_AHEAD = timedelta(minutes=5)
SLOT_S = 0.1  # resolution of the recent bytes and grants the health answer reports
RECENT_SLOTS = 100
BEST_EFFORT = "best-effort"
# What a 1 s interval can carry beyond the capacity: what the pool saved and what a class borrowed from it,
# 1 % of capacity each but at least one chunk (kit.streaming.BLOCK, 1 MiB): a chunk is paid by one lease and
# released as it is paid (``Scheduler.pay``), so no chunk paid over several leases comes out in a later second
# than they were counted in; and a lease asks for at most 0.25 % of capacity beyond the chunk it pays, so a
# process's class buffers hold little leased but unspent. Measured before (11 ms saved and 11 ms borrowed,
# leases of 20 ms, waiting chunks released together): leases per second within capacity + 1.7 %, bytes moved
# up to + 4.9 %. A lease is at most what the pool saves, so a class with tokens (within its rate, or catching
# up with what it saved while idle: 0.5 s of its rate) asks for less of the pool than a spare grant needs,
# and always goes first: saved tokens buy priority, not bytes beyond capacity.
POOL_BURST = Burst(class_s=0.5, pool_s=0.01, pool_debt_s=0.01, floor=BLOCK, spare_lease_s=0.0025)
PROCESSES_KEY = "tp:gateways"  # the live gateway processes: their count divides rates while Redis is down
KINDS = ("reserved", BEST_EFFORT)  # /metrics and the recent grants name no reservation (an id is a credential)
GRANT_COLUMNS = tuple(f"{kind} {what}" for kind in KINDS for what in ("guaranteed", "spare", "refused", "starved"))
GRANTED_BYTES = Counter("tierpilot_limiter_granted_bytes_total",
                        "bytes the gateway's limiter granted, by direction, class (reserved or best-effort) and grant "
                        "(guaranteed: within the class's rate; spare: capacity the other classes left unused)",
                        ["direction", "class", "grant"])
REFUSED_LEASES = Counter("tierpilot_limiter_refused_leases_total",
                         "leases the gateway's limiter refused, by direction, class and reason (past-rate: the class "
                         "had used its rate; pool-debt: the class held the bytes but the pool was in debt, i.e. it "
                         "was starved by the others' guaranteed grants)", ["direction", "class", "reason"])


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

    @classmethod
    def from_message(cls, m: dict[str, Any]) -> Entry:
        return cls(str(m["id"]), int(m["owner_id"]), str(m["bucket"]), str(m["direction"]), int(m["rate_bps"]),
                   float(m["start"]), float(m["end"]), bool(m["cancelled"]))


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
    until: float  # the next window boundary: the figures hold until then (or until the directory changes)
    contended: bool  # some reservation of the direction is live: best-effort must go through the buckets
    since: float  # start of the run of overlapping windows that is live now (0: none); one drain per run
    scale: float
    best_effort_bps: int


@dataclass(frozen=True, slots=True)
class Snapshot:
    pool: Pool | None
    entries: dict[str, Entry]
    started: float  # the directory's clock when the read began


class Directory:
    """The reservations around now and the pool's capacity, as this process knows them.

    ``clock`` (monotonic) times caches; ``wall`` (Unix seconds) is compared with windows.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic, wall: Callable[[], float] = time.time) -> None:
        self.entries: dict[str, Entry] = {}
        self.pool = Pool(service.DEFAULT_READ_BPS, service.DEFAULT_WRITE_BPS, service.DEFAULT_UNBOOKABLE_SHARE)
        self.wall = wall
        self.refreshed_at = 0.0
        self.error = ""
        self._clock = clock
        # one-tuples, so that an unknown id is remembered too (the cache answers None for a miss)
        self._lookups: TTLCache[str, tuple[Entry | None]] = TTLCache(LOOKUP_TTL_S, LOOKUP_CACHE_MAX, clock)
        self._rates: dict[str, Rates] = {}
        # what was learnt between snapshots, and when: a snapshot whose read began earlier must not undo it
        self._learnt: dict[str, tuple[Entry, float]] = {}
        self._pool_learnt: tuple[Pool, float] | None = None

    def read(self) -> Snapshot:
        """Read the reservations around now and the pool (blocking: runs in a worker thread)."""
        started = self._clock()
        now = utcnow()
        with session_factory()() as session:
            pool = repository.get_pool(session)
            rows = session.scalars(select(Reservation).where(
                Reservation.start_at <= now + SNAPSHOT_AHEAD, Reservation.end_at > now - SNAPSHOT_BEHIND,
            )).all()
            entries = {r.id: Entry.of(r) for r in rows}
        return Snapshot(Pool(pool.read_bps, pool.write_bps, pool.unbookable_share) if pool is not None else None,
                        entries, started)

    def install(self, snapshot: Snapshot) -> None:
        """Take a snapshot, keeping what was learnt after its read began (a change may have missed it)."""
        entries = dict(snapshot.entries)
        self._learnt = {rid: (e, at) for rid, (e, at) in self._learnt.items() if at >= snapshot.started}
        for rid, (entry, _) in self._learnt.items():
            entries[rid] = entry
        pool = snapshot.pool
        if self._pool_learnt is not None and self._pool_learnt[1] >= snapshot.started:
            pool = self._pool_learnt[0]
        else:
            self._pool_learnt = None
        if pool is not None:
            self.pool = pool
        self.entries = entries
        self._rates.clear()
        self.refreshed_at = self.wall()
        self.error = ""

    def load(self) -> None:
        """Read and take a snapshot (blocking)."""
        self.install(self.read())

    def learn(self, entry: Entry) -> None:
        """A reservation as committed now (published, or found by a lookup): enforced from the next chunk."""
        now = self.wall()
        self._learnt[entry.id] = (entry, self._clock())
        self._lookups.put(entry.id, (entry,))
        if entry.start <= now + SNAPSHOT_AHEAD.total_seconds() and entry.end > now - SNAPSHOT_BEHIND.total_seconds():
            self.entries[entry.id] = entry
        else:
            self.entries.pop(entry.id, None)
        self._rates.clear()

    def apply(self, message: dict[str, Any]) -> None:
        """One published change (``reservations.changes``)."""
        if message["kind"] == "reservation":
            self.learn(Entry.from_message(message))
        else:
            self.pool = Pool(int(message["read_bps"]), int(message["write_bps"]), float(message["unbookable_share"]))
            self._pool_learnt = (self.pool, self._clock())
            self._rates.clear()

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
        if entry is None:
            self._lookups.put(reservation_id, (None,))
        else:
            # it counts as contention before its first byte, on this process at least (the others
            # learn of it from the published change or their next snapshot)
            self.learn(entry)
        return entry

    def live(self, entry: Entry, now: float) -> bool:
        """Still entitled to its rate: inside its window and not cancelled (as last seen)."""
        current = self.entries.get(entry.id, entry)
        return not current.cancelled and current.start <= now < current.end

    def rates(self, direction: str, now: float) -> Rates:
        """The scheduling figures of a direction at ``now``: recomputed when a window opens or closes
        (on this clock, exactly) and when the directory changes.

        Bookings may exceed a capacity an admin lowered later: then every reservation gets the
        same fraction of its rate, and best-effort keeps the unbookable share.
        """
        cached = self._rates.get(direction)
        if cached is not None and cached.at <= now < cached.until:
            return cached
        capacity = self.pool.capacity(direction)
        limit = bookable_bps(capacity, self.pool.unbookable_share)
        windows = sorted((e.start, e.end, e.rate_bps) for e in self.entries.values()
                         if e.direction == direction and not e.cancelled)
        booked = sum(rate for start, end, rate in windows if start <= now < end)
        until = min((t for start, end, _ in windows for t in (start, end) if t > now), default=math.inf)
        since = 0.0
        run_start, run_end = 0.0, -math.inf
        for start, end, _ in windows:  # merge overlapping windows into runs; the live one names the period
            if start > run_end:
                run_start, run_end = start, end
            else:
                run_end = max(run_end, end)
            if run_start <= now < run_end:
                since = run_start
        scale = 1.0 if booked <= limit else limit / booked
        rates = Rates(now, until, booked > 0, since, scale, max(0, capacity - int(booked * scale)))
        self._rates[direction] = rates
        return rates


class Recent:
    """Counts per direction per ``SLOT_S`` of a clock over the last ``RECENT_SLOTS``, in named columns:
    what the gateway did in the last seconds, for its health answer."""

    def __init__(self, columns: tuple[str, ...]) -> None:
        self.columns = columns
        self._slots: dict[str, dict[int, list[int]]] = {"read": {}, "write": {}}

    def add(self, direction: str, now: float, column: int, amount: int) -> None:
        slots = self._slots[direction]
        slot = int(now / SLOT_S)
        counts = slots.get(slot)
        if counts is None:
            counts = slots[slot] = [0] * len(self.columns)
            for old in [s for s in slots if s <= slot - RECENT_SLOTS]:
                del slots[old]
        counts[column] += amount

    def report(self, now: float) -> dict[str, Any]:
        """The slots after ``now - RECENT_SLOTS * SLOT_S``, keyed by slot number (``int(t / slot_s)``)."""
        first = int(now / SLOT_S) - RECENT_SLOTS
        return {"slot_s": SLOT_S, "columns": list(self.columns),
                **{d: {str(s): list(c) for s, c in sorted(slots.items()) if s > first}
                   for d, slots in self._slots.items()}}


class Decisions:
    """The buckets (``SharedBuckets``) counting every lease decision: per ``SLOT_S`` of the buckets' own clock
    (Redis': every gateway's decisions fall in the same slots, whatever each process's delays) for the health
    answer, and in /metrics. What the limiter granted and refused is what enforcement can be judged by; the
    bytes a client received in a second also depend on when its threads got a core."""

    def __init__(self, buckets: SharedBuckets, wall: Callable[[], float]) -> None:
        self.buckets = buckets
        self.recent = Recent(GRANT_COLUMNS)
        self._wall = wall
        self._counters: dict[tuple[str, str, str], Any] = {}

    def _count(self, direction: str, kind: str, name: str, amount: int) -> None:
        counter = self._counters.get((direction, kind, name))
        if counter is None:
            family = GRANTED_BYTES if name in ("guaranteed", "spare") else REFUSED_LEASES
            counter = self._counters[(direction, kind, name)] = family.labels(direction, kind, name)
        metrics.count(counter, amount)

    async def lease(self, req: Lease) -> Grant:
        grant = await self.buckets.lease(req)
        # local buckets (Redis down) decide on this process's monotonic clock: their slots go by its wall clock
        at = grant.at if self.buckets.status.mode == "redis" else self._wall()
        direction = req.scope
        reserved = req.klass != BEST_EFFORT
        kind = KINDS[0] if reserved else BEST_EFFORT
        base = 0 if reserved else 4
        if grant.granted:
            for i, (name, n) in enumerate((("guaranteed", grant.guaranteed), ("spare", grant.spare))):
                if n:
                    self.recent.add(direction, at, base + i, n)
                    self._count(direction, kind, name, n)
        else:
            self.recent.add(direction, at, base + 2, 1)
            if grant.starved:
                self.recent.add(direction, at, base + 3, 1)
            self._count(direction, kind, "pool-debt" if grant.starved else "past-rate", 1)
        return grant


class ReservationFlow:
    """One request's flow: its reservation's class while live, best-effort otherwise (a flow opened
    before its window switches to the reservation on its first chunk inside it)."""

    __slots__ = ("headers", "_policy", "_direction", "_entry")

    def __init__(self, policy: ReservationPolicy, direction: str, entry: Entry | None,
                 headers: list[tuple[bytes, bytes]]) -> None:
        self._policy = policy
        self._direction = direction
        self._entry = entry
        self.headers = headers

    def _class(self) -> tuple[str, int]:
        directory = self._policy.directory
        now = directory.wall()
        rates = directory.rates(self._direction, now)
        entry = self._entry
        if entry is not None and directory.live(entry, now):
            return entry.id, int(entry.rate_bps * rates.scale)
        return BEST_EFFORT, rates.best_effort_bps

    async def consume(self, nbytes: int) -> None:
        policy = self._policy
        directory = policy.directory
        direction = self._direction
        policy.moved[direction] += nbytes
        rates = directory.rates(direction, directory.wall())
        if not rates.contended:
            # no window of this direction is open: nothing to protect, bytes move untouched (and
            # without a lease) until one opens
            policy.recent.add(direction, directory.wall(), 1, nbytes)
            return
        if policy.drained[direction] != rates.since:
            await policy.drain(direction, rates)
        await policy.scheduler.pay(direction, nbytes, self._class)
        now = directory.wall()
        entry = self._entry
        reserved = entry is not None and directory.live(entry, now)
        if reserved:
            assert entry is not None
            policy.meter.add(entry.id, nbytes)
        policy.recent.add(direction, now, 0 if reserved else 1, nbytes)

    async def close(self) -> None:
        self._policy.open_flows -= 1


class ReservationPolicy:
    """Validates reservation ids and schedules every flow of this gateway process."""

    def __init__(self, redis_url: str | None = None, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time) -> None:
        self.directory = Directory(clock, wall)
        self._redis_url = redis_url if redis_url is not None else get_settings().redis_url
        self.buckets = SharedBuckets(self._redis_url, processes_key=PROCESSES_KEY, clock=clock)
        self.decisions = Decisions(self.buckets, wall)
        self.scheduler = Scheduler(self.decisions, self._pool_rate, POOL_BURST)
        self.meter = achieved.Meter()
        self.moved = {"read": 0, "write": 0}
        self.open_flows = 0  # requests whose flow is not closed yet: a stalled one shows here
        self.recent = Recent(("reserved", BEST_EFFORT))
        # the contended period (``Rates.since``) whose savings this process drained, per direction
        self.drained = {"read": 0.0, "write": 0.0}
        self._drain_locks = {"read": asyncio.Lock(), "write": asyncio.Lock()}
        self.changes_status = "subscribing" if self._redis_url else "not configured"
        self.subscribed = asyncio.Event()
        self.changed = asyncio.Event()  # set by every change applied (tests wait for it)
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
        if self._redis_url:
            self._tasks.append(asyncio.ensure_future(self.listen()))

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

    async def listen(self, refresh: bool = True) -> None:
        """Apply every published change as it arrives; after (re)subscribing, read a snapshot (what was missed)."""
        import redis.asyncio as aioredis

        while True:
            client: Any = aioredis.Redis.from_url(self._redis_url, socket_connect_timeout=0.5, socket_keepalive=True)
            try:
                async with client.pubsub(ignore_subscribe_messages=True) as pubsub:
                    await pubsub.subscribe(changes.CHANNEL)
                    self.changes_status = "subscribed"
                    self.subscribed.set()
                    if refresh:
                        with contextlib.suppress(Exception):  # the refresh loop reports a failing database
                            await self._refresh()
                    async for message in pubsub.listen():
                        if message and message.get("type") == "message":
                            self.apply(message["data"])
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001  (Redis down: snapshots every second until it is back)
                if self.subscribed.is_set():
                    log.warning("reservation changes unsubscribed, snapshots only: %s", exc)
                self.changes_status = f"error: {type(exc).__name__}: {exc}"[:300]
                self.subscribed.clear()
            finally:
                with contextlib.suppress(Exception):
                    await client.aclose()
            await asyncio.sleep(REDIS_RETRY_S)

    def apply(self, data: bytes | str) -> None:
        """One published change, applied before the next chunk of any flow."""
        message = changes.parse(data)
        if message is None:
            return
        try:
            self.directory.apply(message)
        except (KeyError, TypeError, ValueError) as exc:
            log.warning("ignoring a malformed reservation change %r: %s", message, exc)
            return
        self.changed.set()

    async def drain(self, direction: str, rates: Rates) -> None:
        """Once per contended period and process, before its first lease: forget what best-effort and the
        pool saved while best-effort moved bytes without leases (they were spent, just not counted)."""
        async with self._drain_locks[direction]:
            if self.drained[direction] == rates.since:
                return
            buf = self.scheduler.buffer(direction, BEST_EFFORT)
            buf.tokens = min(buf.tokens, 0)
            await self.buckets.drain(direction, BEST_EFFORT, rates.best_effort_bps, self._pool_rate(direction))
            self.drained[direction] = rates.since

    async def _refresh(self) -> None:
        from tierpilot.kit.streaming import run

        try:
            self.directory.install(await run(self.directory.read))
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
                await achieved.push_to_redis(client, rows)
                return
            except Exception as exc:  # noqa: BLE001  (Redis down: the database takes the counters)
                log.warning("metering to redis failed, writing to the database: %s", exc)
        from tierpilot.kit.streaming import run

        try:
            await run(achieved.write_to_database, rows)
        except Exception:
            self.meter.put_back(rows)
            raise

    async def open(self, request: FlowRequest) -> Flow:
        if not self._tasks:
            await self.start()
        # without a reservation id (nearly every request) a best-effort flow, with no further call
        flow = await self._open(request) if request.reservation_id else ReservationFlow(self, request.direction,
                                                                                           None, [])
        self.open_flows += 1
        return flow

    async def _open(self, request: FlowRequest) -> ReservationFlow:
        rid = request.reservation_id
        assert rid
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
        now = self.directory.wall()
        if not entry.start <= now < entry.end:
            early = now < entry.start
            header = f"outside-window; best-effort; window {'not started yet' if early else 'over'}".encode()
            return ReservationFlow(self, request.direction, entry if early else None, [(STATUS_HEADER, header)])
        return ReservationFlow(self, request.direction, entry, [(STATUS_HEADER, b"active")])

    def status(self) -> dict[str, Any]:
        """For the gateway's health and metrics."""
        s = self.buckets.status
        return {
            "limiter": s.mode, "redis": s.redis, "gateway_processes": s.processes,
            "snapshot_age_s": round(time.time() - self.directory.refreshed_at, 3)
            if self.directory.refreshed_at else None,
            "snapshot_error": self.directory.error or None,
            "changes": self.changes_status,
            "moved_bytes": dict(self.moved),
            "open_flows": self.open_flows,
            "recent_bytes": self.recent.report(time.time()),
            "recent_grants": self.decisions.recent.report(time.time()),
            "classes": {f"{d}:{k}": {"guaranteed_bytes": b.guaranteed, "spare_bytes": b.spare,
                                     "waited_s": round(b.waited_s, 3)}
                        for (d, k), b in self.scheduler.buffers().items()},
            "metering_dropped_bytes": self.meter.dropped,
        }


policy = ReservationPolicy()


async def startup() -> None:
    """Gateway start-up hook (``tierpilot.app.wiring.GATEWAY_EXTENSIONS``): enforce reservations from now on."""
    set_policy(policy)
    await policy.start()


async def shutdown() -> None:
    await policy.stop()


def health() -> dict[str, Any]:
    """What the gateway's health answer says about reservations (limiter mode, Redis, snapshot age)."""
    return policy.status()
