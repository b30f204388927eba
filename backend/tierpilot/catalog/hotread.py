"""The current version of a key in one statement and no session: what GET and HEAD of small objects read.

Through an ORM session a point lookup costs a 1 KiB GET more than all its other work (pool checkout,
BEGIN, identity map, loading 26 columns into an instrumented object, COMMIT: 0.4-0.9 ms on a loaded
2-core machine), while SQLite answers the statement itself in ~20-30 µs. Here the statement runs on a
connection of the calling thread's own, in autocommit: each SELECT is its own read transaction in WAL
mode, so it sees every commit made before it began (no snapshot is held between requests). The row becomes an
``ObjectRow``: ``Object``'s columns as plain attributes, not an ORM instance.

Until the next commit, a SQLite reader answers a key it read again from memory (``_SqliteReader``): the database
did not change while the header of its WAL index did not. Under 16 HEADs at a time the statement was a third of
a request's CPU in process (``bench/gateway_inproc.py``: 67-71 against 43-47 µs a HEAD), its read transaction's
file locks included.

``current_on_loop`` reads from the event loop, without a worker thread. On SQLite it never waits for a lock (a
busy database answers ``BUSY`` and the caller takes the worker-thread path, ``current``). On PostgreSQL the
reads asked for at the same time share one statement (``_PgReaders``) on one of the loop's own psycopg
connections (``TIERPILOT_GATEWAY_DB_READERS`` of them per process), in autocommit with the statement prepared:
one round trip for many reads, where the engine's pool in a worker thread costs two per read (the ``SELECT``,
the pool's ``ROLLBACK``; three when the checkout pings) plus two thread hand-offs. A
connection that fails is dropped and its reads answer ``BUSY``: the worker-thread path then reads (or
reports) as it always did. With Redis, a PostgreSQL gateway keeps the rows it read under the objects generation
(``catalog.changes``: every transaction that changes the table moves it after its commit, before it is answered),
read with the request's other counters: a read under the same value as a kept row is answered from memory, for at
most ``TIERPILOT_GATEWAY_CACHE_S``.
"""

from __future__ import annotations

import asyncio
import logging
import mmap
import os
import sqlite3
import struct
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, NamedTuple, TypeAlias, cast

from sqlalchemy import JSON, Engine, Table, bindparam, select
from sqlalchemy.engine import processors
from sqlalchemy.orm import instrumentation
from sqlalchemy.orm.attributes import instance_dict

from tierpilot.catalog.changes import OBJECTS_GENERATION
from tierpilot.catalog.models import Object
from tierpilot.kit import generations
from tierpilot.kit.db import UTCDateTime, get_engine
from tierpilot.kit.settings import get_settings

if TYPE_CHECKING:
    from psycopg import AsyncConnection

log = logging.getLogger("tierpilot.catalog.hotread")

MAX_BATCH = 256  # reads per PostgreSQL statement at most
APPLICATION_NAME = "tierpilot-gateway-reads"  # what pg_stat_activity shows for the connections

_TABLE = cast(Table, Object.__table__)
_COLUMNS = tuple(_TABLE.columns)
_KEYS = tuple(col.key for col in _COLUMNS)
_STATEMENT = select(*_COLUMNS).where(_TABLE.c.bucket_id == bindparam("bucket_id"), _TABLE.c.key == bindparam("key"))
_MANAGER = instrumentation.manager_of_class(Object)
_fromisoformat = datetime.fromisoformat


class _Busy:
    """Not read from the event loop (a locked SQLite database, a failed connection): read in a worker thread."""


BUSY: Final = _Busy()
_UNREAD: Final = object()

ROW_CACHE = 8192  # rows a reader keeps of one state of the database at most
# SQLite's WAL index (https://www.sqlite.org/walformat.html) starts with two copies of a 48-byte header that every
# commit rewrites (its change counter, last frame and checksums), the second copy first; the format's version
_WAL_HEADER = 48
_WAL_INDEX_VERSION = 3007000

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
    """One thread's connection to the SQLite catalog, the statement compiled once and its column converters, and the
    rows it read since the database last changed.

    Whether it changed is read from the header of the database's WAL index, the memory SQLite shares between the
    connections of every process (its ``-shm`` file, mapped here read-only): any commit rewrites it before its
    ``COMMIT`` returns, so a header equal to the one a row was read under means no write was acknowledged since.
    A row is kept only when the header was the same, both copies alike, before and after its statement (no commit
    landed during it). Without a WAL index to trust (another journal mode, another index format) every read is a
    statement."""

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
        self.index = self._wal_index()
        self.snapshot = b""  # the WAL index header the kept rows were read under
        self.rows: dict[tuple[int, str], ObjectRow | None] = {}

    def _wal_index(self) -> mmap.mmap | None:
        """The first page of the database's WAL index, or None when there is none to trust."""
        conn = self.conn
        try:
            # a read opens the index and holds it: no later connection re-initialises the file under this mapping
            conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
            path = next((row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"), "")
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal" or not path:
                return None
        except sqlite3.OperationalError:  # busy (a recovery under way): this reader goes without
            return None
        try:
            with open(f"{path}-shm", "rb") as shm:
                if os.fstat(shm.fileno()).st_size < mmap.PAGESIZE:
                    return None
                index = mmap.mmap(shm.fileno(), mmap.PAGESIZE, prot=mmap.PROT_READ)
        except OSError:
            return None
        version, initialised = struct.unpack_from("=I8xB", index)  # iVersion, isInit
        if version != _WAL_INDEX_VERSION or not initialised:
            index.close()
            return None
        return index

    def close(self) -> None:
        if self.index is not None:
            self.index.close()
        self.conn.close()

    def read(self, bucket_id: int, key: str) -> ObjectRow | None | _Busy:
        index = self.index
        if index is not None:
            if index[:_WAL_HEADER] == self.snapshot:  # nothing committed since the kept rows were read
                kept = self.rows.get((bucket_id, key), _UNREAD)
                if kept is not _UNREAD:
                    return cast(ObjectRow | None, kept)
            before = index[:2 * _WAL_HEADER]
        params = (key, bucket_id) if self.key_first else (bucket_id, key)
        try:
            # fetchall steps the statement to its end, which ends its read transaction
            rows = self.conn.execute(self.sql, params).fetchall()
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                return BUSY
            raise
        row: ObjectRow | None = None
        if rows:
            values = list(rows[0])
            for i, conv in self.converting:
                value = values[i]
                if value is not None:
                    values[i] = conv(value)
            row = _as_object(values)
        if index is not None and before == index[:2 * _WAL_HEADER] and before[:_WAL_HEADER] == before[_WAL_HEADER:]:
            header = before[:_WAL_HEADER]
            if header != self.snapshot or len(self.rows) >= ROW_CACHE:
                self.snapshot, self.rows = header, {}
            self.rows[(bucket_id, key)] = row
        return row


_local = threading.local()


def _reader() -> _SqliteReader:
    engine = get_engine()
    reader: _SqliteReader | None = getattr(_local, "reader", None)
    if reader is None or reader.engine is not engine:  # tests point the process at another engine
        if reader is not None:
            reader.close()
        reader = _local.reader = _SqliteReader(engine)
    return reader


class ObjectRow(NamedTuple):
    """The current version of a key as GET and HEAD read it: each of ``Object``'s columns a read-only attribute.

    Not an ORM instance (nothing puts it in a session): a transient ``Object`` cost a small read more than the row
    itself (``timeit``: 15.7 µs to build one and read 20 of its attributes through SQLAlchemy's descriptors). A
    tuple is made from the row's values in one call (``_as_object``: 0.4 µs, where setting 27 slots took 1.3 µs)
    and its attributes are read as fast as slots. The fields name the same columns as ``Object``, in order
    (checked under the class). One row may answer several reads (a SQLite reader's, of the key until the next
    commit; a PostgreSQL statement's, of a key asked twice in it): its mappings and sequences are typed read-only,
    and nothing may change them."""

    id: int
    bucket_id: int
    key: str
    size: int
    etag: str
    checksum_algorithm: str | None
    checksum_value: str | None
    content_type: str
    user_metadata: Mapping[str, Any]
    headers: Mapping[str, Any]
    tags: Mapping[str, Any]
    tier_id: int
    storage_class: str
    locator: str
    parts_count: int | None
    created_at: datetime
    last_modified: datetime
    last_access_at: datetime | None
    restore_state: str | None
    restore_speed: str | None
    restore_expiry: datetime | None
    version_id: str
    lock_mode: str | None
    lock_until: datetime | None
    legal_hold: bool
    part_sizes: Sequence[Any] | None
    part_checksums: Sequence[Any] | None

    def __repr__(self) -> str:
        return f"ObjectRow(bucket_id={self.bucket_id!r}, key={self.key!r})"


# a key's version as a read sees it: the ORM's Object, or the ObjectRow that GET and HEAD read
ObjectView: TypeAlias = ObjectRow | Object

if ObjectRow._fields != _KEYS:  # a column added to Object is added here too
    raise RuntimeError(f"ObjectRow's attributes {ObjectRow._fields} are not Object's columns {_KEYS}")

_new_row = tuple.__new__


def _as_object(values: Sequence[Any]) -> ObjectRow:
    """The row's values, in ``_KEYS`` order, as an ``ObjectRow``."""
    if len(values) != len(_KEYS):
        raise ValueError(f"{len(values)} values for the {len(_KEYS)} columns of an ObjectRow")
    return cast(ObjectRow, _new_row(ObjectRow, values))


def object_from(values: Mapping[str, Any]) -> Object:
    """A transient ``Object`` of a row's columns by name (a write's answer, built without the ORM)."""
    obj = cast(Object, _MANAGER.new_instance())
    instance_dict(obj).update(values)
    return obj


def _utc(value: Any) -> Any:
    return value if value is None or value.tzinfo is UTC else value.astimezone(UTC)


class _PgReaders:
    """One event loop's reads of the row from PostgreSQL, shared: the reads asked for while a statement runs go
    together in the next one (``WHERE (bucket_id, key) IN`` the pairs asked for), on at most ``size`` connections
    of the loop's own, each in autocommit with the statement prepared on it.

    A read joins a statement that has not been sent yet, so it sees every commit made before it was asked for,
    as a statement of its own would. Under load a statement answers dozens of requests: psycopg's client CPU
    per read falls with the statement's size, and the database server does one index probe per pair instead of
    one statement each.
    """

    def __init__(self, engine: Engine, loop: asyncio.AbstractEventLoop, size: int, keep_s: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.engine, self.loop, self.size = engine, loop, size
        self.conninfo = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        quote = engine.dialect.identifier_preparer.quote
        columns = ", ".join(f"o.{quote(col.name)}" for col in _COLUMNS)
        # keys compare byte-wise (the column's collation is C: kit.db.KeyString), as the index orders them
        self.sql = (f"SELECT {columns} FROM unnest(%(b)s::bigint[], %(k)s::text[]) AS w(bucket_id, key) "
                    f"JOIN {quote(_TABLE.name)} AS o ON o.bucket_id = w.bucket_id AND o.{quote('key')} = w.key "
                    'COLLATE "C"')
        self.bucket_at, self.key_at = _KEYS.index("bucket_id"), _KEYS.index("key")
        # psycopg makes the Python values itself (JSON decoded, timestamps zoned by the session's TimeZone):
        # what is left is the zone, UTC as ``UTCDateTime`` gives it
        self.converting = [(i, _utc) for i, col in enumerate(_COLUMNS) if isinstance(col.type, UTCDateTime)]
        self.pending: list[tuple[int, str, asyncio.Future[ObjectRow | None | _Busy]]] = []
        self.idle: list[AsyncConnection[Any]] = []
        self.leaders = 0  # tasks sending statements (each on a connection of its own), at most ``size``
        self.statements = 0  # statements run and reads they answered (tests count them)
        self.answered = 0
        # rows read under one value of the objects generation, until ``kept_until`` at the latest
        self.keep_s, self.clock = keep_s, clock
        self.kept_under: int | None = None
        self.kept_until = 0.0
        self.kept: dict[tuple[int, str], ObjectRow | None] = {}

    async def read(self, bucket_id: int, key: str, generation: int | None) -> ObjectRow | None | _Busy:
        """The row, read by a statement sent after this call; or, with the objects ``generation`` read for the
        request (before this call), the row read under the same value, if one is kept."""
        if generation is not None and generation == self.kept_under:
            kept = self.kept.get((bucket_id, key), _UNREAD)
            if kept is not _UNREAD and self.clock() < self.kept_until:
                return cast(ObjectRow | None, kept)
        answer: asyncio.Future[ObjectRow | None | _Busy] = self.loop.create_future()
        self.pending.append((bucket_id, key, answer))
        if self.leaders < self.size:
            self.leaders += 1
            self.loop.create_task(self._lead())
        row = await answer
        if generation is not None and row is not BUSY:
            # read after the generation was: no change answered before that value was read is missing from it
            now = self.clock()
            if generation != self.kept_under or now >= self.kept_until or len(self.kept) >= ROW_CACHE:
                self.kept_under, self.kept_until, self.kept = generation, now + self.keep_s, {}
            self.kept[(bucket_id, key)] = cast(ObjectRow | None, row)
        return row

    async def _lead(self) -> None:
        """Statements over what is asked for, until nothing is; on a connection of this task's own."""
        import psycopg

        conn: AsyncConnection[Any] | None = None
        batch: list[tuple[int, str, asyncio.Future[ObjectRow | None | _Busy]]] = []
        try:
            while self.pending:
                batch, self.pending = self.pending[:MAX_BATCH], self.pending[MAX_BATCH:]
                if conn is None:
                    conn = self.idle.pop() if self.idle else await psycopg.AsyncConnection.connect(
                        self.conninfo, autocommit=True, connect_timeout=5, application_name=APPLICATION_NAME)
                wanted = list(dict.fromkeys((b, k) for b, k, _ in batch))
                cur = await conn.execute(self.sql, {"b": [b for b, _ in wanted], "k": [k for _, k in wanted]},
                                         prepare=True)
                rows = await cur.fetchall()
                self.statements += 1
                self.answered += len(batch)
                self._answer(batch, rows)
                batch = []
            if conn is not None:
                self.idle.append(conn)
                conn = None
        except psycopg.Error as exc:
            log.warning("object reads failed on a PostgreSQL connection (dropped; read in worker threads): %s", exc)
        except BaseException:  # cancelled: the loop is closing, nobody leads the reads still asked for
            batch, self.pending = batch + self.pending, []
            raise
        finally:
            # failed or cut mid-statement: the connection's state is unknown, it goes; its reads are BUSY (read in
            # a worker thread), and what was asked for meanwhile gets a leader of its own
            if conn is not None:
                conn.pgconn.finish()
            for _b, _k, answer in batch:
                if not answer.done():
                    answer.set_result(BUSY)
            self.leaders -= 1
            if self.pending and self.leaders == 0:
                self.leaders += 1
                self.loop.create_task(self._lead())

    def _answer(self, batch: Sequence[tuple[int, str, asyncio.Future[ObjectRow | None | _Busy]]],
                rows: Sequence[Sequence[Any]]) -> None:
        found: dict[tuple[int, str], ObjectRow] = {}
        for row in rows:
            values = list(row)
            for i, conv in self.converting:
                values[i] = conv(values[i])
            found[(values[self.bucket_at], values[self.key_at])] = _as_object(values)
        for bucket_id, key, answer in batch:
            if not answer.done():  # done: its request went away
                # the same key asked twice in one statement: one row for both (read-only, as a SQLite reader's)
                answer.set_result(found.get((bucket_id, key)))

    def abandon(self) -> None:
        """Close the idle connections (the process moved to another engine or loop, or is stopping)."""
        for conn in self.idle:
            conn.pgconn.finish()
        self.idle.clear()


_pg: _PgReaders | None = None
_changes: generations.Reader | None = None  # the objects generation, read with the request's other counters


def _pg_readers(engine: Engine) -> _PgReaders:
    global _pg
    loop = asyncio.get_running_loop()
    if _pg is None or _pg.engine is not engine or _pg.loop is not loop:  # tests move engines and loops
        if _pg is not None:
            _pg.abandon()
        settings = get_settings()
        _pg = _PgReaders(engine, loop, settings.gateway_db_readers, settings.gateway_cache_s)
    return _pg


def watch_changes(redis_url: str) -> None:
    """Keep PostgreSQL rows under the objects generation from now on (the gateway's start, with Redis)."""
    global _changes
    if redis_url and _changes is None and get_engine().dialect.name == "postgresql":
        _changes = generations.Reader(redis_url, OBJECTS_GENERATION)


async def stop_watching() -> None:
    """Keep no more rows under the generation (the gateway's end)."""
    global _changes
    changes, _changes = _changes, None
    if changes is not None:
        await changes.close()


def close_readers() -> None:
    """Close this process's PostgreSQL read connections (the gateway's end)."""
    global _pg
    if _pg is not None:
        _pg.abandon()
        _pg = None


async def current_on_loop(bucket_id: int, key: str,
                          seen: generations.Seen | None = None) -> ObjectRow | None | _Busy:
    """The key's current version (None: no such row), read from the event loop without a worker thread, or
    ``BUSY``: read it with ``current`` in a worker thread (a locked SQLite database, a failed PostgreSQL
    connection, another database). ``seen``: the generation counters the request read (see ``_PgReaders``)."""
    engine = get_engine()
    dialect = engine.dialect.name
    if dialect == "sqlite":
        return _reader().read(bucket_id, key)
    if dialect == "postgresql":
        generation = None if _changes is None else await _changes.current(seen)
        return await _pg_readers(engine).read(bucket_id, key, generation)
    return BUSY


def current(bucket_id: int, key: str) -> ObjectRow | None:
    """The key's current version or None, waiting for locks as any reader does (a worker thread's call)."""
    engine = get_engine()
    with engine.connect() as conn:
        row = conn.execute(_STATEMENT, {"bucket_id": bucket_id, "key": key}).first()
    return _as_object(list(row)) if row is not None else None
