"""The move rate: one budget of bytes per second shared by every worker that copies between tiers.

A virtual clock: each grant of n bytes pushes the budget's next free instant by n / rate, and the
caller sleeps until that instant less a small burst allowance. With Redis (the production broker)
all processes share one clock; without it, the process keeps its own.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

REDIS_KEY = "tierpilot:lifecycle:move-rate"
BURST_S = 0.25  # how far ahead of the average rate a grant may run

# KEYS[1] budget key; ARGV: nbytes, rate (bytes/s), burst seconds. Returns seconds to wait (string).
_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local nextfree = tonumber(redis.call('GET', KEYS[1]) or '0')
if nextfree < now then nextfree = now end
nextfree = nextfree + tonumber(ARGV[1]) / tonumber(ARGV[2])
redis.call('SET', KEYS[1], tostring(nextfree), 'EX', 3600)
local wait = nextfree - now - tonumber(ARGV[3])
if wait < 0 then wait = 0 end
return tostring(wait)
"""


class RateLimiter:
    """``acquire(n)`` blocks until n more bytes fit the rate; rate 0 means no limit."""

    def __init__(self, rate_bps: float, redis_url: str | None = None, key: str = REDIS_KEY) -> None:
        self.rate_bps = rate_bps
        self.key = key
        self._lock = threading.Lock()
        self._next_free = 0.0
        self._redis = None
        self._script = None
        if redis_url and rate_bps > 0:
            import redis

            self._redis = redis.Redis.from_url(redis_url)
            self._script = self._redis.register_script(_LUA)

    @property
    def limited(self) -> bool:
        return self.rate_bps > 0

    def _wait_for(self, nbytes: int) -> float:
        if self._script is not None:
            try:
                return float(self._script(keys=[self.key], args=[nbytes, self.rate_bps, BURST_S]))
            except Exception:  # a broker hiccup must not stop moves: fall back to this process's clock
                pass
        with self._lock:
            now = time.monotonic()
            self._next_free = max(self._next_free, now) + nbytes / self.rate_bps
            return max(0.0, self._next_free - now - BURST_S)

    def acquire(self, nbytes: int) -> float:
        """Wait until ``nbytes`` may pass; returns the seconds waited."""
        if not self.limited or nbytes <= 0:
            return 0.0
        wait = self._wait_for(nbytes)
        if wait > 0:
            time.sleep(wait)
        return wait

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


_shared: RateLimiter | None = None
_shared_lock = threading.Lock()


def move_limiter() -> RateLimiter:
    """The process's limiter for lifecycle moves, built from the settings (rebuilt when they change)."""
    global _shared
    from tierpilot.kit.settings import get_settings

    s = get_settings()
    rate = s.lifecycle_move_rate_mbps * 1e6
    with _shared_lock:
        if _shared is None or _shared.rate_bps != rate:
            _shared = RateLimiter(rate, s.redis_url or None)
        return _shared
