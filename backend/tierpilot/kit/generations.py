"""Shared generation counters: a writer moves one when it commits a change, readers compare it per request.

A process that caches what a change may invalidate (the gateway's S3 credentials, buckets' sharing states)
reads the counter before it uses the cache (``GenerationCache``) and uses only entries read under the value it
sees. Unlike a pushed message this cannot arrive late: the writer moves the counter before it answers, so any
request that starts after the answer sees the new value.

A move sets a new random value rather than adding one: a Redis restarted without its data cannot count back
up to a value a reader still holds entries under.

Without Redis, an installation on SQLite keeps the counter in a file next to the database file, which every
process of it shares (SQLite allows no other kind of sharing): a move appends one byte, a read is one
``stat`` (no round trip, no thread). On PostgreSQL without Redis there is no counter and readers cache
nothing; with Redis configured but unreachable a reader gets None and uses no entry read under a counter.
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
import time
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, Generic, TypeVar

from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from tierpilot.kit import redisclient
from tierpilot.kit.cache import TTLCache
from tierpilot.kit.db import after_commit
from tierpilot.kit.errors import DomainError
from tierpilot.kit.settings import get_settings

log = logging.getLogger("tierpilot.generations")

PREFIX = "tierpilot:generation:"
RETRY_S = 1.0  # after a Redis error a reader answers None at once for this long instead of waiting again

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class GenerationUnavailable(DomainError):
    """A change that takes access away could not move its counter: it is refused (rolled back), since the
    processes caching what it changes would not hear of it."""

    status_code = 503


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


def _move(url: str, name: str) -> int | None:
    """Move the counter: its new value, None when there is no counter (PostgreSQL without Redis: nothing is
    cached), or the error (OSError, a Redis error) when it cannot be moved."""
    if not url:
        path = local_file(name)
        if path is None:
            return None
        path.parent.mkdir(exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            os.write(fd, b".")  # O_APPEND: concurrent bumps each add their byte
        finally:
            os.close(fd)
        return _file_generation(path)
    value = secrets.randbits(62) + 1
    redisclient.shared(url).set(PREFIX + name, value)
    return value


def bump(url: str, name: str) -> int | None:
    """Move the counter, best effort: its new value, or None when there is none or it cannot be moved
    (logged). For changes that only add access: a reader then sees them when its entries expire."""
    try:
        return _move(url, name)
    except Exception as exc:  # noqa: BLE001  (any OSError or Redis failure)
        log.warning("could not bump generation %s: %s", name, exc)
        return None


def changing(session: Session, name: str) -> None:
    """For a change in ``session`` that may take access away: move the counter now (GenerationUnavailable,
    which rolls the change back, when it cannot be moved) and again once the change has committed.

    The first move proves the counter can be told before anything is committed; the second is the one
    readers must see, since between the two a reader may still cache what the database held before the
    commit. A failure of the second alone (the counter's store lost within the same few milliseconds) is
    logged as an error: caches may then keep the old state for their TTL.
    """
    url = get_settings().redis_url
    try:
        _move(url, name)
    except Exception as exc:  # noqa: BLE001  (any OSError or Redis failure)
        log.error("refused a change: generation %s cannot be moved: %s", name, exc)
        raise GenerationUnavailable(f"the change was not made: the processes caching it cannot be told "
                                    f"({'Redis' if url else 'the generation file'} is not writable: {exc}); "
                                    "try again when it is") from None
    after_commit(session, lambda: _after(url, name))


def _after(url: str, name: str) -> None:
    try:
        _move(url, name)
    except Exception as exc:  # noqa: BLE001
        log.error("generation %s not moved after a committed change; caches keep the old state for their "
                  "TTL: %s", name, exc)


def changed(session: Session, name: str) -> None:
    """For a change in ``session`` that only adds access or that no cache holds: move the counter after the
    commit, best effort."""
    url = get_settings().redis_url
    after_commit(session, lambda: bump(url, name))


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


class GenerationCache(Generic[K, V]):
    """key -> value, each entry kept with the generation it was read under and used only under that one.

    ``generation()`` reads the counter once per request; ``get`` answers an entry read under that value, or
    with ``stale_ok`` any entry (its age bounded by the TTL: for callers that accept a change reaching them
    late, e.g. a bucket owner's own requests). An entry read while the counter could not be read (None) is
    used only with ``stale_ok``: a value read before a change can never be kept under the change's value.
    """

    def __init__(self, name: str, ttl: float, timer: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self._cache: TTLCache[K, tuple[int | None, V]] = TTLCache(ttl, timer=timer)
        self._lock = threading.Lock()
        self._generation: int | None = None
        self.reader: Reader | None = None

    def start(self, redis_url: str) -> None:
        self.reader = Reader(redis_url, self.name)

    async def stop(self) -> None:
        if self.reader is not None:
            await self.reader.close()
            self.reader = None

    async def generation(self) -> int | None:
        """The counter now (None: unknown); entries of older values are dropped when it moved."""
        generation = await self.reader.current() if self.reader is not None else None
        if generation is not None:
            with self._lock:
                if generation != self._generation:
                    self._cache.clear()
                    self._generation = generation
        return generation

    def get(self, key: K, generation: int | None, *, stale_ok: bool = False) -> V | None:
        entry = self._cache.get(key)
        if entry is None:
            return None
        read_under, value = entry
        return value if stale_ok or (generation is not None and read_under == generation) else None

    def put(self, key: K, value: V, generation: int | None) -> None:
        """Keep ``value``, read from the database after ``generation()`` answered ``generation``."""
        self._cache.put(key, (generation, value))

    def forget(self, key: K) -> None:
        """Drop an entry this process just changed (its own next request must not use the old one)."""
        self._cache.pop(key)
