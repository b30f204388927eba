"""Shared generation counters: a writer bumps one after committing a change, readers compare it per request.

A process that caches what a change may invalidate (the gateway's S3 credentials) reads the counter before it
uses the cache and empties the cache when the counter moved. Unlike a pushed message this cannot arrive late:
the writer bumps before it answers, so any request that starts after the answer sees the new value. Without
a reachable Redis a reader gets None and must not use its cache.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger("tierpilot.generations")

PREFIX = "tierpilot:generation:"
RETRY_S = 1.0  # after a Redis error a reader answers None at once for this long instead of waiting again
_clients: dict[str, Any] = {}
_lock = threading.Lock()


def bump(url: str, name: str) -> int | None:
    """Advance the counter; its new value, or None when Redis is not configured or not reachable."""
    if not url:
        return None
    import redis

    with _lock:
        client = _clients.get(url)
        if client is None:
            client = _clients[url] = redis.Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0)
    try:
        return int(client.incr(PREFIX + name))
    except Exception as exc:  # noqa: BLE001  (the change is committed; readers' caches expire on their own)
        log.warning("could not bump generation %s: %s", name, exc)
        return None


class Reader:
    """Reads one counter on an event loop (one Redis GET), or None while Redis is unset or failing."""

    def __init__(self, url: str, name: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.key = PREFIX + name
        self._clock = clock
        self._down_until = 0.0
        self._client: Any = None
        if url:
            import redis.asyncio as aioredis

            self._client = aioredis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)

    async def current(self) -> int | None:
        if self._client is None or self._clock() < self._down_until:
            return None
        try:
            value = await self._client.get(self.key)
        except Exception as exc:  # noqa: BLE001  (any Redis failure: the caller bypasses its cache)
            log.warning("cannot read generation %s, caches it guards are bypassed for %.0f s: %s",
                        self.key, RETRY_S, exc)
            self._down_until = self._clock() + RETRY_S
            return None
        return int(value or 0)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
