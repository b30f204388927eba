"""Only this module queries catalog tables (buckets, objects, multipart uploads and parts)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from sqlalchemy import Select, bindparam, delete, func, select, update
from sqlalchemy.orm import Session

from tierpilot.catalog.models import Bucket, MultipartUpload, Object, UploadPart


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


# buckets ---------------------------------------------------------------------------------------------


def get_bucket_by_name(session: Session, name: str) -> Bucket | None:
    return session.scalar(select(Bucket).where(Bucket.name == name))


def get_bucket(session: Session, bucket_id: int) -> Bucket | None:
    return session.get(Bucket, bucket_id)


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
        .returning(b.c.object_count, b.c.used_bytes, b.c.space_bytes, b.c.space_start, b.c.space_end)
    )


def add_usage(session: Session, bucket_id: int, objects: int, nbytes: int) -> Any | None:
    """Move a bucket's running totals; returns the row after (counts and space reservation), None if gone."""
    return session.execute(_add_usage_statement(), {"bucket_id": bucket_id, "objects": objects,
                                                     "nbytes": nbytes}).first()


def usage(session: Session, bucket_id: int) -> tuple[int, int]:
    row = session.execute(select(Bucket.object_count, Bucket.used_bytes).where(Bucket.id == bucket_id)).first()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def bucket_has_objects(session: Session, bucket_id: int) -> bool:
    return session.scalar(select(Object.id).where(Object.bucket_id == bucket_id).limit(1)) is not None


def delete_bucket_row(session: Session, bucket_id: int) -> None:
    session.execute(delete(Bucket).where(Bucket.id == bucket_id))


# objects ---------------------------------------------------------------------------------------------


@lru_cache(maxsize=2)
def _object_statement(for_update: bool) -> Select[Any]:
    q = select(Object).where(Object.bucket_id == bindparam("bucket_id"), Object.key == bindparam("key"))
    return q.with_for_update() if for_update else q


def get_object(session: Session, bucket_id: int, key: str, for_update: bool = False) -> Object | None:
    return session.scalar(_object_statement(for_update), {"bucket_id": bucket_id, "key": key})


def get_objects(session: Session, bucket_id: int, keys: Sequence[str]) -> list[Object]:
    return list(session.scalars(select(Object).where(Object.bucket_id == bucket_id, Object.key.in_(keys))))


def delete_object_rows(session: Session, object_ids: Sequence[int]) -> None:
    session.execute(delete(Object).where(Object.id.in_(object_ids)))


@lru_cache(maxsize=8)
def _scan_statement(lower: str, has_upper: bool) -> Select[Any]:
    # built once per shape: constructing a statement costs more than running this one on SQLite
    t = Object.__table__
    q = select(t.c.key).where(t.c.bucket_id == bindparam("bucket_id"))
    if lower == "inclusive":
        q = q.where(t.c.key >= bindparam("lower"))
    elif lower == "exclusive":
        q = q.where(t.c.key > bindparam("lower"))
    if has_upper:
        q = q.where(t.c.key < bindparam("upper"))
    return q.order_by(t.c.key).limit(bindparam("limit"))


def scan_keys(session: Session, bucket_id: int, lower: str | None, lower_inclusive: bool, upper: str | None,
              limit: int) -> list[str]:
    """Keys of a bucket with lower <(=) key < upper in key order: one seek of the (bucket_id, key) index,
    reading the index only (no table rows)."""
    kind = "none" if lower is None else ("inclusive" if lower_inclusive else "exclusive")
    params: dict[str, Any] = {"bucket_id": bucket_id, "lower": lower, "upper": upper, "limit": limit}
    return list(session.execute(_scan_statement(kind, upper is not None), params).scalars())


def touch_objects(session: Session, last_access: dict[int, Any]) -> None:
    """Record last-access times in one statement per distinct time (ids of one flush share most)."""
    by_time: dict[Any, list[int]] = {}
    for object_id, when in last_access.items():
        by_time.setdefault(when, []).append(object_id)
    for when, ids in by_time.items():
        session.execute(update(Object).where(Object.id.in_(ids)).values(last_access_at=when))


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
    if prefix:
        q = q.where(MultipartUpload.key >= prefix)
        upper = prefix_end(prefix)
        if upper is not None:
            q = q.where(MultipartUpload.key < upper)
    if key_marker:
        if upload_id_marker:
            q = q.where((MultipartUpload.key > key_marker) | (
                (MultipartUpload.key == key_marker) & (MultipartUpload.upload_id > upload_id_marker)))
        else:
            q = q.where(MultipartUpload.key > key_marker)
    return list(session.scalars(q.order_by(MultipartUpload.key, MultipartUpload.upload_id).limit(limit)))


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


def buckets_with_owners(session: Session, owner_id: int | None) -> list[tuple[Bucket, str]]:
    """(bucket, owner's username) for the Browser page, by bucket name."""
    from tierpilot.auth.models import User

    q = select(Bucket, User.username).join(User, User.id == Bucket.owner_id).order_by(Bucket.name)
    if owner_id is not None:
        q = q.where(Bucket.owner_id == owner_id)
    return [(b, str(u)) for b, u in session.execute(q)]
