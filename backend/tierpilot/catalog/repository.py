"""Only this module queries catalog tables (buckets, objects, multipart uploads and parts)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, NamedTuple, cast

from sqlalchemy import (
    JSON,
    ColumnElement,
    Integer,
    Row,
    Select,
    SQLColumnExpression,
    String,
    Table,
    and_,
    any_,
    bindparam,
    case,
    column,
    delete,
    false,
    func,
    literal,
    literal_column,
    select,
    text,
    true,
    type_coerce,
    union_all,
    update,
)
from sqlalchemy.orm import Session, aliased

from tierpilot.auth import repository as auth_repository
from tierpilot.catalog import projects
from tierpilot.catalog.models import Bucket, MultipartUpload, Object, ObjectUsage, ObjectVersion, UploadPart
from tierpilot.kit.db import UTCDateTime, utcnow

OBJECTS = cast(Table, Object.__table__)


def prefix_end(prefix: str) -> str | None:
    """The smallest string above every string that starts with ``prefix`` (None: no upper bound).

    Keys compare by code point on both databases (UTF-8 bytes in SQLite, C collation in PostgreSQL),
    so bumping the last code point works; surrogates cannot appear in stored keys and are skipped.
    """
    chars = list(prefix)
    while chars:
        code = ord(chars[-1]) + 1
        if code <= 0x10FFFF:
            chars[-1] = chr(0xE000 if 0xD800 <= code <= 0xDFFF else code)
            return "".join(chars)
        chars.pop()
    return None


def starts_with(column: Any, prefix: str) -> list[ColumnElement[bool]]:
    """Conditions for ``column`` starting with ``prefix``, as one range of an index on it."""
    if not prefix:
        return []
    upper = prefix_end(prefix)
    return [column >= prefix] if upper is None else [column >= prefix, column < upper]


# buckets ---------------------------------------------------------------------------------------------


def get_bucket_by_name(session: Session, name: str) -> Bucket | None:
    return session.scalar(select(Bucket).where(Bucket.name == name))


def get_bucket(session: Session, bucket_id: int) -> Bucket | None:
    return session.get(Bucket, bucket_id)


def buckets_by_id(session: Session, bucket_ids: Iterable[int]) -> list[Bucket]:
    """The buckets of the given ids, by name."""
    return list(session.scalars(select(Bucket).where(Bucket.id.in_(list(bucket_ids))).order_by(Bucket.name)))


def bucket_names(session: Session, bucket_ids: Sequence[int] | None = None) -> dict[int, str]:
    """Bucket id -> name, of the given buckets or of all."""
    q = select(Bucket.id, Bucket.name)
    if bucket_ids is not None:
        q = q.where(Bucket.id.in_(list(bucket_ids)))
    return {int(i): str(n) for i, n in session.execute(q)}


def add_buckets(session: Session, buckets: Sequence[Bucket]) -> None:
    """Insert new buckets (their ids are set on return)."""
    session.add_all(buckets)
    session.flush()


def list_buckets(session: Session, owner_id: int | None) -> list[Bucket]:
    """Buckets of one owner, or all when ``owner_id`` is None, by name."""
    q = select(Bucket).order_by(Bucket.name)
    if owner_id is not None:
        q = q.where(Bucket.owner_id == owner_id)
    return list(session.scalars(q))


@lru_cache(maxsize=1)
def _add_usage_statement() -> Any:
    b = Bucket.__table__
    return (
        update(Bucket)
        .where(b.c.id == bindparam("bucket_id"))
        .values(object_count=b.c.object_count + bindparam("objects"), used_bytes=b.c.used_bytes + bindparam("nbytes"))
        .returning(b.c.object_count, b.c.used_bytes, b.c.space_bytes, b.c.space_start, b.c.space_end, b.c.project_id)
    )


def add_usage(session: Session, bucket_id: int, objects: int, nbytes: int) -> Any | None:
    """Move a bucket's running totals (and its project's quota counter); returns the row after (counts, space
    reservation, project), None if gone."""
    row = session.execute(_add_usage_statement(), {"bucket_id": bucket_id, "objects": objects,
                                                    "nbytes": nbytes}).first()
    if row is not None:
        projects.usage_moved(session, row[5], objects, nbytes)
    return row


# A PutObject's statements as Core on the session's connection: the ORM's unit of work, identity map and
# bulk-update machinery would cost a small PUT more than its statements do. The rows of concurrent PUTs share
# them (``service.record_objects``): one statement per round, not per row.


def add_usage_row(session: Session, bucket_id: int, objects: int, nbytes: int) -> Any | None:
    """``add_usage`` without the ORM (no Bucket loaded in the session is refreshed: the PUT path loads none)."""
    row = session.connection().execute(_add_usage_core(), {"bucket_id": bucket_id, "objects": objects,
                                                            "nbytes": nbytes}).first()
    if row is not None:
        projects.usage_moved(session, row[5], objects, nbytes)
    return row


@lru_cache(maxsize=1)
def _add_usage_core() -> Any:
    b = cast(Table, Bucket.__table__)
    return (update(b).where(b.c.id == bindparam("bucket_id"))
            .values(object_count=b.c.object_count + bindparam("objects"),
                    used_bytes=b.c.used_bytes + bindparam("nbytes"))
            .returning(b.c.object_count, b.c.used_bytes, b.c.space_bytes, b.c.space_start, b.c.space_end,
                       b.c.project_id))


def buckets_versioning_rows(session: Session, bucket_ids: Iterable[int]) -> dict[int, BucketVersioning]:
    """``bucket_versioning`` of the buckets of a round, without the ORM (a gone bucket is left out): a statement per
    bucket, of one text (an expanding ``IN`` list is rendered again at every execution)."""
    conn, out = session.connection(), {}
    for bucket_id in bucket_ids:
        row = conn.execute(_versioning_core(), {"bucket_id": bucket_id}).first()
        if row is not None:
            out[bucket_id] = (row[0], bool(row[1]), row[2], row[3], row[4])
    return out


@lru_cache(maxsize=1)
def _versioning_core() -> Any:
    b = cast(Table, Bucket.__table__)
    return select(b.c.versioning, b.c.object_lock, b.c.lock_default_mode, b.c.lock_default_days,
                  b.c.lock_default_years).where(b.c.id == bindparam("bucket_id"))


class WriteTarget(NamedTuple):
    """What a write needs of the current version it replaces: its row, its bytes, its conditions and its lock."""

    id: int
    key: str
    size: int
    etag: str
    tier_id: int
    locator: str
    version_id: str
    lock_mode: str | None
    lock_until: datetime | None
    legal_hold: bool


_TARGET_COLUMNS = tuple(OBJECTS.c[name] for name in WriteTarget._fields)


def objects_for_write(session: Session, bucket_id: int, keys: Sequence[str]) -> dict[str, WriteTarget]:
    """The current versions of some keys of a bucket, locked for the transaction (PostgreSQL: in key order, the
    order every round takes them in, so two rounds never wait for each other's rows crosswise)."""
    conn = session.connection()
    rows = conn.execute(_objects_for_write_core(conn.dialect.name), {"bucket_id": bucket_id, "keys": list(keys)})
    return {row[1]: WriteTarget(*row) for row in rows}


@lru_cache(maxsize=2)
def _objects_for_write_core(dialect: str) -> Any:
    # the keys as one parameter (an array; SQLite: a JSON list): a statement of one text whatever their number
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import ARRAY

        wanted: ColumnElement[bool] = OBJECTS.c.key == any_(bindparam("keys", type_=ARRAY(String)))
    else:
        wanted = OBJECTS.c.key.in_(select(literal_column("value")).select_from(
            func.json_each(bindparam("keys", type_=JSON))))
    return (select(*_TARGET_COLUMNS).where(OBJECTS.c.bucket_id == bindparam("bucket_id"), wanted)
            .order_by(OBJECTS.c.key).with_for_update())


def insert_object_rows(session: Session, rows: Sequence[dict[str, Any]]) -> dict[tuple[int, str], int]:
    """Insert current versions (the same columns in every row) in one statement; the id of each by (bucket id,
    key). A key left out has a row already (a concurrent writer's insert on PostgreSQL; SQLite's write lock admits
    none)."""
    conn = session.connection()
    if conn.dialect.name == "postgresql":
        inserted = conn.exec_driver_sql(_insert_objects_postgresql(tuple(rows[0])),
                                        {"rows": json.dumps(rows, default=_json_time)})
    else:
        inserted = conn.execute(_insert_objects_sqlite(), list(rows))
    return {(bucket_id, key): object_id for bucket_id, key, object_id in inserted}


@lru_cache(maxsize=4)
def _insert_objects_postgresql(columns: tuple[str, ...]) -> str:
    """The rows as one JSON parameter, unpacked by the server: a statement of one text whatever the number of rows
    (prepared by psycopg once), where a multi-row VALUES list would be a new text each time, parsed by psycopg in
    Python on every PUT round."""
    from sqlalchemy.dialects import postgresql

    dialect = postgresql.dialect()
    quote = dialect.identifier_preparer.quote
    names = ", ".join(quote(name) for name in columns)
    types = ", ".join(f"{quote(name)} {_column_type(OBJECTS.c[name]).compile(dialect=dialect)}" for name in columns)
    return (f"INSERT INTO objects ({names}) SELECT {names} FROM jsonb_to_recordset(%(rows)s::jsonb) AS r({types}) "
            "ON CONFLICT (bucket_id, key) DO NOTHING RETURNING bucket_id, key, id")


def _column_type(column: Any) -> Any:
    """A column's type; a foreign key's is its target's (given to the column once the mappers are configured)."""
    if column.type._isnull and column.foreign_keys:
        return next(iter(column.foreign_keys)).column.type
    return column.type


def _json_time(value: Any) -> str:
    """A timestamp as the JSON of the rows (``UTCDateTime`` refuses a naive one too)."""
    if isinstance(value, datetime) and value.tzinfo is not None:
        return value.isoformat()
    raise TypeError(f"not a timestamp with a zone: {value!r}")


@lru_cache(maxsize=1)
def _insert_objects_sqlite() -> Any:
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return (sqlite_insert(OBJECTS).on_conflict_do_nothing(index_elements=["bucket_id", "key"])
            .returning(OBJECTS.c.bucket_id, OBJECTS.c.key, OBJECTS.c.id))


def update_object_rows(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    """Overwrite current versions in place, one executemany: each row's ``object_id`` and its new values (the
    same columns in every row)."""
    if rows:
        session.connection().execute(_update_objects_core(), list(rows))


@lru_cache(maxsize=1)
def _update_objects_core() -> Any:
    return update(OBJECTS).where(OBJECTS.c.id == bindparam("object_id"))  # SET: the rows' other names


def usage(session: Session, bucket_id: int) -> tuple[int, int]:
    row = session.execute(select(Bucket.object_count, Bucket.used_bytes).where(Bucket.id == bucket_id)).first()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def bucket_counts_by_tier(session: Session) -> dict[int, int]:
    """Tier id -> buckets bound to it."""
    rows = session.execute(select(Bucket.tier_id, func.count(Bucket.id)).group_by(Bucket.tier_id))
    return {tier_id: int(count) for tier_id, count in rows}


def bucket_usage(session: Session, owner_id: int | None,
                 bucket_ids: Collection[int] | None = None) -> list[tuple[str, int, int, int, int]]:
    """(name, owner id, tier id, objects, bytes) of every bucket (or one owner's, or those of ``bucket_ids``), its
    current objects summed from the usage deltas (``ObjectUsage``), by name."""
    usage = (
        select(ObjectUsage.bucket_id, func.sum(ObjectUsage.bytes).label("b"), func.sum(ObjectUsage.objects).label("n"))
        .group_by(ObjectUsage.bucket_id)
        .subquery()
    )
    q = (
        select(Bucket.name, Bucket.owner_id, Bucket.tier_id, usage.c.n, usage.c.b)
        .outerjoin(usage, usage.c.bucket_id == Bucket.id)
        .order_by(Bucket.name)
    )
    if owner_id is not None:
        q = q.where(Bucket.owner_id == owner_id)
    if bucket_ids is not None:
        q = q.where(Bucket.id.in_(list(bucket_ids)))
    return [(str(name), int(owner), int(tier), int(n or 0), int(b or 0))
            for name, owner, tier, n, b in session.execute(q)]


def bucket_has_objects(session: Session, bucket_id: int) -> bool:
    """Whether the bucket holds an object, a noncurrent version or a delete marker."""
    if session.scalar(select(Object.id).where(Object.bucket_id == bucket_id).limit(1)) is not None:
        return True
    return bucket_has_versions(session, bucket_id)


def delete_bucket_row(session: Session, bucket_id: int) -> None:
    session.execute(delete(Bucket).where(Bucket.id == bucket_id))


def bucket_exists(session: Session, bucket_id: int) -> bool:
    """Whether the bucket of this id still exists (ids are never reused: a gone id stays gone)."""
    return session.scalar(select(Bucket.id).where(Bucket.id == bucket_id)) is not None


# objects ---------------------------------------------------------------------------------------------


@lru_cache(maxsize=2)
def _object_statement(for_update: bool) -> Select[Any]:
    q = select(Object).where(Object.bucket_id == bindparam("bucket_id"), Object.key == bindparam("key"))
    return q.with_for_update() if for_update else q


def get_object(session: Session, bucket_id: int, key: str, for_update: bool = False) -> Object | None:
    return session.scalar(_object_statement(for_update), {"bucket_id": bucket_id, "key": key})


def written(session: Session, writes: Sequence[tuple[int, str, str]]) -> dict[str, Object | ObjectVersion]:
    """Of ``(bucket_id, key, locator)`` writes, those the catalog holds, by locator (unique per write): the current
    row of the key, else a version of it (written, then superseded in a versioned bucket)."""
    found: dict[str, Object | ObjectVersion] = {}
    for bucket_id, key, locator in writes:
        row: Object | ObjectVersion | None = session.scalar(
            select(Object).where(Object.bucket_id == bucket_id, Object.key == key, Object.locator == locator))
        if row is None:
            row = session.scalar(select(ObjectVersion).where(
                ObjectVersion.bucket_id == bucket_id, ObjectVersion.key == key, ObjectVersion.locator == locator
            ).limit(1))
        if row is not None:
            found[locator] = row
    return found


def get_objects(session: Session, bucket_id: int, keys: Sequence[str]) -> list[Object]:
    return list(session.scalars(select(Object).where(Object.bucket_id == bucket_id, Object.key.in_(keys))))


def delete_object_rows(session: Session, object_ids: Sequence[int]) -> None:
    session.execute(delete(Object).where(Object.id.in_(object_ids)))


class ListedObject(NamedTuple):
    """What a listing shows of an object: read as plain columns, not ORM objects (whose identity-map
    bookkeeping and JSON columns cost most of a 1,000-key page)."""

    key: str
    size: int
    etag: str
    storage_class: str
    last_modified: datetime
    tier_id: int
    restore_state: str | None


_LISTED = (OBJECTS.c.key, OBJECTS.c.size, OBJECTS.c.etag, OBJECTS.c.storage_class, OBJECTS.c.last_modified,
           OBJECTS.c.tier_id, OBJECTS.c.restore_state)


# rows a delimiter listing reads after a common prefix (growing while keys are shown): the next key often opens
# another folder, whose other keys are never read
FOLDER_BATCH = 32


@lru_cache(maxsize=32)
def _scan_statement(lower: str, has_upper: bool, s3_dialect: str | None = None) -> Select[Any]:
    # built once per shape: constructing a statement costs more than running this one on SQLite.
    # ``s3_dialect``: ListObjects' columns (``ListedForS3``) for that database instead of ``_LISTED``
    t = OBJECTS
    q = select(*(_LISTED if s3_dialect is None else _listed_s3(s3_dialect))).where(
        t.c.bucket_id == bindparam("bucket_id"))
    if lower == "inclusive":
        q = q.where(t.c.key >= bindparam("lower"))
    elif lower == "exclusive":
        q = q.where(t.c.key > bindparam("lower"))
    if has_upper:
        q = q.where(t.c.key < bindparam("upper"))
    return q.order_by(t.c.key).limit(bindparam("limit"))


def scan_listed(session: Session, bucket_id: int, lower: str | None, lower_inclusive: bool, upper: str | None,
                limit: int) -> list[ListedObject]:
    """The listed columns of a bucket's keys with lower <(=) key < upper in key order: one range of the
    (bucket_id, key) index."""
    kind = "none" if lower is None else ("inclusive" if lower_inclusive else "exclusive")
    params: dict[str, Any] = {"bucket_id": bucket_id, "lower": lower, "upper": upper, "limit": limit}
    found = session.execute(_scan_statement(kind, upper is not None), params).all()  # one fetchall
    # copied into plain tuples: the page's renderer reads five fields of each row, and a Row's attribute access
    # costs more than the copy
    return [ListedObject._make(r) for r in found]


# What ListObjects shows of an object, in the order <Contents> shows it: key, LastModified as S3's text
# (``2026-01-02T03:04:05.678Z``), ETag without its quotes, size, storage class. A plain tuple as the database
# driver returns it: a page is 1,000 of them, and a named tuple or a Row per key cost more than the rendering.
ListedForS3 = tuple[str, str, str, int, str]

# S3's LastModified made by PostgreSQL (to_char's MS truncates, as isoformat(timespec="milliseconds") does)
_PG_ISO = 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'


def _listed_s3(dialect: str) -> tuple[ColumnElement[Any], ...]:
    t = OBJECTS
    if dialect == "postgresql":
        # LastModified in UTC whatever the session's time zone, and the bare ETag, made by the server
        return (t.c.key, func.to_char(func.timezone("UTC", t.c.last_modified), _PG_ISO),
                func.btrim(t.c.etag, literal_column("'\"'")), t.c.size, t.c.storage_class)
    # SQLite hands over the stored text, sliced in Python (``scan_listed_s3``): its own substr() and trim() on
    # 1,000 rows cost more than the slicing
    return t.c.key, type_coerce(t.c.last_modified, String), t.c.etag, t.c.size, t.c.storage_class


def _sqlite_iso(stored: str) -> str:
    """S3's LastModified of a time as SQLite stores it (SQLAlchemy writes ``YYYY-MM-DD HH:MM:SS.ffffff``)."""
    if len(stored) == 26 and stored[19] == ".":
        return f"{stored[:10]}T{stored[11:23]}Z"
    # any other form a writer left (no fraction, an offset): read as the column type reads it
    moment = datetime.fromisoformat(stored)
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return moment.isoformat(timespec="milliseconds")[:23] + "Z"


def scan_listed_s3(session: Session, bucket_id: int, lower: str | None, lower_inclusive: bool, upper: str | None,
                   limit: int) -> list[ListedForS3]:
    """``scan_listed`` for the gateway's ListObjects: the shown columns (``ListedForS3``) as plain tuples."""
    conn = session.connection()
    dialect = conn.dialect.name
    kind = "none" if lower is None else ("inclusive" if lower_inclusive else "exclusive")
    params: dict[str, Any] = {"bucket_id": bucket_id, "lower": lower, "upper": upper, "limit": limit}
    result = conn.execute(_scan_statement(kind, upper is not None, dialect), params)
    # the DBAPI cursor's own tuples: no column here needs a result processor, and a Row per key (then copied
    # into a named tuple) was a third of the page's CPU
    found: Sequence[Any] = result.cursor.fetchall()
    result.close()
    if dialect == "postgresql":
        return list(found)  # already a list from psycopg: a copy of 1,000 references
    return [(key, f"{modified[:10]}T{modified[11:23]}Z" if len(modified) == 26 and modified[19] == "."
             else _sqlite_iso(modified), etag.strip('"'), size, storage_class)
            for key, modified, etag, size, storage_class in found]


def folder_end(delimiter: str) -> str | None:
    """What a common prefix's folder is skipped with in one statement: ``prefix_end`` of the prefix is the prefix
    with its delimiter's last code point bumped, so ``left(key, …) || folder_end`` in SQL; None when bumping the
    last code point is not how ``prefix_end`` ends that delimiter (a delimiter ending in U+10FFFF)."""
    end = prefix_end(delimiter)
    return end if end is not None and len(end) == len(delimiter) else None


# A delimiter page on PostgreSQL in one statement: a walk of the (bucket_id, key) index that takes the next key
# after each row read, past the row's whole folder when the row opens one (its common prefix's ``prefix_end``), so
# a page of 1,000 common prefixes is 1,000 index descents in the server rather than 1,000 round trips.
_WALK = """WITH RECURSIVE walk(key, n) AS (
  (SELECT o.key, 1 FROM objects o WHERE o.bucket_id = :bucket_id{first} ORDER BY o.key LIMIT 1)
  UNION ALL
  SELECT nxt.key, w.n + 1 FROM walk w CROSS JOIN LATERAL (
    SELECT o.key FROM objects o WHERE o.bucket_id = :bucket_id AND o.key > w.key
      AND o.key >= (CASE WHEN strpos(substr(w.key, :after), :delimiter) > 0
                    THEN left(w.key, :after - 2 + strpos(substr(w.key, :after), :delimiter)) || :folder_end
                    ELSE w.key END) COLLATE "C"{upper}
    ORDER BY o.key LIMIT 1) nxt
  WHERE w.n < :limit)
SELECT key FROM walk"""


@lru_cache(maxsize=16)
def _walk_statement(lower: str, has_upper: bool, s3: bool) -> Select[Any]:
    upper = " AND o.key < :upper" if has_upper else ""
    first = {"inclusive": " AND o.key >= :lower", "exclusive": " AND o.key > :lower", "none": ""}[lower] + upper
    walk = text(_WALK.format(first=first, upper=upper)).columns(column("key", OBJECTS.c.key.type)).subquery("walk")
    t = OBJECTS
    return (select(*(_listed_s3("postgresql") if s3 else _LISTED))
            .select_from(t.join(walk, and_(t.c.bucket_id == bindparam("bucket_id"), t.c.key == walk.c.key)))
            .order_by(t.c.key))


def scan_folders(session: Session, bucket_id: int, lower: str | None, lower_inclusive: bool, upper: str | None,
                 limit: int, prefix: str, delimiter: str, s3: bool) -> list[Any] | None:
    """A delimiter listing's rows after ``lower`` in key order, each folder (common prefix after ``prefix``) by its
    first key only, at most ``limit``: ``ListedForS3`` tuples when ``s3``, else ``ListedObject``. None where one
    statement cannot do it (not PostgreSQL, or ``folder_end`` has none for the delimiter): read range by range."""
    end = folder_end(delimiter)
    conn = session.connection()
    if end is None or conn.dialect.name != "postgresql":
        return None
    kind = "none" if lower is None else ("inclusive" if lower_inclusive else "exclusive")
    params = {"bucket_id": bucket_id, "lower": lower, "upper": upper, "limit": limit, "after": len(prefix) + 1,
              "delimiter": delimiter, "folder_end": end}
    result = conn.execute(_walk_statement(kind, upper is not None, s3), params)
    found: Sequence[Any] = result.cursor.fetchall() if s3 else result.all()
    result.close()
    return list(found) if s3 else [ListedObject._make(r) for r in found]


def touch_objects(session: Session, last_access: dict[int, Any]) -> None:
    """Record last-access times in one statement per distinct time (ids of one flush share most)."""
    by_time: dict[Any, list[int]] = {}
    for object_id, when in last_access.items():
        by_time.setdefault(when, []).append(object_id)
    for when, ids in by_time.items():
        session.execute(update(Object).where(Object.id.in_(ids)).values(last_access_at=when))


def get_object_by_id(session: Session, object_id: int) -> Object | None:
    """One object by id (from the session's identity map when loaded already)."""
    return session.get(Object, object_id)


def objects_by_id(session: Session, object_ids: Sequence[int]) -> dict[int, Object]:
    """Object id -> object, of those of the given ids that still exist."""
    if not object_ids:
        return {}
    return {o.id: o for o in session.scalars(select(Object).where(Object.id.in_(list(object_ids))))}


def object_locators(session: Session, object_ids: Sequence[int]) -> dict[int, str]:
    """Object id -> current locator, of those of the given ids that still exist."""
    if not object_ids:
        return {}
    return {int(i): str(loc) for i, loc in session.execute(select(Object.id, Object.locator)
                                                           .where(Object.id.in_(list(object_ids))))}


def switch_object(session: Session, object_id: int, old_locator: str, old_etag: str, *, tier_id: int,
                  storage_class: str, locator: str) -> bool:
    """Point an object at its copy on another tier, only if it still is the version that was copied."""
    result = session.execute(
        update(Object)
        .where(Object.id == object_id, Object.locator == old_locator, Object.etag == old_etag)
        .values(tier_id=tier_id, storage_class=storage_class, locator=locator, restore_state=None,
                restore_speed=None, restore_expiry=None)
        .execution_options(synchronize_session=False)
    )
    return result.rowcount == 1  # type: ignore[attr-defined]


def delete_object(session: Session, object_id: int, old_locator: str) -> bool:
    """Delete an object only while it still is the version at ``old_locator`` and no object lock (retention or
    legal hold) protects it (totals are the caller's)."""
    unlocked = and_(Object.legal_hold.is_(False),
                    (Object.lock_until.is_(None)) | (Object.lock_until <= utcnow()))
    result = session.execute(delete(Object).where(Object.id == object_id, Object.locator == old_locator, unlocked)
                             .execution_options(synchronize_session=False))
    return result.rowcount == 1  # type: ignore[attr-defined]


def set_restore_state(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    """Set objects' restore columns, only where the object still has the restored blob (``_locator``).

    Each row: ``_object_id``, ``_locator``, ``restore_state``, ``restore_speed``, ``restore_expiry``.
    """
    if not rows:
        return
    table = OBJECTS
    stmt = (update(table)
            .where(table.c.id == bindparam("_object_id"), table.c.locator == bindparam("_locator"))
            .values(restore_state=bindparam("restore_state"), restore_speed=bindparam("restore_speed"),
                    restore_expiry=bindparam("restore_expiry")))
    session.execute(stmt, list(rows))


def has_object_at(session: Session, tier_id: int, locator: str, bucket: str | None = None,
                  key: str | None = None) -> bool:
    """Whether an object points at this blob; with its bucket name and key, checked by one index lookup."""
    if bucket is None or key is None:
        return any(session.scalar(select(m.id).where(m.tier_id == tier_id, m.locator == locator).limit(1)) is not None
                   for m in (Object, ObjectVersion))
    return any(session.scalar(select(m.id).join(Bucket, Bucket.id == m.bucket_id).where(
        Bucket.name == bucket, m.key == key, m.tier_id == tier_id, m.locator == locator).limit(1)) is not None
        for m in (Object, ObjectVersion))


# restore candidates: what a restore batch needs of an object
_RESTORE_COLUMNS = (Object.id, Object.key, Object.size, Object.tier_id, Object.storage_class, Object.locator,
                    Object.restore_state, Object.restore_expiry)


def restore_candidates_by_keys(session: Session, bucket_id: int, keys: Sequence[str], chunk: int = 500
                               ) -> list[Any]:
    """Rows (id, key, size, tier_id, storage_class, locator, restore_state, restore_expiry) of the given keys
    (missing keys are left out), in chunks of IN lists."""
    rows: list[Any] = []
    for start in range(0, len(keys), chunk):
        part = list(keys[start:start + chunk])
        rows.extend(session.execute(select(*_RESTORE_COLUMNS)
                                    .where(Object.bucket_id == bucket_id, Object.key.in_(part))))
    return rows


def restore_candidates_by_prefix(session: Session, bucket_id: int, prefix: str, limit: int) -> list[Any]:
    """The same rows for keys starting with ``prefix``: one range seek of the (bucket_id, key) index."""
    q = select(*_RESTORE_COLUMNS).where(Object.bucket_id == bucket_id)
    q = q.where(*starts_with(Object.key, prefix))
    return list(session.execute(q.order_by(Object.key).limit(limit)))


# tiers' contents -------------------------------------------------------------------------------------


def usage_by_tier(session: Session, bucket_id: int | None = None) -> dict[int, tuple[int, int]]:
    """Tier id -> (bytes, objects) of the current objects, of one bucket or all: sums of the usage deltas, a few
    rows per bucket and tier once folded, however many objects there are."""
    n = func.sum(ObjectUsage.objects)
    q = select(ObjectUsage.tier_id, func.sum(ObjectUsage.bytes), n).group_by(ObjectUsage.tier_id).having(n > 0)
    if bucket_id is not None:
        q = q.where(ObjectUsage.bucket_id == bucket_id)
    return {int(t): (int(b), int(count)) for t, b, count in session.execute(q)}


def fold_usage(session: Session) -> int:
    """Replace the usage deltas by one row per bucket and tier (their sums); returns how many rows it folded.

    On PostgreSQL one statement deletes the rows its snapshot sees and inserts their sums, so deltas that writers
    append meanwhile stay for the next fold; under SQLite's single writer two statements are as safe.
    """
    if session.get_bind().dialect.name == "postgresql":
        return int(session.scalar(text(_FOLD_POSTGRESQL)) or 0)
    t = cast(Table, ObjectUsage.__table__)
    last = session.scalar(select(func.max(t.c.id)))
    if last is None:
        return 0
    session.execute(t.insert().from_select(
        ["bucket_id", "tier_id", "objects", "bytes"],
        select(t.c.bucket_id, t.c.tier_id, func.sum(t.c.objects), func.sum(t.c.bytes)).where(t.c.id <= last)
        .group_by(t.c.bucket_id, t.c.tier_id).having((func.sum(t.c.objects) != 0) | (func.sum(t.c.bytes) != 0))))
    return int(session.execute(delete(t).where(t.c.id <= last)).rowcount or 0)  # type: ignore[attr-defined]


_FOLD_POSTGRESQL = """WITH gone AS (DELETE FROM object_usage RETURNING bucket_id, tier_id, objects, bytes),
sums AS (INSERT INTO object_usage (bucket_id, tier_id, objects, bytes)
         SELECT bucket_id, tier_id, sum(objects), sum(bytes) FROM gone GROUP BY bucket_id, tier_id
         HAVING sum(objects) <> 0 OR sum(bytes) <> 0 RETURNING 1)
SELECT count(*) FROM gone"""


def tier_totals(session: Session, tier_id: int, min_billable_bytes: int,
                bucket_ids: Sequence[int] | None = None) -> tuple[int, int, int]:
    """(objects, bytes, billable bytes) on one tier, of the given buckets or all; an object smaller than
    ``min_billable_bytes`` bills as that many."""
    billed = (case((Object.size < min_billable_bytes, min_billable_bytes), else_=Object.size)
              if min_billable_bytes else Object.size)
    q = select(func.count(Object.id), func.coalesce(func.sum(Object.size), 0),
               func.coalesce(func.sum(billed), 0)).where(Object.tier_id == tier_id)
    if bucket_ids is not None:
        q = q.where(Object.bucket_id.in_(list(bucket_ids)))
    n, b, billable = session.execute(q).one()
    return int(n), int(b), int(billable)


def tier_references(session: Session, tier_id: int) -> tuple[int, int, int]:
    """(objects, buckets, multipart uploads) stored on or bound to a tier."""
    objects = session.scalar(select(func.count(Object.id)).where(Object.tier_id == tier_id)) or 0
    buckets = session.scalar(select(func.count(Bucket.id)).where(Bucket.tier_id == tier_id)) or 0
    uploads = session.scalar(
        select(func.count(MultipartUpload.id)).where(MultipartUpload.tier_id == tier_id)
    ) or 0
    return int(objects), int(buckets), int(uploads)


def iter_tier_objects(session: Session, tier_id: int, batch: int = 5000
                      ) -> Iterator[tuple[int, int, str, str, int]]:
    """(id, bucket_id, key, locator, size) of every object on a tier, in id order, read in batches."""
    last = 0
    while True:
        rows = session.execute(select(Object.id, Object.bucket_id, Object.key, Object.locator, Object.size)
                               .where(Object.tier_id == tier_id, Object.id > last)
                               .order_by(Object.id).limit(batch)).all()
        if not rows:
            return
        for r in rows:
            yield int(r[0]), int(r[1]), str(r[2]), str(r[3]), int(r[4])
        last = int(rows[-1][0])


FIXITY_COLUMNS = (Object.id, Object.bucket_id, Object.key, Object.version_id, Object.tier_id, Object.locator,
                  Object.size, Object.etag, Object.checksum_algorithm, Object.checksum_value, Object.part_sizes,
                  Object.part_checksums)


def fixity_candidates(session: Session, after_id: int, limit: int, *, tier_ids: Sequence[int] | None = None,
                      bucket_id: int | None = None) -> list[Any]:
    """The next current versions to audit after ``after_id`` in id order (an audit's cursor), with what their
    bytes must match: size, ETag, checksum and the parts' sizes and checksums."""
    q = select(*FIXITY_COLUMNS).where(Object.id > after_id).order_by(Object.id).limit(limit)
    if tier_ids is not None:
        q = q.where(Object.tier_id.in_(list(tier_ids)))
    if bucket_id is not None:
        q = q.where(Object.bucket_id == bucket_id)
    return list(session.execute(q).all())


def set_missing_checksum(session: Session, object_id: int, locator: str, algorithm: str, value: str) -> bool:
    """Give an object written before ingest checksums the one an audit computed from its verified bytes; a row
    overwritten meanwhile (another locator) or given one already is left alone."""
    result = session.execute(update(Object).where(Object.id == object_id, Object.locator == locator,
                                                  Object.checksum_value.is_(None))
                             .values(checksum_algorithm=algorithm, checksum_value=value)
                             .execution_options(synchronize_session=False))
    return bool(result.rowcount == 1)  # type: ignore[attr-defined]


def upload_locators(session: Session, tier_id: int) -> set[str]:
    """Locators of the multipart uploads in progress on a tier."""
    return set(session.scalars(select(MultipartUpload.locator).where(MultipartUpload.tier_id == tier_id)))


def upload_exists_at(session: Session, locator: str) -> bool:
    """Whether a multipart upload in progress keeps its parts under this locator."""
    return session.scalar(select(MultipartUpload.id).where(MultipartUpload.locator == locator)) is not None


# due scans (lifecycle) -------------------------------------------------------------------------------

# columns a sweep needs to decide and queue an action (no ORM objects: a sweep may read 10^5 rows)
CANDIDATE_COLUMNS = (Object.id, Object.key, Object.size, Object.tags, Object.tier_id, Object.storage_class,
                     Object.locator, Object.etag, Object.created_at)

# given an object's id and locator columns, SQL that is true for the versions a caller wants left out
VersionFilter = Callable[[SQLColumnExpression[int], SQLColumnExpression[str]], ColumnElement[bool]]


def _filter_conditions(prefix: str, tags: Sequence[tuple[str, str]], size_gt: int | None, size_lt: int | None,
                       min_size: int | None) -> list[ColumnElement[bool]]:
    conds: list[ColumnElement[bool]] = []
    conds.extend(starts_with(Object.key, prefix))
    for k, v in tags:
        conds.append(Object.tags[k].as_string() == v)
    if size_gt is not None:
        conds.append(Object.size > size_gt)
    if size_lt is not None:
        conds.append(Object.size < size_lt)
    if min_size is not None:
        conds.append(Object.size >= min_size)
    return conds


def due_objects(session: Session, bucket_id: int, tier_id: int, created_before: datetime, *, prefix: str = "",
                tags: Sequence[tuple[str, str]] = (), size_gt: int | None = None, size_lt: int | None = None,
                min_size: int | None = None, classes_below: Sequence[str] | None = None,
                limit: int | None = None, leave_out: VersionFilter | None = None) -> list[Row[Any]]:
    """Objects of one bucket on one tier created at or before ``created_before`` that pass a rule's filter.

    One range of the (bucket_id, tier_id, created_at) index, oldest first: objects leave the range when
    they move or expire, so the rows read are the ones due (plus any the rule's filter leaves behind).
    ``classes_below`` keeps only objects of those (warmer) classes; ``leave_out`` drops object versions
    (the lifecycle's: versions that have a move already), so they never crowd the batch.
    """
    conds = [Object.bucket_id == bucket_id, Object.tier_id == tier_id, Object.created_at <= created_before,
             *_filter_conditions(prefix, tags, size_gt, size_lt, min_size)]
    if classes_below is not None:
        conds.append(Object.storage_class.in_(list(classes_below)))
    if leave_out is not None:
        conds.append(~leave_out(Object.id, Object.locator))
    q = select(*CANDIDATE_COLUMNS).where(and_(*conds)).order_by(Object.created_at, Object.id)
    if limit is not None:
        q = q.limit(limit)
    return list(session.execute(q))


# noncurrent versions as lifecycle rules see them (NoncurrentDays count from ``noncurrent_since``)
VERSION_CANDIDATE_COLUMNS = (ObjectVersion.id, ObjectVersion.key, ObjectVersion.size, ObjectVersion.tags,
                             ObjectVersion.tier_id, ObjectVersion.storage_class, ObjectVersion.locator,
                             ObjectVersion.etag, ObjectVersion.noncurrent_since)


def due_versions(session: Session, bucket_id: int, noncurrent_before: datetime, *, prefix: str = "",
                 tags: Sequence[tuple[str, str]] = (), size_gt: int | None = None, size_lt: int | None = None,
                 min_size: int | None = None, classes_below: Sequence[str] | None = None, limit: int | None = None,
                 leave_out: VersionFilter | None = None) -> list[Row[Any]]:
    """Noncurrent versions (not delete markers) of a bucket that became noncurrent at or before
    ``noncurrent_before`` and pass a rule's filter, longest noncurrent first (``leave_out``: as ``due_objects``)."""
    t = ObjectVersion
    conds: list[ColumnElement[bool]] = [t.bucket_id == bucket_id, t.delete_marker.is_(False),
                                        t.noncurrent_since <= noncurrent_before, *starts_with(t.key, prefix)]
    conds += [t.tags[k].as_string() == v for k, v in tags]
    if size_gt is not None:
        conds.append(t.size > size_gt)
    if size_lt is not None:
        conds.append(t.size < size_lt)
    if min_size is not None:
        conds.append(t.size >= min_size)
    if classes_below is not None:
        conds.append(t.storage_class.in_(list(classes_below)))
    if leave_out is not None:
        conds.append(~leave_out(t.id, t.locator))
    q = select(*VERSION_CANDIDATE_COLUMNS).where(and_(*conds)).order_by(t.noncurrent_since, t.id)
    return list(session.execute(q if limit is None else q.limit(limit)))


def newer_noncurrent_versions(session: Session, bucket_id: int, key: str, version_pk: int) -> int:
    """How many noncurrent versions (not markers) of the key are newer than this one."""
    t = ObjectVersion
    return int(session.scalar(select(func.count()).select_from(t).where(
        t.bucket_id == bucket_id, t.key == key, t.id > version_pk, t.delete_marker.is_(False))) or 0)


def lone_delete_markers(session: Session, bucket_id: int, prefix: str, limit: int,
                        leave_out: VersionFilter | None = None) -> list[ObjectVersion]:
    """Delete markers that are all that is left of their key (no current version, no other version): what
    ExpiredObjectDeleteMarker removes."""
    t, other = ObjectVersion, aliased(ObjectVersion)
    conds = [t.bucket_id == bucket_id, t.delete_marker.is_(True), *starts_with(t.key, prefix),
             ~select(Object.id).where(Object.bucket_id == bucket_id, Object.key == t.key).exists(),
             ~select(other.id).where(other.bucket_id == bucket_id, other.key == t.key, other.id != t.id).exists()]
    if leave_out is not None:
        conds.append(~leave_out(t.id, t.locator))
    return list(session.scalars(select(t).where(and_(*conds)).order_by(t.id).limit(limit)))


def versions_by_id(session: Session, version_pks: Sequence[int]) -> dict[int, ObjectVersion]:
    if not version_pks:
        return {}
    return {v.id: v for v in session.scalars(select(ObjectVersion).where(ObjectVersion.id.in_(list(version_pks))))}


def version_locators(session: Session, version_pks: Sequence[int]) -> dict[int, str]:
    if not version_pks:
        return {}
    t = ObjectVersion
    rows = session.execute(select(t.id, t.locator).where(t.id.in_(list(version_pks))))
    return {pk: locator for pk, locator in rows}


def switch_version(session: Session, version_pk: int, old_locator: str, old_etag: str, *, tier_id: int,
                   storage_class: str, locator: str) -> bool:
    """``switch_object`` for a noncurrent version: its lock columns stay as they are."""
    t = ObjectVersion
    result = session.execute(
        update(t).where(t.id == version_pk, t.locator == old_locator, t.etag == old_etag)
        .values(tier_id=tier_id, storage_class=storage_class, locator=locator, restore_state=None,
                restore_speed=None, restore_expiry=None)
        .execution_options(synchronize_session=False))
    return result.rowcount == 1  # type: ignore[attr-defined]


def delete_unlocked_version(session: Session, version_pk: int, old_locator: str) -> bool:
    """Delete a noncurrent version still at ``old_locator`` unless object lock protects it (totals: caller's)."""
    t = ObjectVersion
    unlocked = and_(t.legal_hold.is_(False), (t.lock_until.is_(None)) | (t.lock_until <= utcnow()))
    result = session.execute(delete(t).where(t.id == version_pk, t.locator == old_locator,
                                             t.delete_marker.is_(False), unlocked)
                             .execution_options(synchronize_session=False))
    return result.rowcount == 1  # type: ignore[attr-defined]


def delete_lone_marker(session: Session, bucket_id: int, marker_pk: int) -> bool:
    """Delete a delete marker only while it is still all that is left of its key."""
    marker = session.get(ObjectVersion, marker_pk)
    if marker is None or not marker.delete_marker or marker.bucket_id != bucket_id:
        return False
    if get_object(session, bucket_id, marker.key) is not None or len(versions_of_key(session, bucket_id,
                                                                                      marker.key)) != 1:
        return False
    delete_version_row(session, marker_pk)
    return True


# multipart -------------------------------------------------------------------------------------------


def get_upload(session: Session, upload_id: str, for_update: bool = False) -> MultipartUpload | None:
    q = select(MultipartUpload).where(MultipartUpload.upload_id == upload_id)
    if for_update:
        q = q.with_for_update()
    return session.scalar(q)


def list_uploads(session: Session, bucket_id: int, prefix: str, key_marker: str, upload_id_marker: str,
                 limit: int) -> list[MultipartUpload]:
    """In-progress uploads ordered by (key, upload id), after the markers, keys starting with prefix."""
    q = select(MultipartUpload).where(MultipartUpload.bucket_id == bucket_id)
    q = q.where(*starts_with(MultipartUpload.key, prefix))
    if key_marker:
        if upload_id_marker:
            q = q.where((MultipartUpload.key > key_marker) | (
                (MultipartUpload.key == key_marker) & (MultipartUpload.upload_id > upload_id_marker)))
        else:
            q = q.where(MultipartUpload.key > key_marker)
    return list(session.scalars(q.order_by(MultipartUpload.key, MultipartUpload.upload_id).limit(limit)))


def stale_uploads(session: Session, bucket_id: int, initiated_before: datetime, prefix: str,
                  limit: int) -> list[MultipartUpload]:
    """Uploads of a bucket begun at or before ``initiated_before`` with keys starting with ``prefix``, oldest first."""
    q = select(MultipartUpload).where(MultipartUpload.bucket_id == bucket_id,
                                      MultipartUpload.initiated_at <= initiated_before)
    q = q.where(*starts_with(MultipartUpload.key, prefix))
    return list(session.scalars(q.order_by(MultipartUpload.initiated_at).limit(limit)))


def owned_by(session: Session, user_id: int) -> list[str]:
    """What a user owns in the catalog, by name: their buckets, and uploads they started in others' buckets."""
    names = list(session.scalars(select(Bucket.name).where(Bucket.owner_id == user_id).order_by(Bucket.name)))
    uploads = session.execute(
        select(Bucket.name, MultipartUpload.key).join(Bucket, Bucket.id == MultipartUpload.bucket_id)
        .where(MultipartUpload.owner_id == user_id, Bucket.owner_id != user_id)
        .order_by(Bucket.name, MultipartUpload.key))
    return [f"bucket {n}" for n in names] + [f"an upload of {k!r} in bucket {b}" for b, k in uploads]


def uploads_of_bucket(session: Session, bucket_id: int) -> list[MultipartUpload]:
    return list(session.scalars(select(MultipartUpload).where(MultipartUpload.bucket_id == bucket_id)))


def delete_upload(session: Session, upload_pk: int) -> None:
    session.execute(delete(UploadPart).where(UploadPart.upload_id == upload_pk))
    session.execute(delete(MultipartUpload).where(MultipartUpload.id == upload_pk))


def get_part(session: Session, upload_pk: int, part_number: int) -> UploadPart | None:
    return session.scalar(
        select(UploadPart).where(UploadPart.upload_id == upload_pk, UploadPart.part_number == part_number)
    )


def list_parts(session: Session, upload_pk: int, after: int = 0, limit: int | None = None) -> list[UploadPart]:
    q = (
        select(UploadPart)
        .where(UploadPart.upload_id == upload_pk, UploadPart.part_number > after)
        .order_by(UploadPart.part_number)
    )
    if limit is not None:
        q = q.limit(limit)
    return list(session.scalars(q))


def parts_size(session: Session, upload_pk: int) -> int:
    return int(session.scalar(select(func.coalesce(func.sum(UploadPart.size), 0))
                              .where(UploadPart.upload_id == upload_pk)) or 0)


def buckets_with_owners(session: Session, owner_id: int | None,
                        project_ids: Sequence[int] = ()) -> list[tuple[Bucket, str]]:
    """(bucket, owner's username) for the Browser page, by bucket name (names from the auth repository): one
    owner's and those of ``project_ids``, or all when ``owner_id`` is None."""
    if owner_id is None or not project_ids:
        buckets = list_buckets(session, owner_id)
    else:
        buckets = list(session.scalars(select(Bucket).where(
            (Bucket.owner_id == owner_id) | Bucket.project_id.in_(list(project_ids))).order_by(Bucket.name)))
    names = auth_repository.usernames(session, {b.owner_id for b in buckets})
    return [(b, names[b.owner_id]) for b in buckets if b.owner_id in names]


# questions the cost planner asks ---------------------------------------------------------------------


def buckets_named(session: Session, names: Sequence[str] | None, owner_id: int | None) -> list[Bucket]:
    """Buckets by name (None: all), limited to one owner's unless owner_id is None."""
    stmt = select(Bucket).order_by(Bucket.name)
    if names:
        stmt = stmt.where(Bucket.name.in_(list(names)))
    if owner_id is not None:
        stmt = stmt.where(Bucket.owner_id == owner_id)
    return list(session.scalars(stmt))


def iter_object_stats(session: Session, bucket_ids: Sequence[int]) -> Iterator[tuple[int, datetime, datetime | None]]:
    """(size, created_at, last_access_at) of every object in the buckets, streamed."""
    if not bucket_ids:
        return
    stmt = (select(Object.size, Object.created_at, Object.last_access_at)
            .where(Object.bucket_id.in_(list(bucket_ids))).execution_options(yield_per=10_000))
    for size, created, accessed in session.execute(stmt):
        yield int(size), created, accessed


def stored_totals(session: Session, bucket_ids: Sequence[int], since: datetime, exact_below: int
                  ) -> Iterator[tuple[int, int, datetime, int, int, int | None]]:
    """What spend bills as storage, summed in the database: (bucket id, tier id, stored from, versions, bytes,
    their size or None) of every stored version in the buckets (current and noncurrent; delete markers hold no
    bytes), grouped by when they were stored (``since`` for everything older) and, below ``exact_below`` bytes,
    by size (a class's minimum billable size applies to each small object)."""
    if not bucket_ids:
        return
    ids = list(bucket_ids)
    for t in (Object, ObjectVersion):
        start = case((t.created_at < since, literal(since, UTCDateTime())), else_=t.created_at)
        size = case((t.size < exact_below, t.size), else_=-1)
        q = (select(t.bucket_id, t.tier_id, start, func.count(), func.sum(t.size), size)
             .where(t.bucket_id.in_(ids), t.tier_id.is_not(None)).group_by(t.bucket_id, t.tier_id, start, size))
        for b, tier, at, n, nbytes, exact in session.execute(q.execution_options(yield_per=10_000)):
            if tier is not None:
                yield int(b), int(tier), at, int(n), int(nbytes), (int(exact) if exact >= 0 else None)


def stored_objects(session: Session, row_ids: Sequence[int], noncurrent: bool = False
                   ) -> list[tuple[int, int, int, int, datetime]]:
    """(id, bucket id, tier id, size, created_at) of those of the given objects (or noncurrent versions, by row id)
    that still exist (columns, not rows: fresh even where the session holds an older copy of the row)."""
    if not row_ids:
        return []
    t = ObjectVersion if noncurrent else Object
    q = (select(t.id, t.bucket_id, t.tier_id, t.size, t.created_at)
         .where(t.id.in_(list(row_ids)), t.tier_id.is_not(None)))
    return [(int(o), int(b), int(tier), int(n), at) for o, b, tier, n, at in session.execute(q) if tier is not None]


# versions (noncurrent versions and delete markers) ---------------------------------------------------


BucketVersioning = tuple[str | None, bool, str | None, int | None, int | None]


def bucket_versioning(session: Session, bucket_id: int) -> BucketVersioning | None:
    """(versioning, object_lock, lock_default_mode, lock_default_days, lock_default_years) of a bucket."""
    row = session.execute(select(Bucket.versioning, Bucket.object_lock, Bucket.lock_default_mode,
                                  Bucket.lock_default_days, Bucket.lock_default_years)
                          .where(Bucket.id == bucket_id)).first()
    return None if row is None else (row[0], bool(row[1]), row[2], row[3], row[4])


def versions_of_key(session: Session, bucket_id: int, key: str, for_update: bool = False) -> list[ObjectVersion]:
    """A key's noncurrent versions and delete markers, newest first."""
    q = (select(ObjectVersion).where(ObjectVersion.bucket_id == bucket_id, ObjectVersion.key == key)
         .order_by(ObjectVersion.id.desc()))
    return list(session.scalars(q.with_for_update() if for_update else q))


def get_version(session: Session, bucket_id: int, key: str, version_id: str) -> ObjectVersion | None:
    return session.scalar(select(ObjectVersion).where(ObjectVersion.bucket_id == bucket_id, ObjectVersion.key == key,
                                                      ObjectVersion.version_id == version_id)
                          .order_by(ObjectVersion.id.desc()).limit(1))


def add_version(session: Session, version: ObjectVersion) -> None:
    session.add(version)
    session.flush()


def delete_version_row(session: Session, version_pk: int) -> None:
    session.execute(delete(ObjectVersion).where(ObjectVersion.id == version_pk)
                    .execution_options(synchronize_session=False))


def bucket_has_versions(session: Session, bucket_id: int) -> bool:
    return session.scalar(select(ObjectVersion.id).where(ObjectVersion.bucket_id == bucket_id).limit(1)) is not None


class ListedVersion(NamedTuple):
    """What the API's versions of a key show of a version: plain columns, as ``ListedObject``. ``current``: the
    key's ``objects`` row; ``row_id`` orders and resumes a key's versions (``ALL_VERSIONS`` for the current row)."""

    key: str
    version_id: str
    delete_marker: bool
    size: int
    etag: str
    storage_class: str
    last_modified: datetime
    lock_mode: str | None
    lock_until: datetime | None
    legal_hold: bool
    current: bool
    row_id: int


# What ListObjectVersions shows of a version, in the order its elements show them: key, version id,
# LastModified as S3's text, ETag without its quotes, size, storage class, delete marker, then ``row_id``. A plain
# tuple as the database driver returns it (a Row or a named tuple per version cost more than the rendering).
ListedVersionForS3 = tuple[str, str, str, str, int, str, bool, int]

VERSIONS = cast(Table, ObjectVersion.__table__)

# a current row's ``row_id``: above every noncurrent version's id (ids are INTEGER columns), so "below this id"
# from a current row means every noncurrent version of its key, and (key, row_id DESC) is S3's order
ALL_VERSIONS = 2**31 - 1


def _version_columns(t: Table, s3_dialect: str | None) -> list[ColumnElement[Any]]:
    current = t is OBJECTS
    marker = false() if current else t.c.delete_marker
    row_id = literal_column(str(ALL_VERSIONS), Integer) if current else t.c.id
    if s3_dialect is None:
        return [t.c.key, t.c.version_id, marker.label("delete_marker"), t.c.size, t.c.etag, t.c.storage_class,
                t.c.last_modified, t.c.lock_mode, t.c.lock_until, t.c.legal_hold,
                (true() if current else false()).label("current"), row_id.label("row_id")]
    if s3_dialect == "postgresql":
        modified: ColumnElement[Any] = func.to_char(func.timezone("UTC", t.c.last_modified), _PG_ISO)
        etag: ColumnElement[Any] = func.btrim(t.c.etag, literal_column("'\"'"))
    else:  # SQLite's stored text and ETag, sliced in Python (``scan_versions_s3``), as ListObjects'
        modified, etag = type_coerce(t.c.last_modified, String), t.c.etag
    return [t.c.key, t.c.version_id, modified.label("last_modified"), etag.label("etag"), t.c.size,
            t.c.storage_class, marker.label("delete_marker"), row_id.label("row_id")]


@lru_cache(maxsize=64)  # 5 kinds of lower bound x upper bound or not x 2 column sets, per database
def _versions_statement(lower: str, has_upper: bool, dialect: str, s3: bool) -> Any:
    """Current rows and noncurrent ones from the position, merged in S3's order (key, then the current version,
    then noncurrent ones newest first: key, row_id DESC) by the database from the ranges of two indexes,
    (bucket_id, key) and (bucket_id, key, id DESC), read no further than the page.

    ``lower``: "none", "inclusive", "exclusive", or a resumption inside the key ``lower``: "within" (its versions
    below the id ``below``, not its current) or "marker" (the same, below the version ``version_id_marker`` names:
    after every noncurrent version if it is the current one, after the key if it names none).

    SQLite merges the two ranges as they come (MERGE (UNION ALL): no temporary b-tree); each side ordered and
    limited in a subquery lost that and sorted both sides. PostgreSQL gets each side limited in a subquery,
    which it merges by key (Merge Append) and sorts within a key only (Incremental Sort): its appendrel never
    takes the current side's constant ``row_id`` as an order the index gives, so a flat union sorted both sides.
    """
    o, v = OBJECTS, VERSIONS
    below: Any = bindparam("below")
    if lower == "marker":
        vm: Any = bindparam("version_id_marker")
        below = func.coalesce(
            select(literal_column(str(ALL_VERSIONS), Integer)).where(
                o.c.bucket_id == bindparam("bucket_id"), o.c.key == bindparam("lower"), o.c.version_id == vm
            ).scalar_subquery(),
            select(v.c.id).where(v.c.bucket_id == bindparam("bucket_id"), v.c.key == bindparam("lower"),
                                 v.c.version_id == vm).order_by(v.c.id.desc()).limit(1).scalar_subquery(),
            0)
    pg = dialect == "postgresql"

    def side(t: Table) -> Select[Any]:
        q = select(*_version_columns(t, dialect if s3 else None)).where(t.c.bucket_id == bindparam("bucket_id"))
        if lower in ("within", "marker"):
            q = q.where(t.c.key > bindparam("lower")) if t is o else q.where(
                t.c.key >= bindparam("lower"), (t.c.key > bindparam("lower")) | (t.c.id < below))
        elif lower == "inclusive":
            q = q.where(t.c.key >= bindparam("lower"))
        elif lower == "exclusive":
            q = q.where(t.c.key > bindparam("lower"))
        if has_upper:
            q = q.where(t.c.key < bindparam("upper"))
        if pg:  # objects hold one row per key: ordering them by id as well made PostgreSQL sort each page's rows
            q = q.order_by(*((t.c.key,) if t is o else (t.c.key, t.c.id.desc()))).limit(bindparam("limit"))
        return q

    if pg:
        both = union_all(select(side(o).subquery()), select(side(v).subquery())).subquery()
        return select(both).order_by(both.c.key, both.c.row_id.desc()).limit(bindparam("limit"))
    merged = union_all(side(o), side(v))
    return merged.order_by(merged.selected_columns.key, merged.selected_columns.row_id.desc()).limit(
        bindparam("limit"))


def _versions_params(bucket_id: int, lower: str | None, inclusive: bool, upper: str | None, limit: int,
                     below_id: int | None, version_id_marker: str | None) -> tuple[str, dict[str, Any]]:
    if lower is None:
        kind = "none"
    elif version_id_marker is not None:
        kind = "marker"
    elif below_id is not None:
        kind = "within"
    else:
        kind = "inclusive" if inclusive else "exclusive"
    return kind, {"bucket_id": bucket_id, "lower": lower, "upper": upper, "limit": limit, "below": below_id,
                  "version_id_marker": version_id_marker}


def scan_versions(session: Session, bucket_id: int, lower: str | None, inclusive: bool, upper: str | None,
                  limit: int, below_id: int | None = None, version_id_marker: str | None = None
                  ) -> list[ListedVersion]:
    """The first ``limit`` versions (current and noncurrent, markers too) with lower <(=) key < upper in S3's
    order, in one statement; ``below_id`` resumes inside the key ``lower`` (its noncurrent versions older than
    that id), ``version_id_marker`` inside it after the version of that id."""
    kind, params = _versions_params(bucket_id, lower, inclusive, upper, limit, below_id, version_id_marker)
    statement = _versions_statement(kind, upper is not None, session.get_bind().dialect.name, False)
    return [ListedVersion._make(r) for r in session.execute(statement, params)]  # plain tuples, as ``scan_listed``'s


def scan_versions_s3(session: Session, bucket_id: int, lower: str | None, inclusive: bool, upper: str | None,
                     limit: int, below_id: int | None = None, version_id_marker: str | None = None
                     ) -> list[ListedVersionForS3]:
    """``scan_versions`` for the gateway's ListObjectVersions: the shown columns (``ListedVersionForS3``) as the
    driver's tuples, LastModified as S3's text and the bare ETag."""
    conn = session.connection()
    dialect = conn.dialect.name
    kind, params = _versions_params(bucket_id, lower, inclusive, upper, limit, below_id, version_id_marker)
    result = conn.execute(_versions_statement(kind, upper is not None, dialect, True), params)
    # the DBAPI cursor's own tuples: no column here needs a result processor (the Rows, then two datetimes a row
    # turned back into text, were most of a page's CPU)
    found: Sequence[Any] = result.cursor.fetchall()
    result.close()
    if dialect == "postgresql":
        return list(found)
    return [(key, vid, f"{modified[:10]}T{modified[11:23]}Z" if len(modified) == 26 and modified[19] == "."
             else _sqlite_iso(modified), etag.strip('"'), size, cls, marker, row_id)
            for key, vid, modified, etag, size, cls, marker, row_id in found]


def iter_tier_versions(session: Session, tier_id: int, batch: int = 5000) -> Iterator[tuple[int, int, str, str, int]]:
    """(id, bucket_id, key, locator, size) of every noncurrent version on a tier, in id order."""
    last = 0
    while True:
        rows = session.execute(select(ObjectVersion.id, ObjectVersion.bucket_id, ObjectVersion.key,
                                      ObjectVersion.locator, ObjectVersion.size)
                               .where(ObjectVersion.tier_id == tier_id, ObjectVersion.id > last)
                               .order_by(ObjectVersion.id).limit(batch)).all()
        if not rows:
            return
        for r in rows:
            yield int(r[0]), int(r[1]), str(r[2]), str(r[3]), int(r[4])
        last = int(rows[-1][0])


def set_version_lock(session: Session, table: str, row_id: int, **values: Any) -> None:
    """Set retention or legal hold of a current (``objects``) or noncurrent (``versions``) version."""
    model = Object if table == "objects" else ObjectVersion
    session.execute(update(model).where(model.id == row_id).values(**values)
                    .execution_options(synchronize_session=False))


def set_bucket_settings(session: Session, bucket_id: int, **values: Any) -> None:
    """Versioning, object lock and tag settings of a bucket."""
    session.execute(update(Bucket).where(Bucket.id == bucket_id).values(**values)
                    .execution_options(synchronize_session=False))


# the columns an adoption may give (in this order in each row of the batch); the rest keep their defaults
_ADOPTED = ("key", "size", "etag", "tier_id", "storage_class", "locator", "created_at", "last_modified",
            "content_type", "user_metadata", "headers", "tags")
_ADOPTED_SET = frozenset(_ADOPTED)
_ADOPT_INTO = ("INSERT INTO objects (bucket_id, key, size, etag, tier_id, storage_class, locator, created_at, "
               "last_modified, content_type, user_metadata, headers, tags, version_id, legal_hold) ")
# One statement per batch: the rows travel as one JSON array that the database unpacks (no per-row bind
# processing in Python), keys the bucket has already are skipped by the unique (bucket_id, key) index, and
# RETURNING tells what was added. SQLite's upsert needs the WHERE to parse a SELECT source.
_ADOPT_SQL = {
    "sqlite": _ADOPT_INTO + (
        "SELECT :bucket_id, r.value ->> 0, r.value ->> 1, r.value ->> 2, r.value ->> 3, r.value ->> 4, "
        "r.value ->> 5, r.value ->> 6, r.value ->> 7, r.value ->> 8, r.value -> 9, r.value -> 10, r.value -> 11, "
        "'null', 0 FROM json_each(:rows) AS r WHERE true ON CONFLICT (bucket_id, key) DO NOTHING RETURNING size"),
    "postgresql": _ADOPT_INTO + (
        "SELECT %(bucket_id)s, r ->> 0, CAST(r ->> 1 AS bigint), r ->> 2, CAST(r ->> 3 AS integer), r ->> 4, "
        "r ->> 5, CAST(r ->> 6 AS timestamptz), CAST(r ->> 7 AS timestamptz), r ->> 8, CAST(r -> 9 AS json), "
        "CAST(r -> 10 AS json), CAST(r -> 11 AS json), 'null', false "
        "FROM jsonb_array_elements(CAST(%(rows)s AS jsonb)) AS r "
        "ON CONFLICT (bucket_id, key) DO NOTHING RETURNING size"),
}


def _adopted_time(value: datetime, sqlite: bool) -> str:
    """A UTC time as the column stores it: SQLAlchemy's text form on SQLite, ISO 8601 for timestamptz."""
    if value.tzinfo is None:
        raise ValueError("naive datetime given to a UTC column")
    utc = value.astimezone(UTC)
    # isoformat without its "+00:00", not strftime: a third of the batch's Python time went to strftime
    return utc.isoformat(" ", "microseconds")[:26] if sqlite else utc.isoformat()


def adopt_objects(session: Session, bucket_id: int, rows: Sequence[dict[str, Any]]) -> tuple[int, int]:
    """Add objects found in place on a tier (``tiers adopt``) whose keys the bucket lacks, in one INSERT.

    ``rows`` hold the ``_ADOPTED`` columns of Object (``content_type`` and the metadata dicts optional); keys
    already in the catalog keep their rows (a re-scan adds only what is new). Returns the (objects, bytes)
    added, which the bucket's totals include, moved once for the batch.
    """
    if not rows:
        return 0, 0
    dialect = session.get_bind().dialect.name
    sqlite = dialect == "sqlite"
    payload = []
    for row in rows:
        if not row.keys() <= _ADOPTED_SET:
            unknown = ", ".join(sorted(row.keys() - _ADOPTED_SET))
            raise ValueError(f"adopt_objects takes only {', '.join(_ADOPTED)}; not {unknown}")
        created, modified = row["created_at"], row["last_modified"]
        created_text = _adopted_time(created, sqlite)
        # a listing knows one time per object: the same value, formatted once
        modified_text = created_text if modified is created else _adopted_time(modified, sqlite)
        payload.append([row["key"], int(row["size"]), row["etag"], int(row["tier_id"]), row["storage_class"],
                        row["locator"], created_text, modified_text, row.get("content_type", "binary/octet-stream"),
                        row.get("user_metadata", {}), row.get("headers", {}), row.get("tags", {})])
    added = session.connection().exec_driver_sql(
        _ADOPT_SQL[dialect], {"bucket_id": bucket_id, "rows": json.dumps(payload, ensure_ascii=False,
                                                                          separators=(",", ":"))}).all()
    nbytes = sum(int(size) for (size,) in added)
    if added:
        add_usage(session, bucket_id, len(added), nbytes)
    return len(added), nbytes


# key, size, ETag, storage class, last modified, created: the times as UTC ISO 8601 text with microseconds
# ("2026-11-27T10:00:00.000000Z"), as a listing gives them, not datetimes
AdoptedRow = tuple[str, int, str, str, str, str]
_LISTED_CHUNK = 2000  # rows per statement: 6 parameters each, within SQLite's 32,766
_LISTED_INTO = ("INSERT INTO objects (bucket_id, key, size, etag, tier_id, storage_class, locator, last_modified, "
                "created_at, content_type, user_metadata, headers, tags, version_id, legal_hold) ")
# SQLite stores a time as "YYYY-MM-DD HH:MM:SS.ffffff": the listed text with a space for its "T", no "Z"
_SQLITE_TIME = "substr({0}, 1, 10) || ' ' || substr({0}, 12, 15)"


@lru_cache(maxsize=8)
def _listed_sql_sqlite(n: int) -> str:
    """One multi-row VALUES statement for ``n`` rows: SQLite binds the row's values in C, where unpacking a JSON
    array (``adopt_objects``) re-parsed each row's text once per column and cost as much as the insert."""
    return _LISTED_INTO + (
        "SELECT ?, column1, column2, substr(column3, 1, 80), ?, column4, ? || column1, "
        f"{_SQLITE_TIME.format('column5')}, {_SQLITE_TIME.format('column6')}, 'binary/octet-stream', '{{}}', "
        f"'{{}}', '{{}}', 'null', 0 FROM (VALUES {','.join(['(?,?,?,?,?,?)'] * n)}) WHERE true "
        "ON CONFLICT (bucket_id, key) DO NOTHING RETURNING size")


_LISTED_SQL_POSTGRESQL = _LISTED_INTO + (
    "SELECT %(bucket_id)s, r ->> 0, CAST(r ->> 1 AS bigint), left(r ->> 2, 80), %(tier_id)s, r ->> 3, "
    "%(prefix)s || (r ->> 0), CAST(r ->> 4 AS timestamptz), CAST(r ->> 5 AS timestamptz), 'binary/octet-stream', "
    "'{}', '{}', '{}', 'null', false FROM jsonb_array_elements(CAST(%(rows)s AS jsonb)) AS r "
    "ON CONFLICT (bucket_id, key) DO NOTHING RETURNING size")


def adopt_listed(session: Session, bucket_id: int, tier_id: int, locator_prefix: str,
                 rows: Sequence[AdoptedRow]) -> tuple[int, int]:
    """Add the objects a remote listing found (``tiers adopt``) whose keys the bucket lacks, on ``tier_id`` at
    ``locator_prefix`` + key, in one statement per 2,000 rows.

    The lean sibling of ``adopt_objects`` for a listing's rows as they come (no dict, datetime or JSON object
    per row: a scan inserts one per listed key). Keys already in the catalog keep their rows. Returns the
    (objects, bytes) added, which the bucket's totals include, moved once for the batch.
    """
    if not rows:
        return 0, 0
    connection = session.connection()
    added: list[Any] = []
    for lo in range(0, len(rows), _LISTED_CHUNK):
        chunk = rows[lo:lo + _LISTED_CHUNK]
        if connection.dialect.name == "sqlite":
            added += connection.exec_driver_sql(_listed_sql_sqlite(len(chunk)), (
                bucket_id, tier_id, locator_prefix, *itertools.chain.from_iterable(chunk))).all()
        else:
            added += connection.exec_driver_sql(_LISTED_SQL_POSTGRESQL, {
                "bucket_id": bucket_id, "tier_id": tier_id, "prefix": locator_prefix,
                "rows": json.dumps(chunk, ensure_ascii=False, separators=(",", ":"))}).all()
    nbytes = sum(size for (size,) in added)
    if added:
        add_usage(session, bucket_id, len(added), nbytes)
    return len(added), nbytes


def tree_rows(session: Session, bucket_id: int, prefix: str) -> list[Any]:
    """(key, size, last_modified, etag, storage_class, tier_id, restore_state) of every current object under
    ``prefix``, in key order: the mount's snapshot, one range of the (bucket_id, key) index."""
    return list(session.execute(
        select(Object.key, Object.size, Object.last_modified, Object.etag, Object.storage_class, Object.tier_id,
               Object.restore_state)
        .where(Object.bucket_id == bucket_id, *starts_with(Object.key, prefix)).order_by(Object.key)).all())


def adopted_rows(session: Session, bucket_id: int, locator_prefix: str, after_key: str | None,
                 limit: int) -> list[tuple[int, str, int]]:
    """(id, key, size) of a bucket's objects still at their adopted locator (``locator_prefix`` + key), in key
    order after ``after_key``: a re-scan compares them with the remote listing. One range of the (bucket_id, key)
    index per page; the locator is compared in the database and rows come back as plain tuples (a re-scan of
    a large bucket reads every row)."""
    t = OBJECTS
    q = select(t.c.id, t.c.key, t.c.size).where(t.c.bucket_id == bucket_id, t.c.locator == literal(locator_prefix)
                                                  + t.c.key)
    if after_key is not None:
        q = q.where(t.c.key > after_key)
    return cast(list[tuple[int, str, int]], session.connection().execute(q.order_by(t.c.key).limit(limit)).all())


def forget_adopted(session: Session, bucket_id: int, rows: Sequence[tuple[int, str, int]]) -> tuple[int, int]:
    """Delete adopted objects whose keys left the remote bucket: (id, locator, size) rows, each only while it is
    still at that locator and unlocked (an overwrite through the gateway wins). Returns (objects, bytes) gone."""
    gone = [(object_id, size) for object_id, locator, size in rows if delete_object(session, object_id, locator)]
    nbytes = sum(size for _, size in gone)
    if gone:
        add_usage(session, bucket_id, -len(gone), -nbytes)
    return len(gone), nbytes


# projects ---------------------------------------------------------------------------------------------


def set_bucket_project(session: Session, bucket_id: int, project_id: int) -> None:
    """Move a bucket into a project."""
    session.execute(update(Bucket).where(Bucket.id == bucket_id).values(project_id=project_id)
                    .execution_options(synchronize_session=False))


def buckets_of_projects(session: Session, project_ids: Sequence[int]) -> list[Bucket]:
    """The projects' buckets, by name."""
    if not project_ids:
        return []
    return list(session.scalars(select(Bucket).where(Bucket.project_id.in_(list(project_ids))).order_by(Bucket.name)))


def project_usage(session: Session, project_ids: Sequence[int]) -> dict[int, tuple[int, int]]:
    """(bytes, objects) each project stores: the buckets' totals (every version) plus the restored copies of
    archived objects and versions, which occupy space of their own until they expire."""
    if not project_ids:
        return {}
    ids = list(project_ids)
    out: dict[int, tuple[int, int]] = {pid: (0, 0) for pid in ids}
    pid: Any
    for pid, nbytes, count in session.execute(
            select(Bucket.project_id, func.coalesce(func.sum(Bucket.used_bytes), 0),
                   func.coalesce(func.sum(Bucket.object_count), 0))
            .where(Bucket.project_id.in_(ids)).group_by(Bucket.project_id)):
        out[pid] = (int(nbytes), int(count))
    for model in (Object, ObjectVersion):
        for pid, nbytes, count in session.execute(
                select(Bucket.project_id, func.coalesce(func.sum(model.size), 0), func.count())
                .join(Bucket, Bucket.id == model.bucket_id)
                .where(Bucket.project_id.in_(ids), model.restore_state == "restored")
                .group_by(Bucket.project_id)):
            b, o = out[pid]
            out[pid] = (b + int(nbytes), o + int(count))
    return out


def bucket_project(session: Session, bucket_id: int) -> int | None:
    """The project of a bucket (None: none, or the bucket is gone)."""
    return session.scalar(select(Bucket.project_id).where(Bucket.id == bucket_id))
