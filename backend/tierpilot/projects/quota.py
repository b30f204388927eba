"""The projects' shared quota counters: what every gateway process reserves a write against before its bytes move.

A project's counter holds its committed use (every stored version and restored copy, as the catalog's totals
say) and the writes in flight. A write reserves its declared size (Content-Length, or the decoded length of an
aws-chunked body; a part its own) and one object before its body is read: refused when committed + in flight +
the write would pass the hard quota. Its bytes are released when the request ends, committed or not; the commit
itself moves the committed use (``on_usage``, called by the catalog in the write's transaction). So what a
project holds never passes its quota by more than the reservations that were in flight when it was reached
(each covered the bytes its write could store), whatever the number of gateway processes sharing the counter.

Where it lives:
- with Redis (``TIERPILOT_REDIS_URL``): two hashes per project in one cluster slot; a reservation is one Lua
  script call that checks and adds, a release one ``HINCRBY`` pipeline; a commit adds its change after it
  committed (a round's changes per project in one pipeline). In-flight bytes are kept per process, so those of a
  process that died are dropped by the next reconciliation (``reconcile``: the committed use read from the
  catalog, set only when no commit moved the counter meanwhile). A counter that cannot be reached refuses the
  write (``CounterUnavailable``: the gateway answers 503 SlowDown), never lets it through unchecked;
- without Redis: columns of the ``projects`` row: a reservation is one conditional UPDATE in a transaction of
  its own; a trigger on the buckets' totals moves the committed use in the write's own transaction (exact: only
  restored copies need the reconciliation).
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from tierpilot.catalog import repository as catalog_repository
from tierpilot.kit.db import after_commit, transaction
from tierpilot.kit.settings import get_settings
from tierpilot.projects.models import Project

log = logging.getLogger(__name__)

ALIVE_S = 30  # a process's in-flight reservations outlive it by at most this long (its heartbeat key's TTL)
TOKEN = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class QuotaRefused(Exception):
    """The write would take the project past its hard quota."""

    def __init__(self, project_id: int, what: str, quota: int, used: int) -> None:
        super().__init__(f"project {project_id}: {what} quota of {quota} would be exceeded ({used} in use or in "
                         "flight)")
        self.what, self.quota, self.used = what, quota, used


class CounterUnavailable(Exception):
    """The shared counter cannot be reached: the write is refused rather than let through unchecked."""


@dataclass(frozen=True)
class Limits:
    quota_bytes: int | None
    quota_objects: int | None

    @property
    def any(self) -> bool:
        return self.quota_bytes is not None or self.quota_objects is not None


def _keys(project_id: int) -> tuple[str, str]:
    tag = f"tp:{{quota:{project_id}}}"
    return f"{tag}:used", f"{tag}:flight"


def _alive_key(token: str) -> str:
    return f"tp:quota-alive:{token}"


# KEYS: used, flight. ARGV: token, bytes, objects, quota bytes, quota objects (-1: none).
# Replies 1 (reserved), 0 bytes over, 2 objects over (with the use seen), -1 (the counter was never seeded).
RESERVE = """
if redis.call('HGET', KEYS[1], 'ok') ~= '1' then return {-1, 0, 0} end
local ub = tonumber(redis.call('HGET', KEYS[1], 'b') or '0')
local uo = tonumber(redis.call('HGET', KEYS[1], 'o') or '0')
local fb, fo = 0, 0
local f = redis.call('HGETALL', KEYS[2])
for i = 1, #f, 2 do
  local v = tonumber(f[i + 1])
  if string.sub(f[i], -2) == ':o' then fo = fo + v else fb = fb + v end
end
local n, k, qb, qo = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
if qb >= 0 and n > 0 and ub + fb + n > qb then return {0, ub + fb, uo + fo} end
if qo >= 0 and k > 0 and uo + fo + k > qo then return {2, ub + fb, uo + fo} end
redis.call('HINCRBY', KEYS[2], ARGV[1] .. ':b', n)
redis.call('HINCRBY', KEYS[2], ARGV[1] .. ':o', k)
return {1, ub + fb + n, uo + fo + k}
"""

# KEYS: used. ARGV: bytes, objects, the commit count read before the catalog was (''): set only if unchanged.
RECONCILE = """
local n = redis.call('HGET', KEYS[1], 'n') or ''
if n ~= ARGV[3] then return 0 end
redis.call('HSET', KEYS[1], 'b', ARGV[1], 'o', ARGV[2], 'ok', '1')
return 1
"""


class RedisCounter:
    """The counters in Redis: the gateway's calls from its event loop, commits and reconciliation from threads."""

    def __init__(self, url: str) -> None:
        import redis
        import redis.asyncio as aredis

        self._sync = redis.Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0)
        self._reconcile = self._sync.register_script(RECONCILE)
        self._url = url
        self._async: Any = None
        self._reserve: Any = None
        self._aredis = aredis

    def _client(self) -> Any:
        if self._async is None:
            self._async = self._aredis.Redis.from_url(self._url, socket_timeout=1.0, socket_connect_timeout=1.0)
            self._reserve = self._async.register_script(RESERVE)
        return self._async

    async def reserve(self, project_id: int, limits: Limits, nbytes: int, objects: int) -> None:
        client = self._client()
        used, flight = _keys(project_id)
        args = [TOKEN, nbytes, objects, -1 if limits.quota_bytes is None else limits.quota_bytes,
                -1 if limits.quota_objects is None else limits.quota_objects]
        for _ in range(3):
            try:
                answer, seen_bytes, seen_objects = await self._reserve(keys=[used, flight], args=args, client=client)
            except Exception as exc:  # noqa: BLE001  (any Redis failure refuses the write)
                raise CounterUnavailable(str(exc)) from exc
            if answer == 1:
                return
            if answer == 0:
                raise QuotaRefused(project_id, "bytes", limits.quota_bytes or 0, int(seen_bytes))
            if answer == 2:
                raise QuotaRefused(project_id, "objects", limits.quota_objects or 0, int(seen_objects))
            from tierpilot.kit.streaming import run  # a counter never seeded: the catalog's use, then again

            try:
                await run(reconcile_one, project_id)
            except Exception as exc:  # noqa: BLE001
                raise CounterUnavailable(str(exc)) from exc
        raise CounterUnavailable("the project's counter could not be seeded")

    async def release(self, project_id: int, nbytes: int, objects: int) -> None:
        _used, flight = _keys(project_id)
        pipe = self._client().pipeline(transaction=False)
        pipe.hincrby(flight, f"{TOKEN}:b", -nbytes)
        pipe.hincrby(flight, f"{TOKEN}:o", -objects)
        await pipe.execute()

    async def heartbeat(self) -> None:
        await self._client().set(_alive_key(TOKEN), "1", ex=ALIVE_S)

    def committed(self, moves: dict[int, list[int]]) -> None:
        pipe = self._sync.pipeline(transaction=False)
        for project_id, (objects, nbytes) in moves.items():
            used, _flight = _keys(project_id)
            pipe.hincrby(used, "b", nbytes)
            pipe.hincrby(used, "o", objects)
            pipe.hincrby(used, "n", 1)
        pipe.execute()

    def reconcile(self, project_id: int, usage: Any) -> bool:
        """Set the committed use from the catalog (``usage(session)`` -> (bytes, objects)), unless a commit moved
        the counter while it was read; drop the in-flight bytes of processes that are gone."""
        used, flight = _keys(project_id)
        before = self._sync.hget(used, "n")
        with transaction() as session:
            nbytes, objects = usage(session)
        done = bool(self._reconcile(keys=[used], args=[nbytes, objects, (before or b"").decode()]))
        tokens = {f.decode().rsplit(":", 1)[0] for f in self._sync.hkeys(flight)}
        for token in tokens - {TOKEN}:
            if not self._sync.exists(_alive_key(token)):
                self._sync.hdel(flight, f"{token}:b", f"{token}:o")
        return done

    def in_flight(self, project_id: int) -> tuple[int, int]:
        values = self._sync.hgetall(_keys(project_id)[1])
        fb = sum(int(v) for k, v in values.items() if not k.endswith(b":o"))
        fo = sum(int(v) for k, v in values.items() if k.endswith(b":o"))
        return fb, fo

    async def close(self) -> None:
        if self._async is not None:
            await self._async.aclose()
            self._async = None


class DatabaseCounter:
    """The counters as columns of the project row (no Redis): one conditional UPDATE per reservation."""

    async def reserve(self, project_id: int, limits: Limits, nbytes: int, objects: int) -> None:
        from tierpilot.kit.streaming import run

        try:
            ok = await run(self._reserve, project_id, nbytes, objects)
        except Exception as exc:  # noqa: BLE001  (a database out of reach refuses the write)
            raise CounterUnavailable(str(exc)) from exc
        if ok is not None:
            raise QuotaRefused(project_id, *ok)

    def _reserve(self, project_id: int, nbytes: int, objects: int) -> tuple[str, int, int] | None:
        p = Project.__table__.c
        fits_bytes = (p.quota_bytes.is_(None)) | (nbytes == 0) | (p.counted_bytes + p.inflight_bytes + nbytes
                                                                   <= p.quota_bytes)
        fits_objects = (p.quota_objects.is_(None)) | (objects == 0) | (
            p.counted_objects + p.inflight_objects + objects <= p.quota_objects)
        with transaction(write=True) as session:
            done = session.execute(update(Project).where(p.id == project_id, fits_bytes, fits_objects)
                                   .values(inflight_bytes=p.inflight_bytes + nbytes,
                                           inflight_objects=p.inflight_objects + objects)
                                   .execution_options(synchronize_session=False))
            if done.rowcount == 1:  # type: ignore[attr-defined]
                return None
            row = session.execute(select(p.quota_bytes, p.quota_objects, p.counted_bytes + p.inflight_bytes,
                                         p.counted_objects + p.inflight_objects).where(p.id == project_id)).first()
        if row is None:
            return None  # the project is gone: nothing to count against
        qb, qo, ub, uo = row
        if qb is not None and ub + nbytes > qb:
            return "bytes", int(qb), int(ub)
        return "objects", int(qo or 0), int(uo)

    async def release(self, project_id: int, nbytes: int, objects: int) -> None:
        from tierpilot.kit.streaming import run

        await run(self._release, project_id, nbytes, objects)

    def _release(self, project_id: int, nbytes: int, objects: int) -> None:
        p = Project.__table__.c
        with transaction(write=True) as session:
            session.execute(update(Project).where(p.id == project_id)
                            .values(inflight_bytes=p.inflight_bytes - nbytes,
                                    inflight_objects=p.inflight_objects - objects)
                            .execution_options(synchronize_session=False))

    async def heartbeat(self) -> None:
        return None

    def reconcile(self, project_id: int, usage: Any) -> bool:
        p = Project.__table__.c
        with transaction(write=True) as session:
            # the row locked first: a commit of the project's buckets then waits for this one (it moves the row
            # after its buckets), so the use read below and its own move never count a write twice or not at all
            if session.scalar(select(p.id).where(p.id == project_id).with_for_update()) is None:
                return False
            nbytes, objects = usage(session)
            session.execute(update(Project).where(p.id == project_id)
                            .values(counted_bytes=nbytes, counted_objects=objects)
                            .execution_options(synchronize_session=False))
        return True

    def in_flight(self, project_id: int) -> tuple[int, int]:
        p = Project.__table__.c
        with transaction() as session:
            row = session.execute(select(p.inflight_bytes, p.inflight_objects).where(p.id == project_id)).first()
        return (int(row[0]), int(row[1])) if row else (0, 0)

    async def close(self) -> None:
        return None


Counter = RedisCounter | DatabaseCounter
_counter: Counter | None = None
_counter_url: str | None = None


def counter() -> Counter:
    """This process's counter, for the configured Redis (or the database without one)."""
    global _counter, _counter_url
    url = get_settings().redis_url
    if _counter is None or _counter_url != url:
        _counter, _counter_url = (RedisCounter(url) if url else DatabaseCounter()), url
    return _counter


def reset() -> None:
    """Forget this process's counter (tests that change the settings)."""
    global _counter, _counter_url
    _counter, _counter_url = None, None


# commits --------------------------------------------------------------------------------------------------


@dataclass
class _Moves:
    """A transaction's changes of its projects' use, sent once it committed."""

    root: Any
    moves: dict[int, list[int]] = field(default_factory=dict)

    def __call__(self) -> None:
        moves, self.moves = self.moves, {}
        c = counter()
        if moves and isinstance(c, RedisCounter):
            c.committed(moves)


_MOVES = "tierpilot.projects.moves"


def on_usage(session: Session, project_id: int, objects: int, nbytes: int) -> None:
    """A catalog write moved a bucket's totals: the project's committed use in Redis follows the commit (without
    Redis a trigger of the buckets table moves the project row in the write's own transaction: migration 0018)."""
    if not get_settings().redis_url:
        return
    root = session.get_transaction()
    moves: _Moves | None = session.info.get(_MOVES)
    if moves is None or moves.root is not root:  # a rolled-back transaction's changes are not carried over
        moves = session.info[_MOVES] = _Moves(root)
    after_commit(session, moves, key=(_MOVES, id(moves)))
    entry = moves.moves.setdefault(project_id, [0, 0])
    entry[0] += objects
    entry[1] += nbytes


def reconcile_one(project_id: int) -> bool:
    """Set a project's committed use from the catalog (after a quota is set, a bucket moved, or periodically)."""
    return counter().reconcile(project_id, lambda s: catalog_repository.project_usage(s, [project_id])[project_id])
