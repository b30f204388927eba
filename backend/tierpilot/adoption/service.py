"""Adopt a bucket that already lives on a remote tier (s3, Azure Blob, GCS): its listing becomes catalog rows, no
byte is copied.

Every listed object is one plain tuple (``Entry``) from the parse to the database: key, size, ETag, class and
its times as text, no dict or datetime per key (a scan handles ~1,000 a page, and our CPU per page bounds how
far a parallel listing outruns a pager). Pages go through a queue to the calling thread, which hands batches
of ``BATCH`` rows to a writer thread (``_Writer``): one INSERT per batch (``catalog.repository.adopt_listed``),
committed while the listing goes on. Adopted objects keep their key in their bucket
(``drivers.s3.adopted_locator``): reads go there through the tier's driver, so read-ahead, reservations and
restores apply as to any object of the tier.

Every scan is remembered (``adoption.repository``: tier, remote bucket, progress) and re-run by beat every
``TIERPILOT_ADOPT_RESCAN_S``: it adds the keys that appeared since and deletes from the catalog the adopted
objects whose keys left the remote bucket (those still at their adopted locator: an object overwritten through
the gateway lives on the tier's own space and stays); rows of keys the catalog has already stay as they are.

"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable

from sqlalchemy.orm import Session

from tierpilot.adoption import repository as adoptions
from tierpilot.adoption.listing import REMOTE_DRIVERS, AdoptionError, Entry, Progress, listing
from tierpilot.adoption.models import AdoptedBucket
from tierpilot.adoption.schemas import AdoptionOut
from tierpilot.catalog import repository as catalog_repository
from tierpilot.catalog import service as catalog_service
from tierpilot.drivers import registry
from tierpilot.drivers.azure import AzureBlobDriver
from tierpilot.drivers.gcs import GCSDriver
from tierpilot.drivers.s3 import S3Driver, adopted_locator
from tierpilot.kit.db import after_commit, transaction
from tierpilot.kit.errors import DomainError, NotFound

BATCH = 2000  # rows per insert transaction: short enough that SQLite's other writers barely wait
PRUNE_PAGE = 10_000  # catalog rows a re-scan compares with the listing per query
log = logging.getLogger(__name__)

def prepare(session: Session, tier_id: int, remote_bucket: str, *, into: str | None, owner_id: int,
            state: str) -> AdoptedBucket:
    """Check the tier can adopt, find or create the local bucket ``into`` (default: the remote bucket's name) for
    ``owner_id`` and remember the adoption in ``state``."""
    try:
        spec = registry.tiers.get(tier_id)
    except LookupError:
        raise AdoptionError(f"no tier {tier_id}", field="tier") from None
    if spec.driver not in REMOTE_DRIVERS:
        raise AdoptionError(f"tier {spec.name!r} is not a remote (s3, azure, gcs) tier: only remote buckets are "
                            "adopted", field="tier")
    local = into or remote_bucket
    try:
        catalog_service.validate_bucket_name(local)
    except DomainError as exc:
        raise AdoptionError(f"{local!r} cannot name a local bucket: {exc.message}", field="into") from None
    bucket = catalog_repository.get_bucket_by_name(session, local)
    if bucket is None:
        bucket = catalog_service.create_bucket(session, owner_id=owner_id, name=local, tier_name=spec.name)
    elif bucket.tier_id != spec.id:
        raise AdoptionError(f"bucket {local!r} is on another tier", field="into")
    row = adoptions.get_by_bucket(session, bucket.id)
    if row is not None and row.state in adoptions.ACTIVE and state == "queued":
        raise AdoptionError(f"bucket {local!r} is being scanned already", field="into")
    if row is not None and row.remote_bucket != remote_bucket:
        raise AdoptionError(f"bucket {local!r} mirrors {row.remote_bucket!r} already", field="into")
    return adoptions.register(session, bucket.id, spec.id, remote_bucket, state)


def scan(adoption_id: int, *, workers: int = 64, page_size: int = 1000, prune: bool = True,
         on_progress: Callable[[Progress], None] | None = None, report_every: float = 1.0) -> Progress:
    """List the remote bucket of a running adoption into its local bucket; with ``prune``, delete from the
    catalog the adopted objects whose keys the listing no longer has. Progress goes to the adoption's row."""
    with transaction() as session:
        row = adoptions.get(session, adoption_id)
        if row is None:
            raise AdoptionError(f"no adoption {adoption_id}", field="id")
        bucket_id, tier_id, remote = row.bucket_id, row.tier_id, row.remote_bucket
        # only keys adopted before this scan can have left the remote (one scan of a bucket runs at a time)
        prune = prune and bool(catalog_repository.adopted_rows(session, bucket_id, adopted_locator(remote, ""),
                                                               None, 1))
    progress = Progress()
    last_report = 0.0

    def tell(force: bool = False, state: str | None = None, error: str | None = None) -> None:
        nonlocal last_report
        if on_progress is not None:
            on_progress(progress)
        now = time.monotonic()
        if force or now - last_report >= report_every:
            last_report = now
            with transaction(write=True) as session:
                adoptions.report(session, adoption_id, listed=progress.objects, added=progress.added,
                                 removed=progress.removed, requests=progress.requests, state=state, error=error)

    writer = _Writer(bucket_id, remote, tier_id, progress)
    try:
        seen: set[str] = set()
        batch: list[Entry] = []
        for page in listing(tier_id, remote, workers=workers, progress=progress, page_size=page_size):
            batch += page
            if prune:
                seen.update(entry[0] for entry in page)
            progress.objects += len(page)
            if len(batch) >= BATCH:
                writer.put(batch)
                batch = []
            tell()
        if batch:
            writer.put(batch)
        writer.close()
        if prune:
            _prune(bucket_id, remote, seen, progress)
    except BaseException as exc:
        writer.close(wait_only=True)
        tell(force=True, state="failed", error=str(exc)[:2000] or type(exc).__name__)
        raise
    tell(force=True, state="done")
    return progress


class _Writer:
    """Inserts batches of listed objects on a thread of its own, one transaction each, so the listing goes on
    while the database works (SQLite runs a statement without the GIL); at most ``depth`` batches wait."""

    def __init__(self, bucket_id: int, remote: str, tier_id: int, progress: Progress, depth: int = 4) -> None:
        self._bucket_id, self._remote, self._tier_id, self._progress = bucket_id, remote, tier_id, progress
        self._queue: queue.Queue[list[Entry] | None] = queue.Queue(maxsize=depth)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="adopt-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (batch := self._queue.get()) is not None:
            if self._error is not None:
                continue  # drained so that put() never blocks on a dead writer
            try:
                with transaction(write=True) as session:
                    added, nbytes = catalog_repository.adopt_listed(session, self._bucket_id, self._tier_id,
                                                                    adopted_locator(self._remote, ""), batch)
                self._progress.added += added  # only this thread writes these three
                self._progress.bytes_added += nbytes
                self._progress.batches += 1
            except BaseException as exc:  # noqa: BLE001 - handed to the listing's thread by put() and close()
                self._error = exc

    def put(self, batch: list[Entry]) -> None:
        if self._error is not None:
            raise self._error
        self._queue.put(batch)

    def close(self, wait_only: bool = False) -> None:
        """Wait for the batches handed over; raise what failed (unless ``wait_only``)."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
        if self._error is not None and not wait_only:
            raise self._error


def _prune(bucket_id: int, remote: str, seen: set[str], progress: Progress) -> None:
    """Delete the catalog rows of adopted keys the listing did not see (the remote deleted them)."""
    after: str | None = None
    prefix = adopted_locator(remote, "")
    while True:
        with transaction() as session:
            rows = catalog_repository.adopted_rows(session, bucket_id, prefix, after, PRUNE_PAGE)
        if not rows:
            return
        after = rows[-1][1]
        gone = [(i, prefix + key, size) for i, key, size in rows if key not in seen]
        if gone:
            with transaction(write=True) as session:
                removed, _ = catalog_repository.forget_adopted(session, bucket_id, gone)
            progress.removed += removed


def run_queued(adoption_id: int, *, workers: int = 64, page_size: int = 1000) -> Progress | None:
    """Claim a queued adoption and scan it (the worker's ``tiers.adopt``); None when it was not queued."""
    with transaction(write=True) as session:
        if not adoptions.claim(session, adoption_id):
            return None
    return scan(adoption_id, workers=workers, page_size=page_size)


def adopt(tier_name: str, remote_bucket: str, *, into: str | None = None, owner_id: int, workers: int = 64,
          on_progress: Callable[[Progress], None] | None = None, page_size: int = 1000,
          prune: bool = True) -> Progress:
    """List ``remote_bucket`` on the remote tier ``tier_name`` into the local bucket ``into`` (default: the same
    name; created on the tier for ``owner_id`` when missing), in this process."""
    spec = registry.tiers.by_name(tier_name)
    if spec is None:
        raise AdoptionError(f"no tier named {tier_name!r}", field="tier")
    with transaction(write=True) as session:
        adoption_id = prepare(session, spec.id, remote_bucket, into=into, owner_id=owner_id, state="running").id
    return scan(adoption_id, workers=workers, page_size=page_size, prune=prune, on_progress=on_progress)


# API ----------------------------------------------------------------------------------------------------------


def check_remote(tier_id: int, remote_bucket: str) -> None:
    """The remote bucket exists on the tier's endpoint (one request), else a 422 naming ``bucket``."""
    try:
        driver = registry.tiers.driver(tier_id)
    except LookupError:
        raise AdoptionError(f"no tier {tier_id}", field="tier") from None
    try:
        if isinstance(driver, S3Driver):
            driver.client.head_bucket(Bucket=remote_bucket)
            found = True
        elif isinstance(driver, AzureBlobDriver):
            found = bool(driver.service.get_container_client(remote_bucket).exists())
        elif isinstance(driver, GCSDriver):
            found = bool(driver.client.bucket(remote_bucket).exists())
        else:
            raise AdoptionError("only buckets of s3, azure and gcs tiers are adopted", field="tier")
    except AdoptionError:
        raise
    except Exception:  # noqa: BLE001 - any answer but "there" (missing, no access, unreachable) is the same to the user
        found = False
    if not found:
        raise AdoptionError(f"bucket {remote_bucket!r} is not found or not readable on the tier's endpoint",
                            field="bucket")


def describe(session: Session, row: AdoptedBucket) -> AdoptionOut:
    names = catalog_repository.bucket_names(session, [row.bucket_id])
    return AdoptionOut(id=row.id, tier_id=row.tier_id, remote_bucket=row.remote_bucket,
                       bucket=names.get(row.bucket_id, ""), state=row.state, listed=row.listed, added=row.added,
                       removed=row.removed, requests=row.requests, error=row.error, created_at=row.created_at,
                       started_at=row.started_at, updated_at=row.updated_at, scanned_at=row.scanned_at)


def find(session: Session, tier_id: int, adoption_id: int) -> AdoptionOut:
    row = adoptions.get(session, adoption_id)
    if row is None or row.tier_id != tier_id:
        raise NotFound(f"no adoption {adoption_id} on tier {tier_id}")
    return describe(session, row)


def of_tier(session: Session, tier_id: int) -> list[AdoptionOut]:
    return [describe(session, row) for row in adoptions.of_tier(session, tier_id)]


def _send(adoption_id: int) -> None:
    """Hand a queued adoption to a worker; when the broker is down, beat's re-scan sends it later."""
    from tierpilot.kit.jobs import kick

    kick("tiers.adopt", [adoption_id])  # when not queued, the row stays queued: tiers.rescan_adopted sends it


def start(session: Session, tier_id: int, remote_bucket: str, *, into: str | None, owner_id: int) -> AdoptionOut:
    """Queue the adoption of ``remote_bucket`` (checked to exist) into ``into``; a worker scans it after commit."""
    check_remote(tier_id, remote_bucket)
    row = prepare(session, tier_id, remote_bucket, into=into, owner_id=owner_id, state="queued")
    adoption_id = row.id
    after_commit(session, lambda: _send(adoption_id))
    return describe(session, row)
