"""kit.db: jobs after the commit run once the outermost transaction commits, never at a SAVEPOINT; a pooled
PostgreSQL connection is pinged only when it may be dead."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.pool import NullPool

from tests.conftest import TEST_DB
from tierpilot.auth.models import ApiToken
from tierpilot.kit.db import after_commit, make_engine, ping_when_suspect, transaction
from tierpilot.tiers.models import Tier


def test_a_job_waits_for_the_outer_commit_not_a_savepoint_and_a_rollback_drops_it(db: str) -> None:
    ran: list[str] = []
    with transaction(write=True) as session:
        after_commit(session, lambda: ran.append("outer"))
        with session.begin_nested():
            session.execute(text("SELECT 1"))
            after_commit(session, lambda: ran.append("inner"))
        assert ran == []  # the SAVEPOINT was released; the transaction still holds its locks
    assert ran == ["outer", "inner"]

    try:
        with transaction(write=True) as session:
            after_commit(session, lambda: ran.append("rolled back"))
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    assert ran == ["outer", "inner"]


def test_a_token_used_for_a_write_with_a_savepoint_notes_its_last_use(db: str, client: TestClient) -> None:
    """Creating a bucket flushes in a SAVEPOINT; the token's last-use write used to run there and wait on the
    request's own SQLite write lock until the busy time-out, then give up."""
    with transaction(write=True) as s:
        s.add(Tier(name="db-hot", driver="posix", config={"path": "/nonexistent"}, storage_classes=["STANDARD"]))
    r = client.post("/api/auth/tokens", json={"name": "script", "expires_in_days": 30})
    assert r.status_code == 201, r.text
    token = r.json()["token"]
    with transaction(write=True) as s:
        s.query(ApiToken).update({ApiToken.last_used_at: None})
    r = client.post("/api/buckets", json={"name": "db-savepoint", "tier": "db-hot"},
                    headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 201, r.text
    with transaction() as s:
        used = [t.last_used_at for t in s.query(ApiToken).filter(ApiToken.name == "script")]
    assert used and used[0] is not None


def test_a_sqlite_catalog_syncs_its_wal_at_every_commit(tmp_path: Path) -> None:
    """An answered write's row must survive a power loss, not only a process crash: WAL with synchronous=FULL
    (NORMAL would sync only at checkpoints)."""
    engine = make_engine(f"sqlite:///{tmp_path / 'catalog.db'}")
    try:
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
    finally:
        engine.dispose()


def _wait_readable(engine: Engine, pid: int) -> None:
    """Until the server's end of a terminated backend reached the pooled connection's socket."""
    import select
    import time

    pool = engine.pool
    conns = [rec.dbapi_connection for rec in pool._pool.queue]  # type: ignore[attr-defined]
    assert len(conns) == 1
    poll = select.poll()
    poll.register(conns[0].fileno(), select.POLLIN)
    deadline = time.monotonic() + 10
    while not poll.poll(50):
        assert time.monotonic() < deadline, f"backend {pid} was terminated but its socket stays quiet"


def _terminate(db_url: str, pid: int) -> None:
    admin = create_engine(db_url, poolclass=NullPool)
    try:
        with admin.connect() as conn:
            assert conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid}).scalar()
    finally:
        admin.dispose()


@pytest.mark.skipif(TEST_DB != "postgresql", reason="PostgreSQL's pooled connections")
def test_a_pooled_connection_is_pinged_only_when_idle_long_or_when_the_server_ended_it(db: str) -> None:
    """No ``SELECT 1`` per checkout: a connection used a moment ago goes out as it is; one idle for
    ``idle_after`` seconds, or whose server closed it (a restart, ``pg_terminate_backend``), is pinged first, and
    a failed ping gives the checkout a new connection instead of an error."""
    engine = create_engine(db, pool_size=1, max_overflow=0)
    now = [1000.0]
    ping_when_suspect(engine, idle_after=5.0, clock=lambda: now[0])
    pings: list[bool] = []
    do_ping = engine.dialect.do_ping

    def counted(dbapi_conn: Any) -> bool:
        try:
            alive = do_ping(dbapi_conn)
        except Exception:
            pings.append(False)
            raise
        pings.append(alive)
        return alive

    engine.dialect.do_ping = counted  # type: ignore[method-assign,assignment]

    def backend() -> int:
        with engine.connect() as conn:
            return int(conn.execute(text("SELECT pg_backend_pid()")).scalar_one())

    try:
        first = backend()
        now[0] += 4.9
        assert backend() == first and pings == []  # fresh, then used 4.9 s ago: no ping
        now[0] += 5.0
        assert backend() == first and pings == [True]  # idle 5 s: pinged
        _terminate(db, first)
        _wait_readable(engine, first)
        now[0] += 0.1
        second = backend()  # idle 0.1 s, but its socket speaks: pinged, found dead, replaced
        assert second != first and pings == [True, False]
        assert backend() == second and pings == [True, False]
    finally:
        engine.dispose()


@pytest.mark.skipif(TEST_DB != "postgresql", reason="PostgreSQL's pooled connections")
def test_the_engine_survives_the_server_ending_every_pooled_connection_without_a_ping_per_checkout(
        db: str) -> None:
    """``make_engine``'s pool as after a PostgreSQL restart: the next transaction gets a working connection."""
    engine = make_engine(db, pool_size=1, max_overflow=0)
    statements: list[str] = []
    event.listen(engine, "before_cursor_execute", lambda *args: statements.append(args[2]))
    try:
        assert not engine.pool._pre_ping  # type: ignore[attr-defined]
        with engine.connect() as conn:
            first = int(conn.execute(text("SELECT pg_backend_pid()")).scalar_one())
        _terminate(db, first)
        _wait_readable(engine, first)
        with engine.connect() as conn:
            assert int(conn.execute(text("SELECT pg_backend_pid()")).scalar_one()) != first
        assert statements == ["SELECT pg_backend_pid()"] * 2
    finally:
        engine.dispose()
