"""The GET/HEAD lookup without a session (``catalog.hotread``): the same row the ORM reads, and no stale one."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from datetime import UTC, datetime

import pytest
from sqlalchemy import text, update
from sqlalchemy.orm import Session

from tests.conftest import TEST_DB
from tierpilot.catalog import changes, hotread, repository, store
from tierpilot.catalog.models import Bucket, Object
from tierpilot.kit import db as kitdb
from tierpilot.kit import generations
from tierpilot.kit.db import transaction
from tierpilot.kit.settings import get_settings
from tierpilot.tiers.models import Tier
from tierpilot.tiers.repository import spec_of


@pytest.fixture
def bucket(tiers: dict[str, Tier]) -> Bucket:
    from tests.conftest import make_user
    from tierpilot.catalog import service

    user = make_user("hotread-owner", "hotread-password-1")
    with transaction(write=True) as s:
        b = service.create_bucket(s, owner_id=int(user["id"]), name="hotread-test", tier_name="hot-disk")
        s.flush()
        s.expunge(b)
    return b


def _put(bucket: Bucket, tier: Tier, key: str, body: bytes, **meta: str) -> None:
    spec = store.NewObject(tier=spec_of(tier), storage_class="STANDARD", content_type="text/plain", user_metadata=meta,
                           headers={"cache-control": "no-cache"}, tags={"t": "1"})
    store.put_object(bucket, key, iter([body]), spec)


def _lookups(bucket_id: int, key: str) -> list[Object | None]:
    """The row read in a worker thread's way and from an event loop (a new loop each time: PostgreSQL's
    connections of the last loop are closed and new ones made)."""
    now = asyncio.run(hotread.current_on_loop(bucket_id, key))
    assert now is not hotread.BUSY
    return [hotread.current(bucket_id, key), now]  # type: ignore[list-item]


def test_lookup_reads_every_column_the_orm_reads(bucket: Bucket, tiers: dict[str, Tier]) -> None:
    _put(bucket, tiers["hot-disk"], "a/ü key", b"hello", colour="blue")
    with transaction() as s:
        orm = repository.get_object(s, bucket.id, "a/ü key")
        assert orm is not None
        expected = {col.key: getattr(orm, col.key) for col in Object.__table__.columns}
    for obj in _lookups(bucket.id, "a/ü key"):
        assert obj is not None
        assert {col.key: getattr(obj, col.key) for col in Object.__table__.columns} == expected
        assert obj.last_modified.tzinfo is not None and obj.user_metadata == {"colour": "blue"}


def test_lookup_sees_a_commit_made_after_its_previous_read(bucket: Bucket, tiers: dict[str, Tier]) -> None:
    # the inline reader keeps its connection between requests: it must not keep a snapshot with it
    _put(bucket, tiers["hot-disk"], "k", b"one")
    first = _lookups(bucket.id, "k")
    with transaction(write=True) as s:
        s.execute(update(Object).where(Object.bucket_id == bucket.id, Object.key == "k").values(etag="changed"))
    assert [o.etag if o else None for o in _lookups(bucket.id, "k")] == ["changed"] * len(first)
    with transaction(write=True) as s:
        repository.delete_object_rows(s, [first[0].id])  # type: ignore[union-attr]
    assert _lookups(bucket.id, "k") == [None] * len(first)


def test_lookup_of_an_absent_key_is_none(bucket: Bucket) -> None:
    assert _lookups(bucket.id, "never-written") == [None, None]


def test_empty_json_columns_read_as_the_orm_reads_them(bucket: Bucket, tiers: dict[str, Tier]) -> None:
    # "{}", "null" and "[]" are made without json.loads on SQLite: still equal to the ORM's, each read's own values
    spec = store.NewObject(tier=spec_of(tiers["hot-disk"]), storage_class="STANDARD", content_type="text/plain")
    store.put_object(bucket, "plain", iter([b"x"]), spec)
    with transaction(write=True) as s:
        s.execute(update(Object).where(Object.bucket_id == bucket.id, Object.key == "plain").values(part_sizes=[]))
    with transaction() as s:
        orm = repository.get_object(s, bucket.id, "plain")
        assert orm is not None
        expected = {col.key: getattr(orm, col.key) for col in Object.__table__.columns}
    assert expected["user_metadata"] == {} and expected["part_checksums"] is None and expected["part_sizes"] == []
    first = _lookups(bucket.id, "plain")[-1]
    _rewrite_etag(bucket.id, "plain", "changed")  # a commit: the next read is a statement of its own
    second = _lookups(bucket.id, "plain")[-1]
    assert first is not None and second is not None
    assert {col.key: getattr(first, col.key) for col in Object.__table__.columns} == expected
    assert first.last_modified.tzinfo is UTC and first.created_at.tzinfo is UTC
    assert second.user_metadata is not first.user_metadata and second.part_sizes is not first.part_sizes


def _statements(bucket_id: int, keys: list[str]) -> tuple[list[object], int]:
    """The keys read from an event loop in turn, and how many statements the SQLite reader ran for them."""
    reader = hotread._reader()
    ran: list[str] = []
    reader.conn.set_trace_callback(ran.append)
    try:
        found: list[object] = [asyncio.run(hotread.current_on_loop(bucket_id, key)) for key in keys]
    finally:
        reader.conn.set_trace_callback(None)
    return found, len(ran)


@pytest.mark.skipif(TEST_DB != "sqlite", reason="the SQLite reader's rows of one state of the database")
def test_sqlite_reader_answers_a_key_again_from_memory_until_the_next_commit(bucket: Bucket,
                                                                            tiers: dict[str, Tier]) -> None:
    _put(bucket, tiers["hot-disk"], "k", b"one")
    assert hotread._reader().index is not None  # WAL mode: the index header is there to trust
    (first, again, absent, absent_again), ran = _statements(bucket.id, ["k", "k", "gone", "gone"])
    assert ran == 2 and again is first and absent is None and absent_again is None
    _rewrite_etag(bucket.id, "k", "changed")
    (after,), ran = _statements(bucket.id, ["k"])
    assert ran == 1 and isinstance(after, hotread.ObjectRow) and after.etag == "changed"


@pytest.mark.skipif(TEST_DB != "sqlite", reason="the SQLite reader's rows of one state of the database")
def test_sqlite_reader_sees_a_commit_of_another_process(bucket: Bucket, tiers: dict[str, Tier]) -> None:
    # the API, the worker and other gateways write the catalog from processes of their own
    _put(bucket, tiers["hot-disk"], "k", b"one")
    (first, again), ran = _statements(bucket.id, ["k", "k"])
    assert ran == 1 and again is first
    database = kitdb.get_engine().url.database
    assert database is not None
    subprocess.run([sys.executable, "-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
                    "c.execute('UPDATE objects SET etag = ? WHERE bucket_id = ? AND key = ?', ('other', "
                    "int(sys.argv[2]), 'k')); c.commit()", database, str(bucket.id)], check=True, timeout=60)
    (after,), ran = _statements(bucket.id, ["k"])
    assert ran == 1 and isinstance(after, hotread.ObjectRow) and after.etag == "other"


@pytest.mark.skipif(TEST_DB != "sqlite", reason="the SQLite reader's rows of one state of the database")
def test_sqlite_row_read_while_a_commit_landed_is_not_kept(bucket: Bucket, tiers: dict[str, Tier]) -> None:
    # a commit made as the reader's statement starts: the index header differs after it, so the row (of one state
    # or the other) is not kept, and the next read is a statement again
    _put(bucket, tiers["hot-disk"], "k", b"one")
    reader = hotread._reader()
    commits = iter(["during"])

    def commit_once(_sql: str) -> None:
        etag = next(commits, None)
        if etag is not None:
            _rewrite_etag(bucket.id, "k", etag)

    reader.conn.set_trace_callback(commit_once)
    try:
        during = asyncio.run(hotread.current_on_loop(bucket.id, "k"))
    finally:
        reader.conn.set_trace_callback(None)
    assert isinstance(during, hotread.ObjectRow)
    (after,), ran = _statements(bucket.id, ["k"])
    assert ran == 1 and isinstance(after, hotread.ObjectRow) and after.etag == "during"


@pytest.mark.skipif(TEST_DB != "postgresql", reason="PostgreSQL's event-loop connections")
def test_postgresql_reads_share_a_bounded_set_of_connections(bucket: Bucket, tiers: dict[str, Tier]) -> None:
    # 40 reads asked for at once on one loop share statements: the rows are the ones asked for (a key asked
    # twice gets two objects of its own), on no more connections than the setting allows
    for i in range(8):
        _put(bucket, tiers["hot-disk"], f"k{i}", b"x" * i, colour=str(i))

    async def run() -> tuple[list[Object | None], int, int]:
        found = await asyncio.gather(*(hotread.current_on_loop(bucket.id, f"k{i % 10}") for i in range(40)))
        readers = hotread._pg
        assert readers is not None
        return list(found), readers.statements, readers.answered  # type: ignore[arg-type]

    found, statements, answered = asyncio.run(run())
    assert [o.size if o else None for o in found] == [i % 10 if i % 10 < 8 else None for i in range(40)]
    assert [o.user_metadata if o else None for o in found] == [
        {"colour": str(i % 10)} if i % 10 < 8 else None for i in range(40)]
    assert found[0] is not None and found[10] is found[0]  # a key asked twice in one statement: one row for both
    assert answered == 40 and statements == 1
    with kitdb.get_engine().connect() as conn:
        backends = conn.execute(text("SELECT count(*) FROM pg_stat_activity WHERE application_name = :name "
                                     "AND datname = current_database()"), {"name": hotread.APPLICATION_NAME}).scalar()
    assert backends is not None and 1 <= backends <= get_settings().gateway_db_readers
    hotread.close_readers()


@pytest.mark.skipif(TEST_DB != "postgresql", reason="PostgreSQL's event-loop connections")
def test_postgresql_read_asked_during_a_statement_is_not_answered_by_it(bucket: Bucket, tiers: dict[str, Tier],
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # a read asked for while a statement is under way must see commits made before it was asked: it waits for
    # the next statement, never taking the answer of one sent before it (one connection: one statement at a time)
    monkeypatch.setattr(get_settings(), "gateway_db_readers", 1)
    _put(bucket, tiers["hot-disk"], "k", b"old")

    async def run() -> tuple[object, object, int]:
        await hotread.current_on_loop(bucket.id, "k")  # the loop's connection made
        readers = hotread._pg
        assert readers is not None
        before = readers.statements
        first = asyncio.ensure_future(hotread.current_on_loop(bucket.id, "k"))
        for _ in range(100):  # until the leader took the first read and its statement is under way
            await asyncio.sleep(0)
            if readers.leaders and not readers.pending:
                break
        assert readers.leaders == 1 and readers.pending == [] and not first.done()
        await asyncio.to_thread(_rewrite_etag, bucket.id, "k", "changed")  # committed while it runs
        second = await hotread.current_on_loop(bucket.id, "k")
        return await first, second, readers.statements - before

    first, second, statements = asyncio.run(run())
    assert isinstance(first, hotread.ObjectRow) and isinstance(second, hotread.ObjectRow)
    assert second.etag == "changed" and statements == 2
    hotread.close_readers()


def _rewrite_etag(bucket_id: int, key: str, etag: str) -> None:
    with transaction(write=True) as s:
        _rewrite_in(s, bucket_id, key, etag)


@pytest.mark.skipif(TEST_DB != "postgresql", reason="PostgreSQL's event-loop connections")
def test_postgresql_connection_killed_under_a_reader_is_dropped_and_replaced(bucket: Bucket,
                                                                            tiers: dict[str, Tier]) -> None:
    # the server ends the loop's connection (a restart, an admin's pg_terminate_backend): that read answers BUSY
    # (the request reads in a worker thread instead), the connection is dropped, the next read opens a new one
    _put(bucket, tiers["hot-disk"], "k", b"one")

    async def run() -> list[object]:
        out: list[object] = [await hotread.current_on_loop(bucket.id, "k")]
        with kitdb.get_engine().connect() as conn:
            conn.execute(text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = :name "
                              "AND datname = current_database()"), {"name": hotread.APPLICATION_NAME})
            conn.commit()
        out.append(await hotread.current_on_loop(bucket.id, "k"))
        out.append(await hotread.current_on_loop(bucket.id, "k"))
        readers = hotread._pg
        assert readers is not None
        out.append(len(readers.idle))
        return out

    first, killed, after, idle = asyncio.run(run())
    assert isinstance(first, hotread.ObjectRow) and killed is hotread.BUSY
    assert isinstance(after, hotread.ObjectRow) and after.etag == first.etag and idle == 1
    hotread.close_readers()


@pytest.fixture
def moves(redis_url: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The objects generation's moves, counted as they are made (each a real move in the suite's Redis), with this
    process set up as an installation with Redis."""
    monkeypatch.setattr(get_settings(), "redis_url", redis_url)
    made: list[str] = []
    real = generations.bump

    def bump(url: str, name: str) -> int | None:
        if name == changes.OBJECTS_GENERATION:
            made.append(name)
        return real(url, name)

    monkeypatch.setattr(generations, "bump", bump)
    return made


def test_every_commit_that_changes_objects_moves_the_objects_generation_once(
        bucket: Bucket, tiers: dict[str, Tier], moves: list[str]) -> None:
    # each way a process writes the table: the Core insert and overwrite of a put, the ORM's flush of a changed
    # Object, an ORM UPDATE statement, SQL text (adoption), a delete; reads and rolled back writes move nothing.
    # On SQLite nothing moves: its readers watch the database's own WAL index.
    counts: list[int] = []

    def step() -> None:
        counts.append(len(moves))
        moves.clear()

    _put(bucket, tiers["hot-disk"], "k", b"one")
    step()
    _put(bucket, tiers["hot-disk"], "k", b"two")
    step()
    with transaction(write=True) as s:
        obj = repository.get_object(s, bucket.id, "k")
        assert obj is not None
        obj.content_type = "text/csv"
        obj.etag = "orm"
    step()
    _rewrite_etag(bucket.id, "k", "statement")
    step()
    with transaction(write=True) as s:
        assert repository.adopt_objects(s, bucket.id, [{
            "key": "adopted", "size": 1, "etag": "e", "tier_id": tiers["hot-disk"].id, "storage_class": "STANDARD",
            "locator": "adopted", "created_at": datetime(2026, 1, 1, tzinfo=UTC),
            "last_modified": datetime(2026, 1, 1, tzinfo=UTC)}])[0] == 1
    step()
    with transaction() as s:
        assert repository.get_object(s, bucket.id, "k") is not None
    step()
    with pytest.raises(RuntimeError), transaction(write=True) as s:
        _rewrite_in(s, bucket.id, "k", "rolled back")
        raise RuntimeError("the write is abandoned")
    step()
    store.delete_objects(bucket, ["k", "adopted"])
    step()
    assert counts == ([0] * 8 if TEST_DB == "sqlite" else [1, 1, 1, 1, 1, 0, 0, 1])


def _rewrite_in(s: Session, bucket_id: int, key: str, etag: str) -> None:
    s.execute(update(Object).where(Object.bucket_id == bucket_id, Object.key == key).values(etag=etag))


@pytest.mark.skipif(TEST_DB != "postgresql", reason="PostgreSQL's rows kept under the objects generation")
def test_postgresql_rows_are_kept_under_the_objects_generation_until_a_change_moves_it(
        bucket: Bucket, tiers: dict[str, Tier], moves: list[str]) -> None:
    _put(bucket, tiers["hot-disk"], "k", b"one")
    clock = [1000.0]

    async def run() -> list[object]:
        hotread.watch_changes(get_settings().redis_url)
        try:
            readers = hotread._pg_readers(kitdb.get_engine())
            readers.clock = lambda: clock[0]

            async def read(key: str) -> tuple[object, int]:
                before = readers.statements
                row = await hotread.current_on_loop(bucket.id, key, generations.Seen())
                return row, readers.statements - before

            out: list[object] = [await read("k"), await read("k"), await read("absent"), await read("absent")]
            await asyncio.to_thread(_put, bucket, tiers["hot-disk"], "k", b"two")  # moves the generation
            await asyncio.to_thread(_put, bucket, tiers["hot-disk"], "absent", b"now here")
            out += [await read("k"), await read("k"), await read("absent")]
            clock[0] += get_settings().gateway_cache_s  # kept rows are at most that old
            out.append(await read("k"))
            return out
        finally:
            await hotread.stop_watching()
            hotread.close_readers()

    (first, ran1), (again, ran2), (absent, ran3), (absent_again, ran4), (after, ran5), (after_again, ran6), \
        (present, ran7), (expired, ran8) = asyncio.run(run())  # type: ignore[misc]
    assert isinstance(first, hotread.ObjectRow) and again is first and absent is None and absent_again is None
    assert (ran1, ran2, ran3, ran4) == (1, 0, 1, 0)
    assert isinstance(after, hotread.ObjectRow) and after.etag != first.etag and after_again is after
    assert isinstance(present, hotread.ObjectRow) and present.size == len(b"now here")
    assert (ran5, ran6, ran7) == (1, 0, 1)
    assert isinstance(expired, hotread.ObjectRow) and expired is not after and ran8 == 1


@pytest.mark.skipif(TEST_DB != "postgresql", reason="PostgreSQL's rows kept under the objects generation")
def test_postgresql_rows_are_not_kept_without_a_generation(bucket: Bucket, tiers: dict[str, Tier]) -> None:
    # no Redis (nothing to read a generation from), or a generation that could not be read: every read a statement
    _put(bucket, tiers["hot-disk"], "k", b"one")

    async def run() -> int:
        readers = hotread._pg_readers(kitdb.get_engine())
        for _ in range(3):
            assert isinstance(await hotread.current_on_loop(bucket.id, "k", generations.Seen()), hotread.ObjectRow)
            assert isinstance(await readers.read(bucket.id, "k", None), hotread.ObjectRow)
        return readers.statements

    assert asyncio.run(run()) == 6
    hotread.close_readers()
