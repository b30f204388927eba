"""The one rate limiter: work-conserving token buckets shared by processes through Redis.

A *scope* (a direction of the gateway's pool, the lifecycle's copies) has a capacity C split into
*classes*: every class gets a bucket refilled at its rate, and a pool bucket refilled at C is debited
by every byte moved. A grant is either

* *guaranteed*: the class bucket holds the bytes (granted whatever else runs), or
* *spare*: the class is past its rate, and the pool bucket holds bytes nobody else used
  (an idle class's rate) — that is what makes it work-conserving.

Class rates sum to C and spare grants only spend what the pool bucket accumulated. A class that
was idle saves up to ``Burst.class_s`` of its rate to catch up with; but while it was idle others may
have taken that capacity as spare, so saved tokens are spent only while the pool's debt stays
within ``Burst.pool_debt_s`` of C. A steady flow at its rate never meets that limit, and the total
stays within C plus that debt.

Processes lease bytes in small batches (about 20 ms of the class's rate) with one atomic Lua
script and spend them from a local buffer: Redis is called per lease, never per chunk. When Redis
is unreachable each process runs the same buckets in memory with its share of the rates (the
number of live processes last counted by ``SharedBuckets.heartbeat``) and reports it.

``Scheduler`` pays for the flows of an event loop (``SharedBuckets``); ``Throttle`` paces threads
at one rate (``BlockingBuckets``). Every clock is injectable, so tests move time instead of sleeping.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from tierpilot.kit.settings import get_settings

log = logging.getLogger(__name__)

LEASE_S = 0.02  # a lease covers this much of a class's rate
MIN_LEASE = 64 * 1024
MAX_LEASE = 4 * 1024 * 1024
MIN_BURST = 2 * MAX_LEASE
MAX_WAIT_S = 0.05  # a denied lease of a Scheduler retries at least this often (rates and classes change)
KEY_TTL_MS = 30_000
REDIS_RETRY_S = 5.0  # after an error, how long a process runs on local buckets before trying Redis again
HEARTBEAT_S = 2.0
PROCESS_TTL_S = 10.0

# KEYS: class bucket, pool bucket. ARGV: class rate, class burst, pool rate, pool burst, want, ttl ms,
# pool debt allowed. Returns {guaranteed bytes, spare bytes, wait in microseconds, now in microseconds, starved}
# (starved: refused although the class held the bytes, because the pool's debt was too deep). Redis' clock times
# every bucket, so hosts with skewed clocks still share one timeline; times are integer microseconds (exact in
# doubles). The decision's time lets callers count grants per slot of that one timeline.
LEASE_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local cr, cb = tonumber(ARGV[1]), tonumber(ARGV[2])
local pr, pb = tonumber(ARGV[3]), tonumber(ARGV[4])
local want, ttl, pd = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
-- a new bucket starts with one lease, so a flow's first chunk does not wait a lease period
local function level(key, rate, burst)
  local v = redis.call('HMGET', key, 'tokens', 'ts')
  local tokens, ts = tonumber(v[1]), tonumber(v[2])
  if tokens == nil or ts == nil then return math.min(want, burst) end
  local dt = now - ts
  if dt < 0 then dt = 0 end
  return math.min(burst, tokens + rate * dt / 1000000)
end
local c = level(KEYS[1], cr, cb)
local p = level(KEYS[2], pr, pb)
local guaranteed, spare, wait, starved = 0, 0, 0, 0
if c >= want and p - want >= -pd then
  guaranteed = want
  c = c - want
  p = p - want
elseif p >= want then
  spare = want
  p = p - want
else
  if c >= want then starved = 1 end
  local g = 1e15
  if cr > 0 then g = math.max(0, (want - c) * 1000000 / cr) end
  local s = 1e15
  if pr > 0 then
    g = math.max(g, (want - pd - p) * 1000000 / pr)
    s = (want - p) * 1000000 / pr
  end
  wait = math.floor(math.min(g, s, 1000000))
end
if p < -pr then p = -pr end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.3f', c), 'ts', string.format('%d', now))
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('HSET', KEYS[2], 'tokens', string.format('%.3f', p), 'ts', string.format('%d', now))
redis.call('PEXPIRE', KEYS[2], ttl)
return {guaranteed, spare, wait, now, starved}
"""

# KEYS: buckets to drain; ARGV: ttl ms, then rate and burst of each key in order. A drained bucket keeps
# its debt but loses the tokens it saved: when those were saved while flows moved bytes without leasing
# (nothing was protected), spending them would be spending capacity twice. A missing bucket starts empty.
DRAIN_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local ttl = tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
  local rate, burst = tonumber(ARGV[2 * i]), tonumber(ARGV[2 * i + 1])
  local v = redis.call('HMGET', key, 'tokens', 'ts')
  local tokens, ts = tonumber(v[1]), tonumber(v[2])
  local level = 0
  if tokens ~= nil and ts ~= nil then
    local dt = now - ts
    if dt < 0 then dt = 0 end
    level = math.min(burst, tokens + rate * dt / 1000000)
  end
  if level > 0 then level = 0 end
  redis.call('HSET', key, 'tokens', string.format('%.3f', level), 'ts', string.format('%d', now))
  redis.call('PEXPIRE', key, ttl)
end
return #KEYS
"""


@dataclass(frozen=True)
class Grant:
    guaranteed: int
    spare: int
    wait_s: float
    at: float = 0.0  # when the buckets decided, on their clock (Redis': Unix seconds; a MemoryBackend's own)
    starved: bool = False  # refused although the class held the bytes: the pool's debt was too deep

    @property
    def granted(self) -> int:
        return self.guaranteed + self.spare


@dataclass(frozen=True)
class Burst:
    """How far a scope's buckets may run ahead of their rates, in seconds of the rate (at least ``floor`` bytes)."""

    class_s: float = 0.5  # what a class may save while idle
    pool_s: float = 0.25
    # a class may spend tokens it saved while idle only while the pool's debt stays within this: capacity an
    # idle class left unused may already have gone to others as spare, and must not be spent twice
    pool_debt_s: float = 0.1
    floor: int = MIN_BURST
    # beyond the debt it pays, a lease asks for at most this much of the pool's rate: what a process's class
    # buffer may hold leased but unspent, and spend in a later second than the buckets counted it in
    spare_lease_s: float = LEASE_S


@dataclass(frozen=True)
class Lease:
    """One lease request: ``want`` bytes for a class of a scope's pool."""

    scope: str
    klass: str
    class_rate: int
    pool_rate: int
    want: int
    burst: Burst = Burst()

    @property
    def class_burst(self) -> int:
        return max(int(self.class_rate * self.burst.class_s), self.burst.floor)

    @property
    def pool_burst(self) -> int:
        return max(int(self.pool_rate * self.burst.pool_s), self.burst.floor)

    @property
    def pool_debt(self) -> int:
        return max(int(self.pool_rate * self.burst.pool_debt_s), self.burst.floor)


def lease_size(rate: int) -> int:
    """Bytes one lease asks for at ``rate`` (about ``LEASE_S`` of it)."""
    return min(MAX_LEASE, max(MIN_LEASE, int(rate * LEASE_S)))


def next_lease(scope: str, klass: str, rate: int, pool_rate: int, debt: int, burst: Burst = Burst()) -> Lease:
    """The lease that pays (part of) ``debt`` bytes: a lease's worth at least (at most ``burst.spare_lease_s``
    of the pool's rate ahead of the debt), never more than a bucket holds."""
    ahead = min(lease_size(rate or pool_rate // 100), max(MIN_LEASE, int(pool_rate * burst.spare_lease_s)))
    want = max(ahead, min(debt, MAX_LEASE))
    shape = Lease(scope, klass, rate, pool_rate, 0, burst)
    return Lease(scope, klass, rate, pool_rate, min(want, shape.class_burst, shape.pool_burst), burst)


def class_key(scope: str, klass: str) -> str:
    # the hash tag keeps a scope's buckets in one Redis Cluster slot (one script touches two)
    return f"tp:{{{scope}}}:class:{klass}"


def pool_key(scope: str) -> str:
    return f"tp:{{{scope}}}:pool"


def _script_call(req: Lease) -> dict[str, list[Any]]:
    return {"keys": [class_key(req.scope, req.klass), pool_key(req.scope)],
            "args": [req.class_rate, req.class_burst, req.pool_rate, req.pool_burst, req.want, KEY_TTL_MS,
                     req.pool_debt]}


def _grant(reply: list[Any]) -> Grant:
    g, s, w, now, starved = reply
    return Grant(int(g), int(s), int(w) / 1_000_000, int(now) / 1_000_000, bool(int(starved)))


def _drain_buckets(scope: str, klass: str, class_rate: int, pool_rate: int) -> list[tuple[str, int, int]]:
    """(key, rate, burst) of the buckets ``drain`` empties: the class's and the scope's pool."""
    shape = Lease(scope, klass, class_rate, pool_rate, 0)
    return [(class_key(scope, klass), class_rate, shape.class_burst), (pool_key(scope), pool_rate, shape.pool_burst)]


class Backend(Protocol):
    async def lease(self, req: Lease) -> Grant: ...


class MemoryBackend:
    """The Lua script's buckets in this process (Redis unreachable, or a single process by choice)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}

    def _level(self, key: str, rate: float, burst: float, now: float, want: float) -> float:
        tokens, ts = self._buckets.get(key, (min(want, burst), now))
        return min(burst, tokens + rate * max(0.0, now - ts))

    def lease_now(self, req: Lease, share: float = 1.0) -> Grant:
        """The script's answer to ``req``, with rates cut to ``share`` of theirs."""
        now = self._clock()
        cr, pr = req.class_rate * share, req.pool_rate * share
        ck, pk = class_key(req.scope, req.klass), pool_key(req.scope)
        c = self._level(ck, cr, req.class_burst, now, req.want)
        p = self._level(pk, pr, req.pool_burst, now, req.want)
        want = req.want
        guaranteed = spare = 0
        wait = 0.0
        starved = False
        if c >= want and p - want >= -req.pool_debt:
            guaranteed, c, p = want, c - want, p - want
        elif p >= want:
            spare, p = want, p - want
        else:
            starved = c >= want
            until_guaranteed = until_spare = math.inf
            if cr > 0:
                until_guaranteed = max(0.0, (want - c) / cr)
            if pr > 0:
                until_guaranteed = max(until_guaranteed, (want - req.pool_debt - p) / pr)
                until_spare = (want - p) / pr
            wait = min(until_guaranteed, until_spare, 1.0)
        p = max(p, -pr)
        self._buckets[ck] = (c, now)
        self._buckets[pk] = (p, now)
        return Grant(guaranteed, spare, wait, now, starved)

    def drain_now(self, scope: str, klass: str, class_rate: int, pool_rate: int) -> None:
        """``DRAIN_SCRIPT`` on these buckets: the class and the pool keep their debt, not their savings."""
        now = self._clock()
        for key, rate, burst in _drain_buckets(scope, klass, class_rate, pool_rate):
            level = self._level(key, rate, burst, now, 0) if key in self._buckets else 0.0
            self._buckets[key] = (min(level, 0.0), now)

    async def lease(self, req: Lease) -> Grant:
        return self.lease_now(req)


class RedisBackend:
    """The script on an asyncio Redis client."""

    def __init__(self, client: Any) -> None:
        self._script = client.register_script(LEASE_SCRIPT)

    async def lease(self, req: Lease) -> Grant:
        return _grant(await self._script(**_script_call(req)))


@dataclass
class LimiterStatus:
    mode: str  # "redis" | "local"
    redis: str  # "ok" | "not configured" | "error: ..."
    processes: int
    since: float = field(default_factory=time.time)


class _Failover:
    """What both bucket clients share: when to use Redis, and the local buckets at this process's share."""

    def __init__(self, shared: bool, clock: Callable[[], float]) -> None:
        self._shared = shared
        self._clock = clock
        self._memory = MemoryBackend(clock)
        self._down_until = 0.0
        self._processes = 1
        self.status = LimiterStatus("redis", "ok", 1) if shared else LimiterStatus("local", "not configured", 1)

    def _use_redis(self) -> bool:
        return self._shared and self._clock() >= self._down_until

    def _reached(self) -> None:
        if self.status.mode != "redis":
            self.status = LimiterStatus("redis", "ok", self._processes)

    def _fail(self, exc: BaseException) -> None:
        if self.status.mode == "redis":
            log.warning("redis unreachable, enforcing per-process limits (1/%d of each rate): %s",
                        self._processes, exc)
            self.status = LimiterStatus("local", f"error: {type(exc).__name__}: {exc}"[:300], self._processes)
        self._down_until = self._clock() + REDIS_RETRY_S

    def _local(self, req: Lease) -> Grant:
        return self._memory.lease_now(req, 1.0 / self._processes if self._shared else 1.0)


class SharedBuckets(_Failover):
    """Redis buckets for an event loop, with a fall-back to in-memory ones at this process's share of the rates."""

    def __init__(self, redis_url: str | None, process_id: str | None = None,
                 processes_key: str = "tp:limiter:processes", clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(bool(redis_url), clock)
        self.process_id = process_id or f"{socket.gethostname()}:{os.getpid()}:{id(self):x}"
        self._processes_key = processes_key
        self._client: Any = None
        self._redis: RedisBackend | None = None
        if redis_url:
            import redis.asyncio as aioredis

            self._client = aioredis.Redis.from_url(redis_url, socket_timeout=0.5, socket_connect_timeout=0.5,
                                                   health_check_interval=0)
            self._redis = RedisBackend(self._client)

    @property
    def client(self) -> Any:
        return self._client

    async def heartbeat(self) -> None:
        """Register this process and count the live ones (their count divides rates when Redis is down)."""
        if self._client is None:
            return
        now = time.time()  # a score other hosts compare: wall time
        try:
            pipe = self._client.pipeline(transaction=True)
            pipe.zadd(self._processes_key, {self.process_id: now})
            pipe.zremrangebyscore(self._processes_key, 0, now - PROCESS_TTL_S)
            pipe.zcard(self._processes_key)
            result = await pipe.execute()
            self._processes = max(1, int(result[-1]))
        except Exception as exc:  # noqa: BLE001  (any Redis failure means: run locally)
            self._fail(exc)
            return
        if self.status.mode != "redis" and self._clock() >= self._down_until:
            log.info("redis reachable again, shared buckets restored")
            self._reached()
        self.status.processes = self._processes

    async def lease(self, req: Lease) -> Grant:
        if self._redis is not None and self._use_redis():
            try:
                grant = await self._redis.lease(req)
            except Exception as exc:  # noqa: BLE001
                self._fail(exc)
            else:
                self._reached()
                return grant
        return self._local(req)

    async def drain(self, scope: str, klass: str, class_rate: int, pool_rate: int) -> None:
        """Forget what a class and the pool saved (see ``DRAIN_SCRIPT``), in Redis or in the local buckets."""
        if self._client is not None and self._use_redis():
            buckets = _drain_buckets(scope, klass, class_rate, pool_rate)
            try:
                await self._client.eval(DRAIN_SCRIPT, len(buckets), *(k for k, _, _ in buckets), KEY_TTL_MS,
                                        *(x for _, rate, burst in buckets for x in (rate, burst)))
            except Exception as exc:  # noqa: BLE001  (Redis down: the local buckets are the ones in use)
                self._fail(exc)
            else:
                self._reached()
                return
        self._memory.drain_now(scope, klass, class_rate, pool_rate)

    async def close(self) -> None:
        if self._client is not None:
            with contextlib.suppress(Exception):  # closing: nothing left to report to
                await self._client.zrem(self._processes_key, self.process_id)
            await self._client.aclose()


class BlockingBuckets(_Failover):
    """The same buckets for threads: a blocking Redis client; one caller at a time (``Throttle`` holds a lock)."""

    def __init__(self, redis_url: str | None, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(bool(redis_url), clock)
        self._script: Any = None
        if redis_url:
            import redis

            client = redis.Redis.from_url(redis_url, socket_timeout=0.5, socket_connect_timeout=0.5)
            self._script = client.register_script(LEASE_SCRIPT)

    def lease(self, req: Lease) -> Grant:
        if self._script is not None and self._use_redis():
            try:
                grant = _grant(self._script(**_script_call(req)))
            except Exception as exc:  # noqa: BLE001  (a broker hiccup must not stop the work: run locally)
                self._fail(exc)
            else:
                self._reached()
                return grant
        return self._local(req)


class Account:
    """This process's leased bytes of one class: spent per chunk without asking anyone."""

    __slots__ = ("tokens", "guaranteed", "spare", "waited_s")

    def __init__(self) -> None:
        self.tokens = 0
        self.guaranteed = 0
        self.spare = 0
        self.waited_s = 0.0

    def settle(self, grant: Grant, max_wait_s: float) -> float:
        """Book a lease's answer; returns how long to wait before asking again (0: granted)."""
        if grant.granted:
            self.tokens += grant.granted
            self.guaranteed += grant.guaranteed
            self.spare += grant.spare
            return 0.0
        wait = min(max_wait_s, max(0.0005, grant.wait_s))
        self.waited_s += wait
        return wait


class ClassBuffer(Account):
    """A class's account in an event loop: one flow at a time refills it; ``charged`` counts every byte
    ever charged to it (a waiting chunk's place in line)."""

    __slots__ = ("lock", "charged")

    def __init__(self) -> None:
        super().__init__()
        self.lock = asyncio.Lock()
        self.charged = 0


RateOf = Callable[[], tuple[str, int]]  # -> (class, bytes/s) current for this flow


class Scheduler:
    """Pays for chunks out of per-class buffers refilled by leases from the shared buckets."""

    def __init__(self, buckets: Backend, pool_rate: Callable[[str], int], burst: Burst = Burst()) -> None:
        self._buckets = buckets
        self._pool_rate = pool_rate
        self._burst = burst
        self._buffers: dict[tuple[str, str], ClassBuffer] = {}

    def buffer(self, scope: str, klass: str) -> ClassBuffer:
        buf = self._buffers.get((scope, klass))
        if buf is None:
            buf = self._buffers[(scope, klass)] = ClassBuffer()
        return buf

    def buffers(self) -> dict[tuple[str, str], ClassBuffer]:
        return self._buffers

    def forget(self, keep: set[str]) -> None:
        """Drop the idle buffers of classes not in ``keep`` (reservations that ended or were cancelled)."""
        for key, buf in list(self._buffers.items()):
            if key[1] not in keep and not buf.lock.locked() and buf.tokens >= 0:
                del self._buffers[key]

    async def pay(self, scope: str, nbytes: int, rate_of: RateOf,
                  sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep) -> None:
        """Return once ``nbytes`` of the flow's class are paid; the fast path does not await."""
        klass, rate = rate_of()
        buf = self.buffer(scope, klass)
        buf.tokens -= nbytes
        buf.charged += nbytes
        if buf.tokens >= 0:
            return
        after = buf.charged  # this chunk is paid once everything charged up to it is
        async with buf.lock:
            # Waiting chunks go in order, each as soon as its own bytes are paid: the holder leases for its
            # chunk, not for those queued behind it. Paying every waiter's debt first released them together,
            # and a chunk paid over several leases came out in one burst, in a later second than its leases.
            while (owed := -buf.tokens - (buf.charged - after)) > 0:
                klass_now, rate = rate_of()
                if klass_now != klass:
                    # the flow changed class (reservation ended or cancelled): its class now pays what is owed
                    buf.tokens += owed
                    await self.pay(scope, owed, rate_of, sleep)
                    return
                req = next_lease(scope, klass, rate, self._pool_rate(scope), owed, self._burst)
                wait = buf.settle(await self._buckets.lease(req), MAX_WAIT_S)
                if wait:
                    await sleep(wait)


THROTTLE_CLASS = "all"
# a throttle runs at most a quarter second of its rate ahead of the average, however long it was idle
THROTTLE_BURST = Burst(class_s=0.25, pool_s=0.25, pool_debt_s=0.0, floor=MIN_LEASE)


class Throttle:
    """Threads pass bytes through one scope at ``rate_bps`` (0: unlimited), shared through Redis when given."""

    def __init__(self, rate_bps: float, scope: str = "throttle", redis_url: str | None = None, *,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        self.rate_bps = rate_bps
        self.scope = scope
        self.buckets = BlockingBuckets(redis_url if rate_bps > 0 else None, clock)
        self.account = Account()
        self._lock = threading.Lock()
        self._sleep = sleep

    @property
    def limited(self) -> bool:
        return self.rate_bps > 0

    def acquire(self, nbytes: int) -> float:
        """Wait until ``nbytes`` may pass; returns the seconds waited."""
        if not self.limited or nbytes <= 0:
            return 0.0
        rate = max(1, int(self.rate_bps))
        waited = 0.0
        with self._lock:  # threads queue here while the holder waits for their bytes too
            account = self.account
            account.tokens -= nbytes
            while account.tokens < 0:
                req = next_lease(self.scope, THROTTLE_CLASS, rate, rate, -account.tokens, THROTTLE_BURST)
                # one class at a fixed rate: the buckets' wait is exact (1 s at most), no need to ask sooner
                wait = account.settle(self.buckets.lease(req), max_wait_s=1.0)
                if wait:
                    self._sleep(wait)
                    waited += wait
        return waited

    def throttle(self, chunks: Iterator[bytes]) -> Iterator[bytes]:
        """Pass a byte stream through at the rate (each chunk is paid for before it is handed on)."""
        try:
            for chunk in chunks:
                self.acquire(len(chunk))
                yield chunk
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()


_throttles: dict[str, Throttle] = {}
_throttles_lock = threading.Lock()


def shared_throttle(scope: str, rate_bps: float) -> Throttle:
    """The process's throttle of ``scope`` through the configured Redis, rebuilt when its rate changes."""
    with _throttles_lock:
        current = _throttles.get(scope)
        if current is None or current.rate_bps != rate_bps:
            current = _throttles[scope] = Throttle(rate_bps, scope, get_settings().redis_url or None)
        return current
