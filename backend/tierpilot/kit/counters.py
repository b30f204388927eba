"""Event counters every process shares: how often a key was hit in its current window.

A key's window begins with its first hit and lasts ``window_s``; the next hit after that starts a new one.
Counts live in Redis when one is configured (one Lua script call per operation, atomic over its keys) and
in the database otherwise (table ``shared_counters``, owned here), so every API process sees the same
counts and a restart forgets nothing. When the configured Redis cannot be reached, the database stands in
until it can. Times are the caller's clock (``time.time`` by default: processes on other hosts compare
them), so tests move time instead of sleeping.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy import Float, Integer, String, delete, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Mapped, Session, mapped_column

from tierpilot.kit.db import Base, transaction

log = logging.getLogger(__name__)

REDIS_RETRY_S = 5.0  # after a Redis error, how long the database stands in before Redis is tried again
KEY_MAX = 200


class SharedCounter(Base):
    """One counted key: events in its current window, when that window began, the latest event."""

    __tablename__ = "shared_counters"

    key: Mapped[str] = mapped_column(String(KEY_MAX), primary_key=True)
    count: Mapped[int] = mapped_column(Integer, default=0)
    started: Mapped[float] = mapped_column(Float)
    last: Mapped[float | None] = mapped_column(Float, default=None)
    # the window's end: rows past it are deleted by the next hit of any key
    expires_at: Mapped[float] = mapped_column(Float, index=True)


@dataclass(frozen=True)
class Tally:
    """A key and the length of its counting window, seconds."""

    key: str
    window_s: float


@dataclass(frozen=True)
class Seen:
    """A key's current window: its events, when it began, and the latest event before the one just counted
    (``hit``) or the latest event (``peek``); ``None`` when there is none in the window."""

    count: int = 0
    started: float = 0.0
    last: float | None = None


class Store(Protocol):
    def peek(self, tallies: Sequence[Tally], now: float) -> list[Seen]: ...

    def hit(self, tallies: Sequence[Tally], now: float) -> list[Seen]: ...

    def refund(self, tallies: Sequence[Tally], now: float) -> None: ...

    def forget(self, keys: Sequence[str]) -> None: ...


def _fresh(count: int, started: float, window_s: float, now: float) -> bool:
    return count > 0 and now < started + window_s


# KEYS: the counters. ARGV: operation (peek|hit|refund), now, then each key's window in seconds.
# Replies {count, started, last} per key, times as strings (Lua numbers would be cut to integers).
SCRIPT = """
local op, now = ARGV[1], tonumber(ARGV[2])
local out = {}
for i, key in ipairs(KEYS) do
  local window = tonumber(ARGV[i + 2])
  local v = redis.call('HMGET', key, 'c', 's', 'l')
  local c, s, l = tonumber(v[1]) or 0, tonumber(v[2]) or 0, v[3] or ''
  if c <= 0 or now >= s + window then c, s, l = 0, now, '' end
  if op == 'hit' then
    redis.call('HSET', key, 'c', c + 1, 's', string.format('%.6f', s), 'l', string.format('%.6f', now))
    redis.call('PEXPIRE', key, math.ceil((s + window - now) * 1000) + 1000)
    out[i] = {c + 1, string.format('%.6f', s), l}
  elseif op == 'refund' then
    if c > 0 then redis.call('HSET', key, 'c', c - 1) end
    out[i] = {math.max(c - 1, 0), string.format('%.6f', s), l}
  else
    out[i] = {c, string.format('%.6f', s), l}
  end
end
return out
"""


class RedisStore:
    def __init__(self, client: Any, prefix: str) -> None:
        self._client = client
        self._script = client.register_script(SCRIPT)
        self._prefix = prefix

    def _call(self, op: str, tallies: Sequence[Tally], now: float) -> list[Seen]:
        keys = [self._prefix + t.key for t in tallies]
        reply = self._script(keys=keys, args=[op, repr(now), *(repr(float(t.window_s)) for t in tallies)])
        out = []
        for count, started, last in reply:
            c = int(count)
            out.append(Seen(c, float(started) if c else 0.0, float(last) if last else None))
        return out

    def peek(self, tallies: Sequence[Tally], now: float) -> list[Seen]:
        return self._call("peek", tallies, now)

    def hit(self, tallies: Sequence[Tally], now: float) -> list[Seen]:
        return self._call("hit", tallies, now)

    def refund(self, tallies: Sequence[Tally], now: float) -> None:
        self._call("refund", tallies, now)

    def forget(self, keys: Sequence[str]) -> None:
        if keys:
            self._client.delete(*(self._prefix + k for k in keys))


class DatabaseStore:
    """The counters as rows, each operation one short transaction of its own (never the caller's)."""

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix

    def _rows(self, session: Session, keys: list[str], lock: bool) -> dict[str, SharedCounter]:
        query = select(SharedCounter).where(SharedCounter.key.in_(keys))
        if lock:
            query = query.with_for_update()
        return {row.key: row for row in session.scalars(query)}

    def _seen(self, row: SharedCounter | None, tally: Tally, now: float) -> Seen:
        if row is None or not _fresh(row.count, row.started, tally.window_s, now):
            return Seen()
        return Seen(row.count, row.started, row.last)

    def peek(self, tallies: Sequence[Tally], now: float) -> list[Seen]:
        keys = [self._prefix + t.key for t in tallies]
        with transaction() as session:
            rows = self._rows(session, keys, lock=False)
            return [self._seen(rows.get(k), t, now) for k, t in zip(keys, tallies, strict=True)]

    def hit(self, tallies: Sequence[Tally], now: float) -> list[Seen]:
        keys = [self._prefix + t.key for t in tallies]
        with transaction(write=True) as session:
            session.execute(delete(SharedCounter).where(SharedCounter.expires_at < now))
            insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
            # every row exists before any is locked, so concurrent first hits of a key count twice, not once
            session.execute(insert(SharedCounter).values([
                {"key": k, "count": 0, "started": now, "last": None, "expires_at": now + t.window_s}
                for k, t in sorted(zip(keys, tallies, strict=True))]).on_conflict_do_nothing())
            rows = self._rows(session, sorted(keys), lock=True)
            out = []
            for key, tally in zip(keys, tallies, strict=True):
                row = rows[key]
                seen = self._seen(row, tally, now)
                row.count, row.started, row.last = seen.count + 1, seen.started if seen.count else now, now
                row.expires_at = row.started + tally.window_s
                out.append(Seen(row.count, row.started, seen.last))
            return out

    def refund(self, tallies: Sequence[Tally], now: float) -> None:
        keys = [self._prefix + t.key for t in tallies]
        with transaction(write=True) as session:
            rows = self._rows(session, sorted(keys), lock=True)
            for key, tally in zip(keys, tallies, strict=True):
                row = rows.get(key)
                if row is not None and _fresh(row.count, row.started, tally.window_s, now):
                    row.count -= 1

    def forget(self, keys: Sequence[str]) -> None:
        with transaction(write=True) as session:
            session.execute(delete(SharedCounter).where(SharedCounter.key.in_([self._prefix + k for k in keys])))


class SharedCounters:
    """Counters in ``namespace`` shared by every process: Redis at ``redis_url``, else (or while it is
    unreachable) the database."""

    def __init__(self, namespace: str, redis_url: str | None,
                 clock: Callable[[], float] = time.time, monotonic: Callable[[], float] = time.monotonic) -> None:
        # the hash tag keeps a namespace in one Redis Cluster slot (one script touches several keys)
        self._database = DatabaseStore(f"{namespace}:")
        self._redis: RedisStore | None = None
        if redis_url:
            import redis

            client = redis.Redis.from_url(redis_url, socket_timeout=1.0, socket_connect_timeout=1.0)
            self._redis = RedisStore(client, f"tp:{{{namespace}}}:")
        self.clock = clock
        self._monotonic = monotonic
        self._redis_down_until = 0.0

    @property
    def backend(self) -> str:
        """Where the counts live now: ``redis`` or ``database``."""
        return "redis" if self._redis is not None and self._monotonic() >= self._redis_down_until else "database"

    def _run(self, op: str, *args: Any) -> Any:
        if self.backend == "redis":
            assert self._redis is not None
            try:
                return getattr(self._redis, op)(*args)
            except Exception as exc:  # noqa: BLE001  (any Redis failure: the database counts meanwhile)
                log.warning("redis unreachable, counting in the database for %.0f s: %s", REDIS_RETRY_S, exc)
                self._redis_down_until = self._monotonic() + REDIS_RETRY_S
        return getattr(self._database, op)(*args)

    def peek(self, *tallies: Tally) -> list[Seen]:
        """The keys' current windows, counting nothing."""
        return list(self._run("peek", _checked(tallies), self.clock()))

    def hit(self, *tallies: Tally) -> list[Seen]:
        """Count one event on every key, atomically per key (concurrent hits each get their own count)."""
        return list(self._run("hit", _checked(tallies), self.clock()))

    def refund(self, *tallies: Tally) -> None:
        """Take one event of the keys' current windows back (an attempt that turned out fine)."""
        self._run("refund", _checked(tallies), self.clock())

    def forget(self, *keys: str) -> None:
        """Drop the keys' counts."""
        self._run("forget", list(keys))


def _checked(tallies: Sequence[Tally]) -> list[Tally]:
    for tally in tallies:
        if len(tally.key) > KEY_MAX - 40 or tally.window_s <= 0:
            raise ValueError(f"bad counter key or window: {tally!r}")
    return list(tallies)
