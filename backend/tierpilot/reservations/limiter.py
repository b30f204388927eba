"""Work-conserving token buckets shared by gateway processes through Redis.

Per direction the pool's capacity C is split into *classes*: every active reservation gets a
bucket refilled at its rate, best-effort traffic one bucket refilled at the unreserved remainder.
A pool bucket refilled at C is debited by every byte moved. A grant is either

* *guaranteed*: the class bucket holds the bytes (granted whatever else runs), or
* *spare*: the class is past its rate, and the pool bucket holds bytes nobody else used
  (an idle reservation's rate, idle best-effort share) — that is what makes it work-conserving.

Class rates sum to C and spare grants only spend what the pool bucket accumulated. A class that
was idle saves up to half a second of its rate to catch up with; but while it was idle others may
have taken that capacity as spare, so saved tokens are spent only while the pool's debt stays
within 0.1 s of C. A steady flow at its rate never meets that limit, and the total stays within C
plus that debt.

Processes lease bytes in small batches (about 20 ms of the class's rate) with one atomic Lua
script and spend them from a local buffer: Redis is called per lease, never per chunk. When Redis
is unreachable each process runs the same buckets in memory with its share of the rates (the
number of live gateway processes last seen in Redis) and reports it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

log = logging.getLogger(__name__)

LEASE_S = 0.02  # a lease covers this much of a class's rate
MIN_LEASE = 64 * 1024
MAX_LEASE = 4 * 1024 * 1024
CLASS_BURST_S = 0.5  # bytes a class may save while idle, in seconds of its rate
POOL_BURST_S = 0.25
# A class may spend tokens it saved while idle only while the pool's debt stays within this: capacity an
# idle class left unused may already have gone to others as spare, and must not be spent twice.
POOL_DEBT_S = 0.1
MIN_BURST = 2 * MAX_LEASE
MAX_WAIT_S = 0.05  # a denied lease retries at least this often
KEY_TTL_MS = 30_000
REDIS_RETRY_S = 5.0  # after an error, how long a process runs on local buckets before trying Redis again
HEARTBEAT_S = 2.0
PROCESS_TTL_S = 10.0

# KEYS: class bucket, pool bucket. ARGV: class rate, class burst, pool rate, pool burst, want, ttl ms,
# pool debt allowed. Returns {guaranteed bytes, spare bytes, wait in microseconds}. Redis' clock times every bucket, so
# hosts with skewed clocks still share one timeline; times are integer microseconds (exact in doubles).
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
local guaranteed, spare, wait = 0, 0, 0
if c >= want and p - want >= -pd then
  guaranteed = want
  c = c - want
  p = p - want
elseif p >= want then
  spare = want
  p = p - want
else
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
return {guaranteed, spare, wait}
"""


@dataclass(frozen=True)
class Grant:
    guaranteed: int
    spare: int
    wait_s: float

    @property
    def granted(self) -> int:
        return self.guaranteed + self.spare


@dataclass(frozen=True)
class Lease:
    """One lease request: ``want`` bytes for a class of a direction's pool."""

    direction: str
    klass: str
    class_rate: int
    pool_rate: int
    want: int

    @property
    def class_burst(self) -> int:
        return max(int(self.class_rate * CLASS_BURST_S), MIN_BURST)

    @property
    def pool_burst(self) -> int:
        return max(int(self.pool_rate * POOL_BURST_S), MIN_BURST)

    @property
    def pool_debt(self) -> int:
        return max(int(self.pool_rate * POOL_DEBT_S), MIN_BURST)


def lease_size(rate: int) -> int:
    return min(MAX_LEASE, max(MIN_LEASE, int(rate * LEASE_S)))


def class_key(direction: str, klass: str) -> str:
    # the hash tag keeps a direction's buckets in one Redis Cluster slot (one script touches two)
    return f"tp:{{{direction}}}:class:{klass}"


def pool_key(direction: str) -> str:
    return f"tp:{{{direction}}}:pool"


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
        now = self._clock()
        cr, pr = req.class_rate * share, req.pool_rate * share
        ck, pk = class_key(req.direction, req.klass), pool_key(req.direction)
        c = self._level(ck, cr, req.class_burst, now, req.want)
        p = self._level(pk, pr, req.pool_burst, now, req.want)
        want = req.want
        guaranteed = spare = 0
        wait = 0.0
        if c >= want and p - want >= -req.pool_debt:
            guaranteed, c, p = want, c - want, p - want
        elif p >= want:
            spare, p = want, p - want
        else:
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
        return Grant(guaranteed, spare, wait)

    async def lease(self, req: Lease) -> Grant:
        return self.lease_now(req)


class RedisBackend:
    def __init__(self, client: Any) -> None:
        self._client = client
        self._script = client.register_script(LEASE_SCRIPT)

    async def lease(self, req: Lease) -> Grant:
        g, s, w = await self._script(
            keys=[class_key(req.direction, req.klass), pool_key(req.direction)],
            args=[req.class_rate, req.class_burst, req.pool_rate, req.pool_burst, req.want, KEY_TTL_MS,
                  req.pool_debt],
        )
        return Grant(int(g), int(s), int(w) / 1_000_000)


@dataclass
class LimiterStatus:
    mode: str  # "redis" | "local"
    redis: str  # "ok" | "not configured" | "error: ..."
    processes: int
    since: float = field(default_factory=time.time)


class SharedBuckets:
    """Redis buckets with a fall-back to in-memory ones at this process's share of the rates."""

    def __init__(self, redis_url: str | None, process_id: str | None = None) -> None:
        self.process_id = process_id or f"{socket.gethostname()}:{os.getpid()}:{id(self):x}"
        self._memory = MemoryBackend()
        self._client: Any = None
        self._redis: RedisBackend | None = None
        self._down_until = 0.0
        self._last_heartbeat = 0.0
        self._processes = 1
        if redis_url:
            import redis.asyncio as aioredis

            self._client = aioredis.Redis.from_url(redis_url, socket_timeout=0.5, socket_connect_timeout=0.5,
                                                   health_check_interval=0)
            self._redis = RedisBackend(self._client)
            self.status = LimiterStatus("redis", "ok", 1)
        else:
            self.status = LimiterStatus("local", "not configured", 1)

    @property
    def client(self) -> Any:
        return self._client

    def _fail(self, exc: BaseException) -> None:
        if self.status.mode == "redis":
            log.warning("redis unreachable, enforcing per-process limits (1/%d of each rate): %s",
                        self._processes, exc)
            self.status = LimiterStatus("local", f"error: {type(exc).__name__}: {exc}"[:300], self._processes)
        self._down_until = time.monotonic() + REDIS_RETRY_S

    async def heartbeat(self) -> None:
        """Register this process and count the live ones (their count divides rates when Redis is down)."""
        if self._client is None:
            return
        now = time.time()
        try:
            pipe = self._client.pipeline(transaction=True)
            pipe.zadd("tp:gateways", {self.process_id: now})
            pipe.zremrangebyscore("tp:gateways", 0, now - PROCESS_TTL_S)
            pipe.zcard("tp:gateways")
            result = await pipe.execute()
            self._processes = max(1, int(result[-1]))
        except Exception as exc:  # noqa: BLE001  (any Redis failure means: run locally)
            self._fail(exc)
            return
        if self.status.mode != "redis" and time.monotonic() >= self._down_until:
            log.info("redis reachable again, shared buckets restored")
            self.status = LimiterStatus("redis", "ok", self._processes)
        self.status.processes = self._processes

    async def lease(self, req: Lease) -> Grant:
        if self._redis is not None and time.monotonic() >= self._down_until:
            try:
                grant = await self._redis.lease(req)
                if self.status.mode != "redis":
                    self.status = LimiterStatus("redis", "ok", self._processes)
                return grant
            except Exception as exc:  # noqa: BLE001
                self._fail(exc)
        return self._memory.lease_now(req, 1.0 / self._processes if self._redis is not None else 1.0)

    async def close(self) -> None:
        if self._client is not None:
            with contextlib.suppress(Exception):  # closing: nothing left to report to
                await self._client.zrem("tp:gateways", self.process_id)
            await self._client.aclose()


class ClassBuffer:
    """This process's lease buffer of one class: chunks spend it without leaving the event loop."""

    __slots__ = ("tokens", "lock", "guaranteed", "spare", "waited_s")

    def __init__(self) -> None:
        self.tokens = 0
        self.lock = asyncio.Lock()
        self.guaranteed = 0
        self.spare = 0
        self.waited_s = 0.0


RateOf = Callable[[], tuple[str, int]]  # -> (class, bytes/s) current for this flow


class Scheduler:
    """Pays for chunks out of per-class buffers refilled by leases from the shared buckets."""

    def __init__(self, buckets: Backend | SharedBuckets, pool_rate: Callable[[str], int]) -> None:
        self._buckets = buckets
        self._pool_rate = pool_rate
        self._buffers: dict[tuple[str, str], ClassBuffer] = {}

    def buffer(self, direction: str, klass: str) -> ClassBuffer:
        buf = self._buffers.get((direction, klass))
        if buf is None:
            buf = self._buffers[(direction, klass)] = ClassBuffer()
        return buf

    def buffers(self) -> dict[tuple[str, str], ClassBuffer]:
        return self._buffers

    def forget(self, keep: set[str]) -> None:
        """Drop the idle buffers of classes not in ``keep`` (reservations that ended or were cancelled)."""
        for key, buf in list(self._buffers.items()):
            if key[1] not in keep and not buf.lock.locked() and buf.tokens >= 0:
                del self._buffers[key]

    async def pay(self, direction: str, nbytes: int, rate_of: RateOf,
                  sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep) -> None:
        """Return once ``nbytes`` of the flow's class are paid; the fast path does not await."""
        klass, rate = rate_of()
        buf = self.buffer(direction, klass)
        buf.tokens -= nbytes
        if buf.tokens >= 0:
            return
        async with buf.lock:
            # the holder pays every waiter's debt, so after it the others pass at once
            while buf.tokens < 0:
                klass_now, rate = rate_of()
                if klass_now != klass:
                    # the flow changed class (reservation ended or cancelled): settle the debt there
                    debt, buf.tokens = -buf.tokens, 0
                    await self.pay(direction, debt, rate_of, sleep)
                    return
                pool = self._pool_rate(direction)
                want = max(lease_size(rate or pool // 100), min(-buf.tokens, MAX_LEASE))
                req = Lease(direction, klass, rate, pool, 0)
                want = min(want, req.class_burst, req.pool_burst)
                grant = await self._buckets.lease(Lease(direction, klass, rate, pool, want))
                if grant.granted:
                    buf.tokens += grant.granted
                    buf.guaranteed += grant.guaranteed
                    buf.spare += grant.spare
                else:
                    wait = min(MAX_WAIT_S, max(0.0005, grant.wait_s))
                    buf.waited_s += wait
                    await sleep(wait)
