"""The current version of a key in one statement and no session: what GET and HEAD of small objects read.

Through an ORM session a point lookup costs a 1 KiB GET more than all its other work (pool checkout,
BEGIN, identity map, loading 26 columns into an instrumented object, COMMIT: 0.4-0.9 ms on a loaded
2-core machine), while SQLite answers the statement itself in ~20-30 µs. Here the statement runs on a
connection of the calling thread's own, in autocommit: each SELECT is its own read transaction in WAL
mode, so it sees every commit made before it began (no snapshot is held between requests), and nothing
else is cached. The row becomes a transient ``Object`` without the ORM's loading machinery.

``current_on_loop`` reads from the event loop, without a worker thread. On SQLite it never waits for a lock (a
busy database answers ``BUSY`` and the caller takes the worker-thread path, ``current``). On PostgreSQL it awaits
one of the loop's own psycopg connections (``TIERPILOT_GATEWAY_DB_READERS`` of them per process), in autocommit
with the statement prepared: one round trip per read, where the engine's pool in a worker thread costs three
(``pool_pre_ping``'s ``SELECT 1``, the ``SELECT``, the pool's ``ROLLBACK``) plus two thread hand-offs. Each read
is a statement of its own, so it too sees every commit made before it began. A connection that fails is
dropped and that read answers ``BUSY``: the worker-thread path then reads (or reports) as it always did.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, cast

from sqlalchemy import JSON, Engine, Table, bindparam, select
from sqlalchemy.engine import processors
from sqlalchemy.orm import instrumentation
from sqlalchemy.orm.attributes import instance_dict

from tierpilot.catalog.models import Object
from tierpilot.kit.db import UTCDateTime, get_engine
from tierpilot.kit.settings import get_settings

if TYPE_CHECKING:
    from psycopg import AsyncConnection

log = logging.getLogger("tierpilot.catalog.hotread")

_TABLE = cast(Table, Object.__table__)
_COLUMNS = tuple(_TABLE.columns)
_KEYS = tuple(col.key for col in _COLUMNS)
_STATEMENT = select(*_COLUMNS).where(_TABLE.c.bucket_id == bindparam("bucket_id"), _TABLE.c.key == bindparam("key"))
_MANAGER = instrumentation.manager_of_class(Object)
_fromisoformat = datetime.fromisoformat


class _Busy:
    """Not read from the event loop (a locked SQLite database, a failed connection): read in a worker thread."""


BUSY: Final = _Busy()

Processor = Callable[[Any], Any] | None

# what a JSON column of an object row holds nearly always (no metadata, headers or tags; no parts): each a new
# value as ``json.loads`` makes it, without its call (five JSON columns decoded per read were the row's cost)
_JSON_LITERALS: Final[dict[str, Callable[[], Any]]] = {"null": lambda: None, "{}": dict, "[]": list}


def _json_column(decode: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A JSON column's converter: the common literals made directly, anything else as the dialect decodes it."""
    literal = _JSON_LITERALS.get

    def convert(value: Any) -> Any:
        if value is None:
            return None
        make = literal(value) if value.__class__ is str else None
        return make() if make is not None else decode(value)

    return convert


def _utc_column(parse: Callable[[Any], Any], iso: bool) -> Callable[[Any], Any]:
    """A ``UTCDateTime`` column's converter in one call: the dialect's parse, then the zone
    (``UTCDateTime.process_result_value``), which the decorator's own processor calls as a second step.

    SQLite's text (SQLAlchemy parses it with ``datetime.fromisoformat``) is read with the UTC offset appended:
    the same instant and ``tzinfo`` at a sixth of the cost of ``replace(tzinfo=UTC)`` (in callgrind, 4 % of a
    small HEAD's instructions for the row's two or three timestamps). Text that does not take the suffix (one
    with an offset of its own, say) goes the dialect's way."""

    def convert(value: Any) -> Any:
        if value is None:
            return None
        if iso and value.__class__ is str:
            try:
                return _fromisoformat(value + "+00:00")
            except ValueError:
                pass
        moment = parse(value)
        if moment is None:
            return None
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)

    return convert


def _converter(col: Any, engine: Engine) -> Processor:
    dialect = engine.dialect
    if isinstance(col.type, UTCDateTime):
        parse = col.type.impl_instance.dialect_impl(dialect).result_processor(dialect, None)
        if parse is not None:
            return _utc_column(parse, iso=parse is processors.str_to_datetime)
    conv = col.type.dialect_impl(dialect).result_processor(dialect, None)
    if conv is not None and isinstance(col.type, JSON) and dialect._json_deserializer is None:
        return _json_column(conv)
    return conv


class _SqliteReader:
    """One thread's connection to the SQLite catalog, the statement compiled once and its column converters."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        raw = engine.raw_connection()
        raw.detach()  # ours for the thread's life; its pragmas (WAL, autocommit) come from kit.db's listener
        self.conn = cast(sqlite3.Connection, raw.dbapi_connection)
        # the event loop must not wait: a locked database is answered BUSY at once
        self.conn.execute("PRAGMA busy_timeout=0")
        compiled = _STATEMENT.compile(dialect=engine.dialect)
        self.sql = compiled.string
        self.order = list(compiled.positiontup or ())
        self.converters: Sequence[Processor] = [_converter(col, engine) for col in _COLUMNS]
        # (position, converter) of the columns that have one; a NULL is None whatever the type
        self.converting = [(i, conv) for i, conv in enumerate(self.converters) if conv is not None]
        assert sorted(self.order) == ["bucket_id", "key"], self.order
        self.key_first = self.order[0] == "key"

    def read(self, bucket_id: int, key: str) -> Object | None | _Busy:
        params = (key, bucket_id) if self.key_first else (bucket_id, key)
        try:
            # fetchall steps the statement to its end, which ends its read transaction
            rows = self.conn.execute(self.sql, params).fetchall()
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                return BUSY
            raise
        if not rows:
            return None
        values = list(rows[0])
        for i, conv in self.converting:
            value = values[i]
            if value is not None:
                values[i] = conv(value)
        return _as_object(values)


_local = threading.local()


def _reader() -> _SqliteReader:
    engine = get_engine()
    reader: _SqliteReader | None = getattr(_local, "reader", None)
    if reader is None or reader.engine is not engine:  # tests point the process at another engine
        if reader is not None:
            reader.conn.close()
        reader = _local.reader = _SqliteReader(engine)
    return reader


def _as_object(values: Sequence[Any]) -> Object:
    """A transient ``Object`` holding the row's values (what the ORM's loader does, without its bookkeeping)."""
    obj = cast(Object, _MANAGER.new_instance())
    instance_dict(obj).update(zip(_KEYS, values, strict=True))
    return obj


def object_from(values: Mapping[str, Any]) -> Object:
    """A transient ``Object`` of a row's columns by name (a write's answer, built without the ORM)."""
    obj = cast(Object, _MANAGER.new_instance())
    instance_dict(obj).update(values)
    return obj


def _utc(value: Any) -> Any:
    return value if value is None or value.tzinfo is UTC else value.astimezone(UTC)


class _PgReaders:
    """One event loop's connections that read the row from PostgreSQL: at most ``size``, made when needed, each
    in autocommit with the statement prepared on it; a read waits for a free one."""

    def __init__(self, engine: Engine, loop: asyncio.AbstractEventLoop, size: int) -> None:
        self.engine, self.loop, self.size = engine, loop, size
        self.conninfo = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        self.sql = str(_STATEMENT.compile(dialect=engine.dialect))  # pyformat: %(bucket_id)s, %(key)s
        # psycopg makes the Python values itself (JSON decoded, timestamps zoned by the session's TimeZone):
        # what is left is the zone, UTC as ``UTCDateTime`` gives it
        self.converting = [(i, _utc) for i, col in enumerate(_COLUMNS) if isinstance(col.type, UTCDateTime)]
        self.idle: list[AsyncConnection[Any]] = []
        self.count = 0  # connections open or being opened
        self.waiters: deque[asyncio.Future[None]] = deque()
        self.reads = 0  # statements run (tests count them)

    async def read(self, bucket_id: int, key: str) -> Object | None | _Busy:
        import psycopg

        try:
            conn = await self._acquire()
        except psycopg.Error as exc:
            log.warning("cannot open a PostgreSQL connection for object reads: %s", exc)
            return BUSY
        try:
            cur = await conn.execute(self.sql, {"bucket_id": bucket_id, "key": key}, prepare=True)
            row = await cur.fetchone()
        except BaseException as exc:
            # cut mid-statement (a cancelled request) or failed: the connection's state is unknown, it goes
            self._drop(conn)
            if isinstance(exc, psycopg.Error):
                log.warning("an object read failed on its PostgreSQL connection (dropped): %s", exc)
                return BUSY
            raise
        self.reads += 1
        self.idle.append(conn)
        self._wake()
        if row is None:
            return None
        values = list(row)
        for i, conv in self.converting:
            values[i] = conv(values[i])
        return _as_object(values)

    async def _acquire(self) -> AsyncConnection[Any]:
        from psycopg import AsyncConnection

        while True:
            if self.idle:
                return self.idle.pop()
            if self.count < self.size:
                self.count += 1
                try:
                    return await AsyncConnection.connect(self.conninfo, autocommit=True, connect_timeout=5,
                                                         application_name="tierpilot-gateway-reads")
                except BaseException:
                    self.count -= 1
                    self._wake()
                    raise
            waiting = self.loop.create_future()
            self.waiters.append(waiting)
            try:
                await waiting
            except asyncio.CancelledError:
                if waiting.done() and not waiting.cancelled():
                    self._wake()  # woken as this request went away: the next waiter takes the turn
                else:
                    self.waiters.remove(waiting)
                raise

    def _wake(self) -> None:
        while self.waiters:
            waiting = self.waiters.popleft()
            if not waiting.done():
                waiting.set_result(None)
                return

    def _drop(self, conn: AsyncConnection[Any]) -> None:
        self.count -= 1
        conn.pgconn.finish()  # closes the socket at once, from any loop or none
        self._wake()

    def abandon(self) -> None:
        """Close the idle connections (the process moved to another engine or loop, or is stopping)."""
        for conn in self.idle:
            conn.pgconn.finish()
        self.count -= len(self.idle)
        self.idle.clear()


_pg: _PgReaders | None = None


def _pg_readers(engine: Engine) -> _PgReaders:
    global _pg
    loop = asyncio.get_running_loop()
    if _pg is None or _pg.engine is not engine or _pg.loop is not loop:  # tests move engines and loops
        if _pg is not None:
            _pg.abandon()
        _pg = _PgReaders(engine, loop, get_settings().gateway_db_readers)
    return _pg


def close_readers() -> None:
    """Close this process's PostgreSQL read connections (the gateway's shutdown)."""
    global _pg
    if _pg is not None:
        _pg.abandon()
        _pg = None


async def current_on_loop(bucket_id: int, key: str) -> Object | None | _Busy:
    """The key's current version (None: no such row), read from the event loop without a worker thread, or
    ``BUSY``: read it with ``current`` in a worker thread (a locked SQLite database, a failed PostgreSQL
    connection, another database)."""
    engine = get_engine()
    dialect = engine.dialect.name
    if dialect == "sqlite":
        return _reader().read(bucket_id, key)
    if dialect == "postgresql":
        return await _pg_readers(engine).read(bucket_id, key)
    return BUSY


def current(bucket_id: int, key: str) -> Object | None:
    """The key's current version or None, waiting for locks as any reader does (a worker thread's call)."""
    engine = get_engine()
    with engine.connect() as conn:
        row = conn.execute(_STATEMENT, {"bucket_id": bucket_id, "key": key}).first()
    return _as_object(list(row)) if row is not None else None
