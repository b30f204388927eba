"""Shared generation counters: a writer moves one when it commits a change, readers compare it per request.

A process that caches what a change may invalidate (the gateway's S3 credentials, buckets' sharing states)
reads the counter before it uses the cache (``GenerationCache``) and uses only entries read under the value it
sees. Unlike a pushed message this cannot arrive late: the writer moves the counter before it answers, so any
request that starts after the answer sees the new value.

A move sets a new random value rather than adding one: a Redis restarted without its data cannot count back
up to a value a reader still holds entries under.

Without Redis, an installation on SQLite keeps the counter in a file next to the database file, which every
process of it shares (SQLite allows no other kind of sharing): 16 bytes, the counter and when the file was
made. A move writes a new random value into it; a reader maps the file and reads the value from memory (no
system call: a ``stat`` per request was one of each request's few system calls), and looks at the path again
at most every ``REVALIDATE_S`` (a file removed, or replaced by a new one, is found then). A missing file (or
one of another format) reads as 0. The rule that keeps a reader's next request from using an entry older than
an answered change: tierpilot never removes, truncates or renames over a valid file, and the writer that
moves the counter of a file made less than ``REVALIDATE_S`` ago waits out the rest before it answers, so by
then every reader has looked at the path since the file was made. Nobody else should remove or replace it
while the installation runs: a file put back from elsewhere may be seen up to ``REVALIDATE_S`` late, and one
truncated under a reader's mapping kills that process (SIGBUS). On PostgreSQL without Redis there is no
counter and readers cache nothing; with Redis configured but unreachable a reader gets None and uses no entry
read under a counter.

With Redis, a process reads every counter of one URL together (``_Counters``: one MGET over a connection of its
own), and requests asking at about the same time share a read; but only one sent after they asked, never the
one already under way when they did (it may have been answered before the writer moved the counter). A request
that checks several counters (its caller's key, its bucket's sharing state, the objects it reads) passes one
``Seen`` to each check and waits for one read: any read sent after the request began sees every change answered
before it began, which is all a check asks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import mmap
import os
import secrets
import stat
import struct
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
REVALIDATE_S = 1.0  # a reader of a counter file looks at its path again at most this long after it last did
_MARGIN_S = 0.05  # for the writer's clock read before its new file was in place
_COUNTER = struct.Struct("<q")
_LAYOUT = struct.Struct("<qq")  # the counter, then when the file was made (nanoseconds since the epoch)

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


def _move_file(path: Path) -> tuple[int, float]:
    """Write a new value into the counter file, making the file when it is missing or not a counter file:
    the value, and until when (``time.time()``) readers may not all have looked at the file since it was made."""
    value = secrets.randbits(62) + 1
    for _attempt in range(3):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        except FileNotFoundError:
            made = _make_file(path, value, replace=False)
            if made is None:  # another writer made it first: move that one
                continue
            return value, made + REVALIDATE_S + _MARGIN_S
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size != _LAYOUT.size:  # e.g. the byte-a-move file of before
                made = _make_file(path, value, replace=True)
                assert made is not None
            else:
                os.pwrite(fd, _COUNTER.pack(value), 0)
                made = _LAYOUT.unpack(os.pread(fd, _LAYOUT.size, 0))[1] / 1e9
        finally:
            os.close(fd)
        return value, made + REVALIDATE_S + _MARGIN_S
    raise FileExistsError(f"{path} neither opens nor can be made (a dangling symbolic link?)")


def _make_file(path: Path, value: int, *, replace: bool) -> float | None:
    """A complete counter file at ``path`` (written aside, then linked or renamed in place: no reader maps a
    shorter one): when it was made, or None when ``path`` exists and ``replace`` is false."""
    path.parent.mkdir(exist_ok=True)
    aside = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    made = time.time()
    fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, _LAYOUT.pack(value, int(made * 1e9)))
        if replace:
            os.replace(aside, path)
        else:
            try:
                os.link(aside, path)
            except FileExistsError:
                return None
    finally:
        os.close(fd)
        aside.unlink(missing_ok=True)
    return made


def _move(url: str, name: str) -> tuple[int, float] | None:
    """Move the counter: its new value and until when readers may miss it (see ``_move_file``), None when
    there is no counter (PostgreSQL without Redis: nothing is cached), or the error (OSError, a Redis error)
    when it cannot be moved."""
    if not url:
        path = local_file(name)
        return None if path is None else _move_file(path)
    value = secrets.randbits(62) + 1
    redisclient.shared(url).set(PREFIX + name, value)
    return value, 0.0


def bump(url: str, name: str) -> int | None:
    """Move the counter, best effort: its new value, or None when there is none or it cannot be moved
    (logged). For changes that only add access: a reader then sees them when its entries expire."""
    try:
        moved = _move(url, name)
    except Exception as exc:  # noqa: BLE001  (any OSError or Redis failure)
        log.warning("could not bump generation %s: %s", name, exc)
        return None
    return None if moved is None else moved[0]


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
        moved = _move(url, name)
    except Exception as exc:  # noqa: BLE001
        log.error("generation %s not moved after a committed change; caches keep the old state for their "
                  "TTL: %s", name, exc)
        return
    # a counter file made just now: readers that have not looked at its path since would miss the move
    wait = 0.0 if moved is None else moved[1] - time.time()
    if wait > 0:
        time.sleep(min(wait, REVALIDATE_S + _MARGIN_S))


def changed(session: Session, name: str) -> None:
    """For a change in ``session`` that only adds access or that no cache holds: move the counter after the
    commit, best effort (once however many changes the transaction made)."""
    url = get_settings().redis_url
    after_commit(session, lambda: bump(url, name), key=(PREFIX, name))


class _Counters:
    """The counters registered on one Redis URL, read for this process by one MGET on a connection of its own.

    At most one read is in flight. A caller waits for the next read to be sent: at once when none is in
    flight, else as soon as the one in flight returns. That next read serves every caller that asked before it
    was sent; none is served by a read sent before it asked (a writer may have moved its counter and answered
    meanwhile). Under load a process thus sends about one read per round trip instead of one per request per
    counter, and a read costs one command already packed (no pool, no per-call packing).

    After a failure (connection refused, no reply in ``TIMEOUT_S``, an error reply) every reader of the URL
    gets None for ``RETRY_S`` without waiting.
    """

    TIMEOUT_S = 0.5  # connecting included

    def __init__(self, url: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.url = url
        self.clock = clock
        self.keys: dict[str, int] = {}  # key -> readers registered for it
        self.reads = 0  # MGETs sent (tests count them)
        self._down_until = 0.0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._conn: Any = None
        self._packed: tuple[list[str], Any] | None = None  # the keys and the MGET packed for them
        self._waiting: list[asyncio.Future[dict[str, int] | None]] = []  # callers of the read not yet sent
        self._driver: asyncio.Task[None] | None = None  # sends the reads while callers wait

    def register(self, key: str) -> None:
        self.keys[key] = self.keys.get(key, 0) + 1
        self._packed = None

    def unregister(self, key: str) -> bool:
        """Drop one reader of ``key``: whether any key is still read."""
        left = self.keys.get(key, 0) - 1
        if left > 0:
            self.keys[key] = left
        else:
            self.keys.pop(key, None)
        self._packed = None
        return bool(self.keys)

    async def read(self) -> dict[str, int] | None:
        """Every registered key's counter, read by a command sent after this call; None while Redis fails."""
        if self.clock() < self._down_until:
            return None
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._bind(loop)
        waiter: asyncio.Future[dict[str, int] | None] = loop.create_future()
        self._waiting.append(waiter)
        if self._driver is None:
            self._driver = loop.create_task(self._drive())
        return await waiter  # its own future: a caller that is cancelled cancels no other

    async def _drive(self) -> None:
        batch: list[asyncio.Future[dict[str, int] | None]] = []
        try:
            while self._waiting:
                batch, self._waiting = self._waiting, []
                values = await self._mget()
                for waiter in batch:
                    if not waiter.done():
                        waiter.set_result(values)
        finally:
            self._driver = None
            for waiter in (*batch, *self._waiting):  # cancelled (the loop is closing): nobody waits for ever
                if not waiter.done():
                    waiter.set_result(None)
            self._waiting = []

    async def _mget(self) -> dict[str, int] | None:
        if self.clock() < self._down_until:  # the read before failed: its successors do not wait again
            return None
        if self._packed is None:
            keys = list(self.keys)
            self._packed = keys, self._conn.pack_command("MGET", *keys) if keys else None
        keys, packed = self._packed
        if packed is None:
            return {}
        self.reads += 1
        try:
            async with asyncio.timeout(self.TIMEOUT_S):
                await self._conn.send_packed_command(packed, check_health=False)
                values = await self._conn.read_response()
            return {key: int(value or 0) for key, value in zip(keys, values, strict=True)}
        except Exception as exc:  # noqa: BLE001  (any Redis failure: the callers bypass their caches)
            log.warning("cannot read generations %s, caches they guard are bypassed for %.0f s: %s",
                        ", ".join(keys), RETRY_S, str(exc) or type(exc).__name__)
            self._down_until = self.clock() + RETRY_S
            if self._conn.is_connected:  # a reply may still come: the next read must not take it for its own
                with contextlib.suppress(Exception):
                    await self._conn.disconnect(nowait=True)
            return None

    def _bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start over on ``loop``: a connection and futures belong to the loop they were made on."""
        import redis.asyncio as aioredis

        # no socket timeout of its own (it would wrap each send in a task): TIMEOUT_S bounds the whole read
        pool: Any = aioredis.ConnectionPool.from_url(self.url, socket_timeout=None,
                                                     socket_connect_timeout=self.TIMEOUT_S)
        self._loop, self._conn, self._waiting, self._driver = loop, pool.make_connection(), [], None

    async def close(self) -> None:
        if self._conn is not None and self._loop is asyncio.get_running_loop():
            await self._conn.disconnect()
        self._loop = self._conn = self._driver = None
        self._waiting = []


_counters: dict[str, _Counters] = {}
_counters_lock = threading.Lock()


class Seen:
    """The counters one request has read: each Redis URL's at most once, by a read sent after the request began
    (see the module's rule); later checks of any counter of that URL take their value from it."""

    __slots__ = ("_reads",)

    def __init__(self) -> None:
        self._reads: dict[_Counters, dict[str, int] | None] = {}


class _FileCounter:
    """The counter of an SQLite installation without Redis, read from its file mapped into memory; the path is
    looked at again at most every ``REVALIDATE_S`` (see the module's rule for files made or replaced)."""

    def __init__(self, path: Path, clock: Callable[[], float] = time.monotonic) -> None:
        self.path = path
        self.clock = clock
        self._map: mmap.mmap | None = None
        self._file: tuple[int, int] | None = None  # the mapped file's device and inode
        self._look_at = float("-inf")

    def value(self) -> int:
        now = self.clock()
        if now >= self._look_at:
            self._look(now)
        counter = self._map
        return 0 if counter is None else int(_COUNTER.unpack_from(counter)[0])

    def _look(self, now: float) -> None:
        self._look_at = now + REVALIDATE_S  # ``now`` was read before the path: the bound holds
        try:
            st = os.stat(self.path)
            if (st.st_dev, st.st_ino) == self._file:
                return
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:  # missing (or unreadable: no writer can move it either)
            self._map = self._file = None
            return
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size != _LAYOUT.size:  # a writer replaces it before it moves
                self._map = self._file = None
                return
            # the mapping it replaces is left to its references: unmapped when the last goes
            self._map = mmap.mmap(fd, _LAYOUT.size, access=mmap.ACCESS_READ)
            self._file = st.st_dev, st.st_ino
        finally:
            os.close(fd)


class Reader:
    """Reads one counter on an event loop (with every other counter of its Redis URL, see ``_Counters``, or
    from the SQLite installation's file, see ``_FileCounter``), or None while it cannot be read."""

    def __init__(self, url: str, name: str) -> None:
        self.key = PREFIX + name
        path = None if url else local_file(name)
        self.file = None if path is None else _FileCounter(path)
        self._counters: _Counters | None = None
        if url:
            with _counters_lock:
                counters = self._counters = _counters.get(url) or _Counters(url)
                _counters[url] = counters
                counters.register(self.key)

    async def current(self, seen: Seen | None = None) -> int | None:
        """The counter now, or None; with ``seen``, the request's one read of the URL (made now if it has none)."""
        if self.file is not None:
            return self.file.value()
        counters = self._counters
        if counters is None:
            return None
        if seen is None:
            values = await counters.read()
        else:
            reads = seen._reads
            if counters in reads:
                values = reads[counters]
            else:
                values = reads[counters] = await counters.read()
        return None if values is None else values.get(self.key)

    async def close(self) -> None:
        counters, self._counters = self._counters, None
        if counters is None:
            return
        with _counters_lock:
            last = not counters.unregister(self.key)
            if last and _counters.get(counters.url) is counters:
                del _counters[counters.url]
        if last:
            await counters.close()


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

    async def generation(self, seen: Seen | None = None) -> int | None:
        """The counter now (None: unknown), read once per request when every check of it passes the request's
        ``seen``; entries of older values are dropped when it moved."""
        reader = self.reader
        if reader is None:
            return None
        # a counter file is read without a coroutine of the reader's
        generation = reader.file.value() if reader.file is not None else await reader.current(seen)
        if generation is not None and generation != self._generation:
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
