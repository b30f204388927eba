"""Shared generation counters: a writer bumps one after committing a change, readers compare it per request.

A process that caches what a change may invalidate (the gateway's S3 credentials) reads the counter before it
uses the cache and empties the cache when the counter moved. Unlike a pushed message this cannot arrive late:
the writer bumps before it answers, so any request that starts after the answer sees the new value.

Without Redis, an installation on SQLite keeps the counter in a file next to the database file, which every
process of it shares (SQLite allows no other kind of sharing): a bump appends one byte, a read is one
``stat`` (no round trip, no thread). On PostgreSQL without Redis, or with Redis configured but unreachable,
a reader gets None and must not use its cache.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

from tierpilot.kit.settings import get_settings

log = logging.getLogger("tierpilot.generations")

PREFIX = "tierpilot:generation:"
RETRY_S = 1.0  # after a Redis error a reader answers None at once for this long instead of waiting again
_clients: dict[str, Any] = {}
_lock = threading.Lock()


def local_file(name: str, database_url: str | None = None) -> Path | None:
    """The file that holds the counter without Redis: beside the SQLite database, or None on any other."""
    url = make_url(database_url or get_settings().sqlalchemy_url)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return Path(url.database).resolve().with_name(f"{Path(url.database).name}.generations") / name.replace(":", "-")


def _file_generation(path: Path) -> int:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return 0
    # the size moves with each bump; inode and time make a file removed and made again a new generation too
    return hash((st.st_size, st.st_ino, st.st_mtime_ns))


def bump(url: str, name: str) -> int | None:
    """Advance the counter; its new value, or None when it cannot be kept (no Redis and not SQLite, or
    Redis not reachable)."""
    if not url:
        path = local_file(name)
        if path is None:
            return None
        try:
            path.parent.mkdir(exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                os.write(fd, b".")  # O_APPEND: concurrent bumps each add their byte
            finally:
                os.close(fd)
        except OSError as exc:
            log.warning("could not bump generation %s in %s: %s", name, path, exc)
            return None
        return _file_generation(path)
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
    """Reads one counter on an event loop (one Redis GET, or a ``stat`` of the SQLite installation's file),
    or None while it cannot be read."""

    def __init__(self, url: str, name: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.key = PREFIX + name
        self._clock = clock
        self._down_until = 0.0
        self._client: Any = None
        self.file = None if url else local_file(name)
        if url:
            import redis.asyncio as aioredis

            self._client = aioredis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)

    async def current(self) -> int | None:
        if self.file is not None:
            return _file_generation(self.file)
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
