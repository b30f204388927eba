"""Database engine, declarative base and the one place that commits."""

from __future__ import annotations

import contextlib
import logging
import select
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, DateTime, Engine, MetaData, String, cast, create_engine, event, exc, func
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker
from sqlalchemy.types import TypeDecorator

from tierpilot.kit.settings import get_settings

_log = logging.getLogger(__name__)

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on both SQLite (which drops the zone) and PostgreSQL."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


# Keys compare byte-wise (as S3 orders them) on both databases: PostgreSQL needs the C collation.
KeyString = String(1024).with_variant(String(1024, collation="C"), "postgresql")


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {datetime: UTCDateTime, dict[str, Any]: JSON, list[Any]: JSON}


def utcnow() -> datetime:
    return datetime.now(UTC)


def epoch_s(session: Session, column: Any) -> Any:
    """A timestamp column as whole epoch seconds, computed by the database (no datetime per row in Python)."""
    if session.get_bind().dialect.name == "postgresql":
        return cast(func.floor(func.extract("epoch", column)), BigInteger)
    return cast(func.strftime("%s", column), BigInteger)


def make_engine(url: str, **kwargs: Any) -> Engine:
    """Engine with SQLite tuned for concurrent readers and one writer (WAL, busy timeout)."""
    if url.startswith("sqlite"):
        kwargs.setdefault("connect_args", {"check_same_thread": False, "timeout": 30})
        engine = create_engine(url, **kwargs)

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            # pysqlite's own transaction handling defers BEGIN; take over so writes lock early
            dbapi_conn.isolation_level = None
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            # every commit syncs the WAL: an answered PUT's row survives a power loss, not only a process crash
            # (NORMAL syncs at checkpoints only); one fsync per shared commit round cost no measurable PUT rate
            cur.execute("PRAGMA synchronous=FULL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(conn: Any) -> None:
            # writers take the lock up front: a deferred read-then-write transaction fails with
            # SQLITE_BUSY instead of waiting when another writer got in between
            immediate = conn.get_execution_options().get("sqlite_immediate", False)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

        return engine
    if "poolclass" not in kwargs:
        kwargs.setdefault("pool_size", 10)
        kwargs.setdefault("max_overflow", 20)
    engine = create_engine(url, **kwargs)
    if not kwargs.get("pool_pre_ping"):
        ping_when_suspect(engine)
    return engine


# A pooled connection unused for this long is pinged at checkout whatever its socket says (a host that went away
# without closing its sockets: a reboot, a dropped NAT entry).
PING_IDLE_AFTER_S = 5.0
_IDLE_SINCE = "tierpilot.idle_since"


def ping_when_suspect(engine: Engine, idle_after: float = PING_IDLE_AFTER_S,
                      clock: Callable[[], float] = time.monotonic) -> None:
    """``pool_pre_ping`` without its round trip on every checkout: a pooled connection is pinged only when its
    socket is readable while idle (the server closed it or said why: a restart, ``pg_terminate_backend``, an
    idle timeout) or it has been idle ``idle_after`` seconds or more. A failed ping replaces it and every
    connection pooled before it, as a failed pre-ping does.

    ``SELECT 1`` on every checkout was a round trip per transaction (a sixth of a small PUT's on PostgreSQL).
    """

    @event.listens_for(engine, "checkin")
    def _idle_from(_dbapi_conn: Any, record: Any) -> None:
        if record is not None:
            record.info[_IDLE_SINCE] = clock()

    @event.listens_for(engine, "checkout")
    def _ping_if_suspect(dbapi_conn: Any, record: Any, _proxy: Any) -> None:
        since = record.info.get(_IDLE_SINCE)
        if since is None:  # fresh from connect()
            return
        if clock() - since < idle_after and not _suspect(dbapi_conn):
            return
        try:
            alive = engine.dialect.do_ping(dbapi_conn)
        except Exception as e:  # noqa: BLE001  (any failure of the ping: a dead connection)
            raise exc.InvalidatePoolError(f"ping at checkout failed: {e}") from e
        if not alive:
            raise exc.InvalidatePoolError("ping at checkout failed")


def _suspect(dbapi_conn: Any) -> bool:
    """Whether an idle connection may be dead: its driver says so, or the server sent something unasked (a
    connection between transactions receives nothing unless the server ends it)."""
    if getattr(dbapi_conn, "broken", False) or getattr(dbapi_conn, "closed", False):
        return True
    try:
        fd = dbapi_conn.fileno()
    except Exception:  # noqa: BLE001  (no socket to look at: ask the server)
        return True
    poll = select.poll()
    poll.register(fd, select.POLLIN | select.POLLPRI)
    return bool(poll.poll(0))


_lock = threading.Lock()
_engine: Engine | None = None
_sessionmaker: sessionmaker[Session] | None = None


def get_engine() -> Engine:
    global _engine, _sessionmaker
    with _lock:
        if _engine is None:
            _engine = make_engine(get_settings().sqlalchemy_url)
            _sessionmaker = sessionmaker(_engine, expire_on_commit=False)
        return _engine


def set_engine(engine: Engine | None) -> None:
    """Point the process at another engine (tests, CLI with --database)."""
    global _engine, _sessionmaker
    with _lock:
        _engine = engine
        _sessionmaker = sessionmaker(engine, expire_on_commit=False) if engine is not None else None


def session_factory() -> sessionmaker[Session]:
    get_engine()
    assert _sessionmaker is not None
    return _sessionmaker


_AFTER_COMMIT = "tierpilot.after_commit"


def after_commit(session: Session, fn: Callable[[], object], key: Hashable | None = None) -> None:
    """Run ``fn`` once the session's outermost transaction commits; dropped on its rollback. With ``key``, a
    transaction runs one function of that key however often it is asked for (the first one).

    A SAVEPOINT's release fires SQLAlchemy's ``after_commit`` too, while the outer transaction still holds
    its locks: a job that writes (SQLite) would wait on its own request until the busy time-out.
    """
    pending: dict[Hashable, Callable[[], object]] = session.info.setdefault(_AFTER_COMMIT, {})
    if not event.contains(session, "after_commit", _run_after_commit):
        event.listen(session, "after_commit", _run_after_commit)
        event.listen(session, "after_rollback", _drop_after_commit)
    pending.setdefault(object() if key is None else key, fn)


def _run_after_commit(session: Session) -> None:
    if session.in_nested_transaction():
        return
    for fn in session.info.pop(_AFTER_COMMIT, {}).values():
        _run_committed(fn)


def _run_committed(fn: Callable[[], object]) -> None:
    """Run one after-commit function: the commit stands whatever it does, so a failure (a broker that is down)
    is logged, not raised into a request whose change is already durable (periodic sweeps catch up)."""
    try:
        fn()
    except Exception:
        _log.warning("an after-commit function failed: %r", fn, exc_info=True)


def _drop_after_commit(session: Session) -> None:
    if not session.in_nested_transaction():
        session.info.pop(_AFTER_COMMIT, None)


class CommitUnknown(Exception):
    """The COMMIT was sent and failed without an answer one can trust (a connection cut at that moment, a server
    that crashed or failed over, an I/O error at the commit): the transaction may have committed or not.

    A writer that would retry, answer or delete something on a failure looks first (its write's own id: a blob's
    unique locator, a row's version); ``confirmed()`` then runs what was to run after the commit.
    """

    def __init__(self, cause: Exception, after: list[Callable[[], object]]) -> None:
        super().__init__(f"the outcome of a commit is unknown: {type(cause).__name__}: {cause}")
        self.cause = cause
        self._after = after

    def confirmed(self) -> None:
        """The writer found its changes committed: run the transaction's after-commit functions (once)."""
        after, self._after = self._after, []
        for fn in after:
            _run_committed(fn)


@contextmanager
def transaction(write: bool = False) -> Iterator[Session]:
    """A session that commits on success and rolls back on error: the one commit point.

    ``write=True`` takes SQLite's write lock at BEGIN (no effect on PostgreSQL). Every statement is sent before
    the COMMIT, so an error raised by the COMMIT itself is ``CommitUnknown``: nothing else may be assumed of it.
    """
    session = session_factory()()
    if write:
        session.connection(execution_options={"sqlite_immediate": True})
    try:
        try:
            yield session
            session.flush()
        except BaseException:
            session.rollback()
            raise
        after = list(session.info.get(_AFTER_COMMIT, {}).values())
        try:
            session.commit()
        except Exception as cause:
            with contextlib.suppress(Exception):
                session.rollback()
            raise CommitUnknown(cause, after) from cause
    finally:
        session.close()
