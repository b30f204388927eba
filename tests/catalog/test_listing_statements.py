"""Listings at the statement level: how many statements a page costs (counted, never timed), and
ListObjectVersions paged every way against the versions as the catalog holds them key by key."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import event, insert
from sqlalchemy.orm import Session

from tierpilot.catalog import repository, service, versions
from tierpilot.catalog.models import Bucket, Object, ObjectVersion
from tierpilot.tiers.models import Tier

NOW = datetime(2026, 11, 1, tzinfo=UTC)


@pytest.fixture
def bucket(session: Session) -> Bucket:
    from tierpilot.auth.models import User

    tag = uuid.uuid4().hex[:8]
    user = User(username=f"lst-{tag}", password_hash="x")
    tier = Tier(name=f"lst-{tag}", driver="posix", config={"path": "/nonexistent"}, storage_classes=["STANDARD"])
    session.add_all([user, tier])
    session.flush()
    b = Bucket(name=f"lst-{tag}", owner_id=user.id, tier_id=tier.id, object_count=0, used_bytes=0,
               versioning="Enabled")
    session.add(b)
    session.flush()
    return b


def _fill(session: Session, bucket: Bucket, keys: list[str], noncurrent: int = 0, marker_every: int = 0) -> None:
    """Rows straight into the tables: ``noncurrent`` older versions per key, a delete marker on every
    ``marker_every``-th key (newest: it hides the key, which then has no current row)."""
    common: dict[str, Any] = dict(bucket_id=bucket.id, size=7, etag="e" * 32, tier_id=bucket.tier_id,
                                  storage_class="STANDARD", created_at=NOW, last_modified=NOW, user_metadata={},
                                  headers={}, tags={}, locator="x")
    current, older = [], []
    for i, key in enumerate(keys):
        older += [dict(common, key=key, delete_marker=False, version_id=f"v{n}-{i}", noncurrent_since=NOW)
                  for n in range(noncurrent)]
        if marker_every and i % marker_every == 0:
            older.append(dict(common, key=key, delete_marker=True, size=0, tier_id=None, version_id=f"m-{i}",
                              noncurrent_since=NOW))
        else:
            current.append(dict(common, key=key, version_id=f"c-{i}"))
    if current:
        session.execute(insert(Object), current)
    if older:
        session.execute(insert(ObjectVersion), older)


@contextmanager
def statements(session: Session) -> Iterator[list[str]]:
    """The SQL statements the session's connection runs inside the block."""
    seen: list[str] = []
    engine = session.connection().engine

    def note(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if not statement.lstrip().upper().startswith(("SAVEPOINT", "RELEASE")):
            seen.append(statement)

    event.listen(engine, "before_cursor_execute", note)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", note)


@pytest.mark.parametrize("listing", [service.list_objects, service.list_objects_s3], ids=["dashboard", "s3"])
def test_a_list_objects_page_of_1000_keys_is_one_statement(session: Session, bucket: Bucket, listing: Any) -> None:
    _fill(session, bucket, [f"k/{i:05d}" for i in range(2500)])
    with statements(session) as seen:
        page = listing(session, bucket.id, prefix="k/", marker="k/00100", max_keys=1000)
    assert len(page.objects) == 1000 and page.truncated and page.next_marker == "k/01100"
    assert len(seen) == 1, seen


def test_the_s3_page_reads_what_list_objects_shows_in_its_order(session: Session, bucket: Bucket) -> None:
    _fill(session, bucket, ["a", "b"])
    # the gateway's rows come from the driver's cursor as they are: key, LastModified, bare ETag, size, class
    page = service.list_objects_s3(session, bucket.id)
    assert page.objects == [(key, "2026-11-01T00:00:00.000Z", "e" * 32, 7, "STANDARD") for key in ("a", "b")]


def test_a_delimiter_page_inside_a_folder_reads_few_statements(session: Session, bucket: Bucket) -> None:
    _fill(session, bucket, [f"k/{i:05d}" for i in range(2500)])
    with statements(session) as seen:
        page = service.list_objects(session, bucket.id, prefix="k/", delimiter="/", max_keys=1000)
    assert len(page.objects) == 1000 and page.truncated and not page.prefixes
    # reads of 32, 64, ... rows: growing while keys are shown, the last one stops at the page's end
    assert len(seen) <= 7, len(seen)


@pytest.mark.parametrize("scan", ["scan_listed", "scan_listed_s3"])
def test_a_delimiter_page_reads_no_more_rows_than_it_shows(session: Session, bucket: Bucket, scan: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    _fill(session, bucket, [f"k/{i:05d}" for i in range(2500)])
    read: list[int] = []
    scanned = getattr(repository, scan)

    def counted(*args: Any, **kwargs: Any) -> Any:
        found = scanned(*args, **kwargs)
        read.append(len(found))
        return found

    monkeypatch.setattr(repository, scan, counted)
    listing = service.list_objects_s3 if scan.endswith("_s3") else service.list_objects
    page = listing(session, bucket.id, prefix="k/", delimiter="/", max_keys=1000)
    assert len(page.objects) == 1000 and page.truncated and not page.prefixes
    # reads of 32, 64, ... rows, the last one only what the page still has room for and one more
    assert read == [32, 64, 128, 256, 512, 9], read


@pytest.mark.parametrize("listing", [versions.list_versions, versions.list_versions_s3], ids=["api", "s3"])
def test_a_list_versions_page_of_1000_is_one_statement(session: Session, bucket: Bucket, listing: Any) -> None:
    _fill(session, bucket, [f"k/{i:05d}" for i in range(1200)], noncurrent=1, marker_every=10)
    with statements(session) as seen:
        page = listing(session, bucket.id, prefix="k/", key_marker="k/00100", max_keys=1000)
    assert len(page.versions) == 1000 and page.truncated
    assert len(seen) == 1, seen
    # resuming inside a key from the page's markers (as every client's next page does): the statement looks
    # the version-id marker up itself
    with statements(session) as seen:
        nxt = listing(session, bucket.id, prefix="k/", key_marker=page.next_key_marker or "",
                      version_id_marker=page.next_version_id_marker or "", max_keys=1000)
    assert len(nxt.versions) == 1000
    assert len(seen) == 1, seen


def test_the_s3_versions_page_reads_what_list_object_versions_shows_in_its_order(session: Session,
                                                                                 bucket: Bucket) -> None:
    _fill(session, bucket, ["a", "b"], noncurrent=1, marker_every=2)
    page = versions.list_versions_s3(session, bucket.id)
    # the driver's tuples: key, version id, LastModified, bare ETag, size, class, delete marker, then the row id
    # (the current row's above every version's)
    shown = [(key, vid, modified, etag, size, cls, bool(marker)) for key, vid, modified, etag, size, cls, marker, _
             in page.versions]
    stamp = "2026-11-01T00:00:00.000Z"
    etag = "e" * 32
    assert shown == [("a", "m-0", stamp, etag, 0, "STANDARD", True), ("a", "v0-0", stamp, etag, 7, "STANDARD", False),
                     ("b", "c-1", stamp, etag, 7, "STANDARD", False), ("b", "v0-1", stamp, etag, 7, "STANDARD", False)]
    assert page.versions[2][-1] == repository.ALL_VERSIONS
    assert page.latest() == [True, False, True, False]


def test_version_markers_before_the_prefix_start_the_listing_at_the_prefix(session: Session, bucket: Bucket) -> None:
    _fill(session, bucket, ["a/1", "a/2", "b/1"], noncurrent=2)
    page = versions.list_versions(session, bucket.id, prefix="b/", key_marker="a/1", version_id_marker="v0-0")
    assert [(row.key, row.version_id) for row in page.versions] == [("b/1", "c-2"), ("b/1", "v1-2"), ("b/1", "v0-2")]


def test_delimiter_listings_seek_past_each_folder(session: Session, bucket: Bucket,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    folders, per_folder = 40, 300
    _fill(session, bucket, [f"run{f:03d}/{i:04d}" for f in range(folders) for i in range(per_folder)],
          noncurrent=1)
    read: list[int] = []
    scan_listed, scan_versions = repository.scan_listed, repository.scan_versions

    def listed(*args: Any, **kwargs: Any) -> Any:
        found = scan_listed(*args, **kwargs)
        read.append(len(found))
        return found

    def versioned(*args: Any, **kwargs: Any) -> Any:
        found = scan_versions(*args, **kwargs)
        read.append(len(found))
        return found

    monkeypatch.setattr(repository, "scan_listed", listed)
    monkeypatch.setattr(repository, "scan_versions", versioned)
    for name, page_of in (("v2", lambda: service.list_objects(session, bucket.id, delimiter="/")),
                          ("versions", lambda: versions.list_versions(session, bucket.id, delimiter="/"))):
        read.clear()
        with statements(session) as seen:
            page = page_of()
        assert page.prefixes == [f"run{f:03d}/" for f in range(folders)], name
        # one small read per folder (and one finding the end), never the folder's 300 keys; PostgreSQL walks the
        # ListObjectsV2 page's folders after the first in one statement
        walked = name == "v2" and session.get_bind().dialect.name == "postgresql"
        assert len(seen) == (2 if walked else folders + 1), (name, len(seen))
        assert sum(read) <= folders * repository.FOLDER_BATCH, (name, sum(read))


def _model(session: Session, bucket: Bucket, keys: list[str]) -> list[tuple[str, str, bool, bool]]:
    """(key, version id, is latest, delete marker) of every version, from the catalog's by-key reads."""
    out = []
    for key in sorted(keys):
        current = repository.get_object(session, bucket.id, key)
        rows: list[tuple[str, bool]] = [(current.version_id, False)] if current is not None else []
        rows += [(v.version_id, v.delete_marker) for v in repository.versions_of_key(session, bucket.id, key)]
        out += [(key, vid, n == 0, marker) for n, (vid, marker) in enumerate(rows)]
    return out


@pytest.mark.parametrize("max_keys", [1, 2, 3, 7, 1000])
def test_list_versions_pages_match_the_versions_key_by_key(session: Session, bucket: Bucket, max_keys: int) -> None:
    keys = ["a", "a/1", "a/2", "b", "b/c/1", "b/c/2", "b/d", "c/", "c/x", "d~", "é/1", "z"]
    _fill(session, bucket, keys, noncurrent=2, marker_every=3)
    for prefix, delimiter in (("", ""), ("", "/"), ("b/", "/"), ("b/", ""), ("a", "/"), ("c/", "/")):
        expected: list[Any] = []
        for key, vid, latest, marker in _model(session, bucket, keys):
            if not key.startswith(prefix):
                continue
            cut = key.find(delimiter, len(prefix)) if delimiter else -1
            if cut >= 0:
                common = ("prefix", key[: cut + len(delimiter)])
                if common not in expected:
                    expected.append(common)
            else:
                expected.append((key, vid, latest, marker))
        got: list[Any] = []
        key_marker = version_marker = ""
        for _ in range(200):
            page = versions.list_versions(session, bucket.id, prefix, delimiter, key_marker, version_marker,
                                          max_keys)
            entries = [(r.key, r.version_id, latest, r.delete_marker) for r, latest in page.entries]
            got += sorted(entries + [("prefix", p) for p in page.prefixes],
                          key=lambda e: (e[1] if e[0] == "prefix" else e[0]))
            assert len(page.entries) + len(page.prefixes) <= max_keys
            if not page.truncated:
                break
            key_marker, version_marker = page.next_key_marker or "", page.next_version_id_marker or ""
        assert got == expected, (prefix, delimiter)


def test_a_delimiter_versions_page_reads_no_more_rows_than_it_shows(session: Session, bucket: Bucket,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    _fill(session, bucket, [f"k/{i:05d}" for i in range(2500)], noncurrent=1)
    read: list[int] = []
    scan_versions = repository.scan_versions

    def versioned(*args: Any, **kwargs: Any) -> Any:
        found = scan_versions(*args, **kwargs)
        read.append(len(found))
        return found

    monkeypatch.setattr(repository, "scan_versions", versioned)
    page = versions.list_versions(session, bucket.id, prefix="k/", delimiter="/", max_keys=1000)
    assert len(page.versions) == 1000 and page.truncated and not page.prefixes
    # reads of 32, 64, ... rows, the last one only what the page still has room for and one more
    assert read == [32, 64, 128, 256, 512, 9], read
