"""kit.db: jobs after the commit run once the outermost transaction commits, never at a SAVEPOINT."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import text

from tierpilot.auth.models import ApiToken
from tierpilot.kit.db import after_commit, make_engine, transaction
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
