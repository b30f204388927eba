"""Object writes and reads that span a tier and the catalog (used by the gateway and the API).

Every write follows one order, so the catalog is never ahead of the data: the bytes go to a new,
unique locator on the tier and are durable; one transaction makes the catalog point at them (a PutObject's row
shares its transaction with the rows of concurrent PUTs: ``kit.groupcommit``); only after the commit
is the replaced blob deleted. A crash in between leaves an orphan blob (fsck removes it), never a
catalog row without bytes. These functions block (the gateway runs them in worker threads) and own
their transactions: they are the commit points of the data path.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from tierpilot.audit import service as audit
from tierpilot.catalog import repository, service, versions
from tierpilot.catalog.errors import CatalogError, CommitUnresolved, InvalidObjectState, NoSuchBucket, NoSuchKey
from tierpilot.catalog.hotread import ObjectView
from tierpilot.catalog.models import VERSION_FIELDS, Bucket, MultipartUpload, Object, ObjectVersion, UploadPart
from tierpilot.catalog.service import Blob, Recorded, RequestedPart
from tierpilot.drivers import readahead
from tierpilot.drivers.base import BlobNotFound, ChecksumAlgorithm, NotRestored, PartInfo, PutResult, TierDriver
from tierpilot.drivers.checksums import INGEST_ALGORITHM, StreamDigest
from tierpilot.drivers.posix import PosixDriver
from tierpilot.drivers.registry import TierSpec, driver_for, tiers
from tierpilot.kit.db import CommitUnknown, transaction, utcnow
from tierpilot.kit.groupcommit import GroupCommit, Outcome
from tierpilot.kit.streaming import executor, run

log = logging.getLogger(__name__)

Verify = Callable[[PutResult], None]


def driver(tier_id: int) -> TierDriver:
    return tiers.driver(tier_id)


def discard(blobs: Sequence[Blob]) -> None:
    """Delete blobs the catalog no longer references; failures leave orphans for fsck, never errors."""
    for blob in blobs:
        try:
            driver(blob.tier_id).delete(blob.locator)
        except Exception:
            log.warning("could not delete replaced blob %s on tier %s", blob.locator, blob.tier_id, exc_info=True)


def space_limited(bucket: Bucket) -> bool:
    """Whether the bucket's space reservation is open now (else writes need no space check)."""
    return service.space_open(bucket.space_bytes, bucket.space_start, bucket.space_end, utcnow())


def check_space(bucket: Bucket, incoming: int | None, upload: MultipartUpload | None = None,
                key: str | None = None, now: datetime | None = None) -> None:
    """Refuse early (before any byte is read) a write that would exceed the bucket's space reservation;
    the commit checks again, so concurrent writers cannot overrun it either. ``key``: the object the
    write replaces, whose bytes are freed."""
    now = now or utcnow()
    if incoming is None or not service.space_open(bucket.space_bytes, bucket.space_start, bucket.space_end, now):
        return
    with transaction() as session:
        if upload is not None:
            service.check_part_space(session, bucket, upload, incoming, now)
            return
        if key is not None:
            old = repository.get_object(session, bucket.id, key)
            incoming -= old.size if old is not None else 0
        service.check_space(bucket, repository.usage(session, bucket.id)[1], incoming, now)


@dataclass(frozen=True)
class NewObject:
    """What a PUT, copy or multipart completion stores besides the bytes."""

    tier: TierSpec
    storage_class: str
    content_type: str | None = None
    user_metadata: dict[str, Any] | None = None
    headers: dict[str, Any] | None = None
    tags: dict[str, Any] | None = None
    checksum_algorithm: ChecksumAlgorithm | None = None
    lock_mode: str | None = None
    lock_until: datetime | None = None
    legal_hold: bool = False
    event: str = "ObjectCreated:Put"  # the S3 event of a whole-object write (a POST form's is ObjectCreated:Post)


@dataclass(frozen=True)
class _Row:
    """One write's catalog change: the new blob becomes ``key``'s bytes."""

    bucket: Bucket
    key: str
    spec: NewObject
    locator: str
    size: int
    etag: str
    checksum_value: str | None
    checksum_algorithm: str | None
    parts_count: int | None = None
    if_match: str | None = None
    if_none_match: str | None = None
    part_sizes: list[int] | None = None
    part_checksums: list[str] | None = None
    event: str | None = None  # a copy's or a completion's, else the spec's

    def write(self) -> service.ObjectWrite:
        spec = self.spec
        return service.ObjectWrite(
            self.bucket.id, self.key, size=self.size, etag=self.etag, tier_id=spec.tier.id,
            storage_class=spec.storage_class, locator=self.locator, content_type=spec.content_type,
            user_metadata=spec.user_metadata, headers=spec.headers, checksum_algorithm=self.checksum_algorithm,
            checksum_value=self.checksum_value, parts_count=self.parts_count, tags=spec.tags, if_match=self.if_match,
            if_none_match=self.if_none_match, lock_mode=spec.lock_mode, lock_until=spec.lock_until,
            legal_hold=spec.legal_hold, part_sizes=self.part_sizes, part_checksums=self.part_checksums,
            event=self.event or spec.event,
        )


def _apply(session: Session, row: _Row) -> Recorded:
    obj, replaced = service.record_write(session, row.write())
    # detached with the values written: a later row of the same round for the same key loads a row of its own
    # instead of changing this one under the request that gets it (an unversioned write's is transient already)
    if obj in session:
        session.expunge(obj)
    return obj, replaced


def _record(row: _Row, end_upload: str | None = None) -> Object:
    """One transaction that makes the new blob the object's bytes; deletes the replaced blob after it."""
    try:
        with transaction(write=True) as session:
            if end_upload is not None:
                service.end_upload(session, end_upload)
            obj, replaced = _apply(session, row)
    except CommitUnknown as unknown:
        outcome = _resolve([row], unknown)[0]
        if isinstance(outcome, BaseException):
            raise outcome from unknown
        obj, replaced = outcome
    if replaced is not None:
        discard([replaced])
    return obj


def _record_alone(row: _Row) -> Outcome[Recorded]:
    try:
        with transaction(write=True) as session:
            return _apply(session, row)
    except CommitUnknown as unknown:
        return _resolve([row], unknown)[0]
    except Exception as exc:  # noqa: BLE001  (the outcome of this row, raised in its request's thread)
        return exc


def _as_object(row: _Row, found: Object | ObjectVersion | None) -> Object:
    """The answer for a write found committed after the fact, detached: its current row, or one made of the
    values it wrote (a version since superseded, or a row since overwritten in an unversioned bucket)."""
    if isinstance(found, Object):
        return found
    if found is not None:
        return Object(bucket_id=row.bucket.id, key=row.key, **{f: getattr(found, f) for f in VERSION_FIELDS})
    w = row.write()
    now = utcnow()
    return Object(bucket_id=w.bucket_id, key=w.key, size=w.size, etag=w.etag, tier_id=w.tier_id,
                  storage_class=w.storage_class, locator=w.locator, content_type=w.content_type,
                  user_metadata=w.user_metadata, headers=w.headers, checksum_algorithm=w.checksum_algorithm,
                  checksum_value=w.checksum_value, parts_count=w.parts_count, tags=w.tags, version_id="null",
                  created_at=now, last_modified=now, part_sizes=w.part_sizes, part_checksums=w.part_checksums)


def _resolve(rows: Sequence[_Row], unknown: CommitUnknown) -> list[Outcome[Recorded]]:
    """The outcomes of rows whose transaction's COMMIT got no answer, found by looking for each write's own
    locator (unique per write). The rows were one transaction: one found means all committed, and they are
    answered as written; the blobs they replaced stay (which ones is not known any more: fsck removes blobs
    nothing points at). None found means none committed as far as can be seen now: each request gets a
    retryable error and its blob stays too, for a commit still in flight at the server may yet point at it.
    Nothing is retried here: a retry of a row that did commit would replace a newer acknowledged write."""
    log.error("a catalog commit of %d write(s) got no answer (%s); looking for them", len(rows), unknown.cause)
    try:
        with transaction() as session:
            found = repository.written(session, [(r.bucket.id, r.key, r.locator) for r in rows])
            answers = [_as_object(r, found.get(r.locator)) for r in rows] if found else []
            for obj in answers:
                if obj in session:
                    session.expunge(obj)
    except Exception:  # noqa: BLE001  (the database is still out of reach: nobody is told it worked)
        log.error("could not look for %d write(s) after an unanswered commit", len(rows), exc_info=True)
        found, answers = {}, []
    if not found:
        return [CommitUnresolved("The write could not be confirmed. Please try again.") for _ in rows]
    unknown.confirmed()
    return [(obj, None) for obj in answers]


def _record_round(rows: Sequence[_Row]) -> list[Outcome[Recorded]]:
    """The catalog rows of concurrent PUTs in one transaction, by the round's statements
    (``service.record_objects``: per round, not per row). A row the catalog refuses (precondition, quota, bucket
    gone) is that request's error and leaves the others to commit: a refusal found before the row is written is
    its outcome at once; one found after (a space reservation the round takes past, a refusal in a versioned
    bucket) rolls the round back, and it is written again row by row, each in a savepoint of its own. Should the
    round's transaction fail as a whole (PostgreSQL: a deadlock with another process's round that writes the same
    keys), each row is tried again in a transaction of its own."""
    try:
        with transaction(write=True) as session:
            return list(service.record_objects(session, [row.write() for row in rows]))
    except CommitUnknown as unknown:
        return _resolve(rows, unknown)
    except CatalogError as exc:
        if len(rows) == 1:
            return [exc]
        # nothing of the round was committed: again, with the refused row(s) in savepoints of their own
    except Exception as exc:  # noqa: BLE001  (nothing of the round was committed)
        if len(rows) == 1:
            return [exc]
        log.warning("a round of %d catalog writes failed as a whole; writing them one by one", len(rows),
                    exc_info=True)
        return [_record_alone(row) for row in rows]
    out: list[Outcome[Recorded]] = []
    try:
        with transaction(write=True) as session:
            for row in rows:
                try:
                    with session.begin_nested():
                        out.append(_apply(session, row))
                except CatalogError as exc:
                    out.append(exc)
    except CommitUnknown as unknown:
        return _resolve(rows, unknown)
    except Exception:  # noqa: BLE001  (nothing of the round was committed)
        log.warning("a round of %d catalog writes failed as a whole; writing them one by one", len(rows),
                    exc_info=True)
        return [_record_alone(row) for row in rows]
    return out


# concurrent PUTs share catalog transactions: one BEGIN (SQLite's write lock) and one commit (WAL flush) per round
_rows: GroupCommit[_Row, Recorded] = GroupCommit(_record_round)


def _commit_row(row: _Row) -> Recorded:
    """A PutObject's catalog change, committed when this returns, in a round shared with concurrent PUTs.

    On SQLite every write transaction waits for the one write lock anyway. On PostgreSQL concurrent transactions
    run in parallel, but every write to a bucket moves its totals' row, and its lock is held to the commit: PUTs of
    one bucket in transactions of their own would commit one after another, a WAL flush each. A round takes that
    lock and flushes once for all its rows, and its statements are the round's, not each row's.
    """
    return _rows.submit(row)


def put_object(bucket: Bucket, key: str, chunks: Iterator[bytes], spec: NewObject, *,
               verify: Verify | None = None, if_match: str | None = None, if_none_match: str | None = None) -> Object:
    """Store a whole object from a stream; ``verify`` may reject the written bytes (nothing becomes visible).

    Call ``check_space`` first when the size is known, before the body is read.
    """
    locator = service.new_locator(bucket.name, key)
    drv = driver_for(spec.tier)
    result = drv.put(locator, chunks, checksum_algorithm=spec.checksum_algorithm, storage_class=spec.storage_class)
    row = _Row(bucket, key, spec, locator, size=result.size, etag=result.md5_hex, checksum_value=result.checksum_b64,
               checksum_algorithm=result.checksum_algorithm, if_match=if_match, if_none_match=if_none_match)
    return _commit_or_delete(drv, locator, row, functools.partial(verify, result) if verify is not None else None)


SMALL_PUT_MAX = 64 << 10  # a PutObject body up to this size may take ``put_small_object``


def small_put_driver(spec: NewObject) -> PosixDriver | None:
    """The tier's driver if ``put_small_object`` can store a small body there (a posix tier with syncfs rounds).

    Called on the event loop: the registry answers a driver it built for this spec without blocking."""
    drv = driver_for(spec.tier)
    return drv if isinstance(drv, PosixDriver) and drv.takes_small_writes() else None


async def put_small_object(drv: PosixDriver, bucket: Bucket, key: str, pieces: Sequence[bytes], spec: NewObject, *,
                           verify: Verify | None = None, if_match: str | None = None,
                           if_none_match: str | None = None) -> Object:
    """``put_object`` of a small body already in memory, from the event loop, in the same order: the bytes
    durable, then the row committed, then the replaced blob deleted.

    The body is checked before anything is written (``verify``: a refused body costs no write). Its blob is
    written and synced by the next syncfs round of the tier's file system and its row joins the next
    shared transaction, each round led by a thread that waits there anyway or by ``kit.groupcommit``'s leader:
    the request holds no worker thread and waits without one (two thread wake-ups per round, not per request).
    """
    locator = service.new_locator(bucket.name, key)
    digest = StreamDigest(spec.checksum_algorithm)
    for piece in pieces:
        digest.update(piece)
    result = digest.result()
    if verify is not None:
        verify(result)
    await drv.put_small(locator, pieces)
    row = _Row(bucket, key, spec, locator, size=result.size, etag=result.md5_hex, checksum_value=result.checksum_b64,
               checksum_algorithm=result.checksum_algorithm, if_match=if_match, if_none_match=if_none_match)
    committing = _rows.submit_async(row)
    try:
        obj, replaced = await asyncio.shield(committing)
    except asyncio.CancelledError:  # the row may still commit: the blob stays or goes with its outcome
        committing.add_done_callback(functools.partial(_settle_abandoned, drv, locator))
        raise
    except CommitUnresolved:  # the row may point at the blob: it stays
        raise
    except BaseException:
        await run(drv.delete, locator)
        raise
    if replaced is not None:
        await run(discard, [replaced])
    return obj


def _commit_or_delete(drv: TierDriver, locator: str, row: _Row, check: Callable[[], None] | None = None) -> Object:
    """The row of a durable blob committed (the replaced blob deleted after it), or the blob deleted: when
    ``check`` refuses the body or the catalog refuses the row."""
    try:
        if check is not None:
            check()
        obj, replaced = _commit_row(row)
    except CommitUnresolved:  # the row may point at the blob: it stays
        raise
    except BaseException:
        drv.delete(locator)
        raise
    if replaced is not None:
        discard([replaced])
    return obj


def _settle_abandoned(drv: TierDriver, locator: str, committing: asyncio.Future[Recorded]) -> None:
    """After the round of a row whose request went away: its blob goes if the row was refused, the replaced
    blob goes if it was committed (in a worker thread: both are unlinks)."""
    if committing.cancelled():
        return
    exc = committing.exception()
    if isinstance(exc, CommitUnresolved):
        return
    if exc is not None:
        executor().submit(drv.delete, locator)
        return
    replaced = committing.result()[1]
    if replaced is not None:
        executor().submit(discard, [replaced])


def open_object(obj: ObjectView, start: int = 0, end: int | None = None, reader: Hashable | None = None
                ) -> Iterator[bytes]:
    """The bytes of an object (or a range), or InvalidObjectState for an archived one not restored.

    With a ``reader`` (who asks: the gateway's caller) a remote tier is read ahead of the reader's pattern.
    """
    try:
        if reader is not None:
            return readahead.instance().open(driver(obj.tier_id), obj.locator, obj.size, start,
                                             obj.size - 1 if end is None else end, reader)
        return driver(obj.tier_id).open(obj.locator, start, end)
    except NotRestored:
        raise InvalidObjectState("The operation is not valid for the object's storage class",
                                 StorageClass=obj.storage_class) from None
    except BlobNotFound:
        log.error("catalog points at a missing blob: %s on tier %s", obj.locator, obj.tier_id)
        raise NoSuchKey("The specified key does not exist.", Key=obj.key) from None


def delete_objects(bucket: Bucket, keys: Sequence[str]) -> None:
    """Delete keys as S3's DeleteObject does (a delete marker in a versioned bucket; object lock refuses a
    protected version): one transaction, then the blobs; the first refusal is raised."""
    for result in delete_versions(bucket, [(key, None) for key in keys]):
        if isinstance(result, CatalogError):
            raise result


def delete_versions(bucket: Bucket, entries: Sequence[tuple[str, str | None]], bypass_governance: bool = False
                    ) -> list[versions.Deleted | CatalogError]:
    """DeleteObject(s) by key and optional version id, in any versioning state: one transaction, each entry
    in a savepoint (one refused by object lock leaves the others done); then the freed blobs go."""
    out: list[versions.Deleted | CatalogError] = []
    with transaction(write=True) as session:
        for key, version_id in entries:
            try:
                with session.begin_nested():
                    out.append(versions.delete_key(session, bucket.id, key, version_id,
                                                   bypass_governance=bypass_governance))
            except NoSuchBucket:
                raise
            except CatalogError as exc:
                out.append(exc)
    discard([b for d in out if isinstance(d, versions.Deleted) for b in d.blobs])
    return out


def copy_object(src: Object, bucket: Bucket, key: str, spec: NewObject, *, if_match: str | None = None,
                if_none_match: str | None = None) -> Object:
    """Copy an object's bytes (server side where the tiers allow) into a new version of ``key``."""
    check_space(bucket, src.size, key=key)
    locator = service.new_locator(bucket.name, key)
    dst = driver_for(spec.tier)
    try:
        result = dst.copy_from(driver(src.tier_id), src.locator, locator, storage_class=spec.storage_class)
    except NotRestored:
        raise InvalidObjectState("The source object of the COPY action is not in the active tier and is only "
                                 "stored in Amazon S3 Glacier.") from None
    except BlobNotFound:
        raise NoSuchKey("The specified key does not exist.", Key=src.key) from None
    try:
        return _record(_Row(bucket, key, spec, locator, size=result.size, etag=result.md5_hex or src.etag,
                            checksum_value=src.checksum_value, checksum_algorithm=src.checksum_algorithm,
                            parts_count=src.parts_count if not result.md5_hex else None,
                            if_match=if_match, if_none_match=if_none_match, event="ObjectCreated:Copy"))
    except CommitUnresolved:
        raise
    except BaseException:
        dst.delete(locator)
        raise


# multipart -------------------------------------------------------------------------------------------


def upload_part(upload: MultipartUpload, part_number: int, chunks: Iterator[bytes], *,
                verify: Verify | None = None) -> tuple[UploadPart, PutResult]:
    """Store one part straight on the upload's tier; parts of one upload are written in parallel.

    Call ``check_space(bucket, size, upload)`` first when the size is known.
    """
    drv = driver(upload.tier_id)
    # an upload whose client named no algorithm keeps its parts' ingest CRCs (never shown as the upload's): its
    # completion combines them into the object's whole-object checksum
    alg: Any = upload.checksum_algorithm or INGEST_ALGORITHM
    info, result = drv.put_part(upload.locator, part_number, chunks, checksum_algorithm=alg)
    # a rejected or superseded part stays among the upload's stored parts until complete/abort removes them
    if verify is not None:
        verify(result)
    with transaction(write=True) as session:
        service.record_part(session, upload.id, part_number, size=result.size, etag=result.md5_hex,
                            checksum_value=result.checksum_b64, locator=info.locator, extra=dict(info.extra))
        part = repository.get_part(session, upload.id, part_number)
        assert part is not None
    return part, result


def copy_part(bucket: Bucket, upload: MultipartUpload, part_number: int, src: Object, start: int, end: int
              ) -> tuple[UploadPart, PutResult]:
    """UploadPartCopy: a byte range of an existing object becomes a part."""
    check_space(bucket, end - start + 1, upload)
    stream = open_object(src, start, end)
    try:
        return upload_part(upload, part_number, stream)
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()


def complete_upload(bucket: Bucket, upload: MultipartUpload, requested: Sequence[RequestedPart],
                    checksum: Callable[[list[UploadPart]], tuple[str | None, str | None]] | None = None,
                    if_match: str | None = None, if_none_match: str | None = None) -> Object:
    """Join the named parts into the object; the upload's records go in the same transaction."""
    with transaction() as session:
        parts = service.plan_complete(session, upload, requested)
    check_space(bucket, sum(p.size for p in parts), key=upload.key)
    alg, value = checksum(parts) if checksum is not None else (None, None)  # may refuse: before any join
    tier = tiers.get(upload.tier_id)
    drv = driver_for(tier)
    locator = service.new_locator(bucket.name, upload.key)
    infos = [PartInfo(p.part_number, p.locator, p.size, dict(p.extra or {})) for p in parts]
    size = drv.complete_multipart(upload.locator, locator, infos, storage_class=upload.storage_class)
    spec = NewObject(tier=tier, storage_class=upload.storage_class, content_type=upload.content_type,
                     user_metadata=dict(upload.user_metadata or {}), headers=dict(upload.headers or {}),
                     tags=dict(upload.tags or {}), lock_mode=upload.lock_mode, lock_until=upload.lock_until,
                     legal_hold=upload.legal_hold)
    try:
        etag = service.multipart_etag([p.etag for p in parts])
        obj = _record(_Row(bucket, upload.key, spec, locator, size=size, etag=etag, checksum_value=value,
                           checksum_algorithm=alg, parts_count=len(parts), if_match=if_match,
                           if_none_match=if_none_match, part_sizes=[p.size for p in parts],
                           part_checksums=[p.checksum_value or "" for p in parts] if value else None,
                           event="ObjectCreated:CompleteMultipartUpload"),
                      end_upload=upload.upload_id)
    except CommitUnresolved:
        raise
    except BaseException:
        drv.delete(locator)
        raise
    _abort_parts(upload.tier_id, upload.locator)
    return obj


def abort_upload(bucket: Bucket, key: str, upload_id: str) -> None:
    with transaction(write=True) as session:
        upload = service.get_upload(session, bucket, key, upload_id, for_update=True)
        service.end_upload(session, upload.upload_id)
    _abort_parts(upload.tier_id, upload.locator)


def _abort_parts(tier_id: int, upload_locator: str) -> None:
    try:
        driver(tier_id).abort_multipart(upload_locator)
    except Exception:
        log.warning("could not remove parts of %s on tier %s", upload_locator, tier_id, exc_info=True)


def delete_bucket(bucket: Bucket, actor: audit.Actor | None = None) -> None:
    """Delete an empty bucket (and its open uploads), audited in the same transaction."""
    with transaction(write=True) as session:
        row = repository.get_bucket(session, bucket.id)
        if row is None:  # deleted meanwhile (the caller's row may be a cached one)
            raise NoSuchBucket("The specified bucket does not exist", BucketName=bucket.name)
        owner_id = row.owner_id
        uploads = service.delete_bucket(session, row)
        audit.record(session, "bucket.deleted", actor, f"bucket:{bucket.name}", bucket_id=bucket.id,
                     owner_id=owner_id, uploads_aborted=len(uploads))
    for tier_id, upload_locator in uploads:
        _abort_parts(tier_id, upload_locator)


# last access -----------------------------------------------------------------------------------------


class AccessLog:
    """Last-access times noted in memory and written in batches: a GET never waits for a DB write."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[int, datetime] = {}

    def note(self, object_id: int) -> None:
        now = utcnow().replace(microsecond=0)
        with self._lock:
            self._pending[object_id] = now

    def flush(self) -> int:
        with self._lock:
            pending, self._pending = self._pending, {}
        if not pending:
            return 0
        with transaction(write=True) as session:
            repository.touch_objects(session, pending)
        return len(pending)


access_log = AccessLog()
