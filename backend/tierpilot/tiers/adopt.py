"""Adopt a bucket that already lives on a remote tier (s3, Azure Blob, GCS): its listing becomes catalog rows, no
byte is copied.

Listing a large bucket page by page costs one round trip per 1,000 keys, so it is parallel: a delimiter
listing finds the top-level prefixes (and the keys beside them; a top level of more than a page has the
rest cut into key ranges), ``workers`` threads list the prefixes at once, and a range whose first page is
not its last has the rest of its keys cut into disjoint ranges at fixed characters, one position deeper
each time, listed at once too (``StartAfter`` as the lower bound, the first key past the upper bound ends
a range). Pages go through a queue to the calling thread, which inserts them in batches
(``catalog.repository.adopt_objects``, one transaction per batch). Adopted objects keep their key in their
bucket (``drivers.s3.adopted_locator``): reads go there through the tier's driver, so read-ahead,
reservations and restores apply as to any object of the tier.

Pages are parsed by ``_fast_contents`` (ElementTree, hooked into boto3 before its own parser, for the listing's
threads only): boto3's generic parser took ~120 ms per 1,000-key page here, as long as the remote took to answer
it, and the GIL serialises it across the listing threads.

Azure and GCS list with their SDKs: a delimiter listing of the top level, then one lister per top-level
prefix, ``workers`` at a time (Azure's listing has no start-after bound to cut ranges at; prefixes are the
parallelism both services allow). Their adopted objects take the same locator, ``%a/<container>/<name>``,
which their drivers read, restore and delete in place. The catalog's ETag is the service's MD5 (hex) when it
has one (Azure's Content-MD5, GCS's md5Hash), else the service's own ETag.

Every scan is remembered (``tiers.adoptions``: tier, remote bucket, progress) and re-run by beat every
``TIERPILOT_ADOPT_RESCAN_S``: it adds the keys that appeared since and deletes from the catalog the adopted
objects whose keys left the remote bucket (those still at their adopted locator: an object overwritten through
the gateway lives on the tier's own space and stays); rows of keys the catalog has already stay as they are.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import queue
import re
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from azure.storage.blob import BlobPrefix
from sqlalchemy.orm import Session

from tierpilot.catalog import repository as catalog_repository
from tierpilot.catalog import service as catalog_service
from tierpilot.drivers import registry
from tierpilot.drivers.azure import CLASS_OF_TIER, AzureBlobDriver
from tierpilot.drivers.base import TierDriver
from tierpilot.drivers.gcs import GCSDriver
from tierpilot.drivers.s3 import S3Driver, adopted_locator
from tierpilot.kit.db import after_commit, transaction
from tierpilot.kit.errors import DomainError, NotFound
from tierpilot.tiers import adoptions
from tierpilot.tiers.adoption_schemas import AdoptionOut

# characters a range is cut at (S3 lists in code point order)
CUTS = ("", "0", "2", "4", "6", "8", "B", "F", "J", "N", "R", "V", "Z", "b", "d", "f", "h", "j", "l", "n", "p",
        "r", "t", "v", "x", "z")
BATCH = 5000  # rows per insert transaction
log = logging.getLogger(__name__)
_S3_NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"
_CONTENTS = re.compile(rb"<Contents>.*?</Contents>", re.S)  # keys are escaped: no "</Contents>" inside one
_fast = threading.local()  # ``on`` in the listing's threads: only their ListObjectsV2 pages take the fast parse


class AdoptionError(DomainError):
    status_code = 422


@dataclass
class Progress:
    ranges_total: int = 0
    ranges_done: int = 0
    objects: int = 0
    added: int = 0
    bytes_added: int = 0
    removed: int = 0
    requests: int = 0


@dataclass(frozen=True)
class KeyRange:
    """Keys that start with ``prefix``, greater than ``prefix + after`` (if set), at most ``prefix + upto``."""

    prefix: str
    after: str | None = None
    upto: str | None = None

    def lower(self) -> str | None:
        return None if self.after is None else self.prefix + self.after

    def upper(self) -> str | None:
        return None if self.upto is None else self.prefix + self.upto


def split_after(prefix: str, last: str, upto: str | None) -> list[KeyRange]:
    """Disjoint ranges covering the keys under ``prefix`` in (``prefix + last``, ``prefix + upto``], cut at the
    ``CUTS`` characters of the first position where cuts fall inside the interval (one deeper each time a
    range is split again, so keys that share a long stem are cut where they differ)."""
    i = len(os.path.commonprefix([last, upto])) if upto is not None else 0
    while i <= len(last):
        base = last[:i]
        cuts = sorted(c for c in {base + ch for ch in CUTS[1:]} if c > last and (upto is None or c < upto))
        if cuts:
            bounds: list[str | None] = [last, *cuts, upto]
            return [KeyRange(prefix, lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]
        i += 1
    return [KeyRange(prefix, last, upto)]


def _fast_contents(response_dict: dict[str, Any], customized_response_dict: dict[str, Any], **_: Any) -> None:
    """boto3's ``before-parse`` hook for ListObjectsV2: a page's ``Contents`` (Key, Size, ETag, StorageClass,
    LastModified) parsed here and cut from the body boto3 parses (the rest: truncation, token, prefixes)."""
    if not getattr(_fast, "on", False) or response_dict["status_code"] != 200:
        return
    body = response_dict["body"]
    contents = []
    for item in ET.fromstring(body).iter(f"{_S3_NS}Contents"):
        fields = {child.tag[len(_S3_NS):]: child.text or "" for child in item}
        contents.append({"Key": fields["Key"], "Size": int(fields["Size"]), "ETag": fields.get("ETag", ""),
                         "StorageClass": fields.get("StorageClass") or "STANDARD",
                         "LastModified": datetime.fromisoformat(fields["LastModified"])})
    if contents:  # keys stay as sent (url-encoded): boto3's own after-call handler decodes Contents' keys
        customized_response_dict["Contents"] = contents
        response_dict["body"] = _CONTENTS.sub(b"", body)


@contextlib.contextmanager
def fast_pages(client: Any) -> Iterator[None]:
    """This thread's listing pages of ``client`` parsed by ``_fast_contents``."""
    client.meta.events.register("before-parse.s3.ListObjectsV2", _fast_contents, unique_id="tierpilot-adopt")
    _fast.on = True
    try:
        yield
    finally:
        _fast.on = False


def _list_range(client: Any, bucket: str, rng: KeyRange, out: queue.Queue[Any], progress: Progress,
                lock: threading.Lock, spawn: Callable[[list[KeyRange]], None], page_size: int) -> None:
    """List one range; when it has more than a page, the rest of its keys go to ``spawn`` as cut ranges,
    which other threads list at once."""
    args: dict[str, Any] = {"Bucket": bucket, "Prefix": rng.prefix, "MaxKeys": page_size}
    if rng.lower() is not None:
        args["StartAfter"] = rng.lower()
    upper = rng.upper()
    while True:
        with fast_pages(client):
            page = client.list_objects_v2(**args)
        with lock:
            progress.requests += 1
        contents = page.get("Contents", [])
        done = False
        if upper is not None and contents and contents[-1]["Key"] > upper:
            contents = [c for c in contents if c["Key"] <= upper]
            done = True
        if contents:
            out.put(contents)
        if done or not page.get("IsTruncated"):
            return
        if contents:  # more than a page: the rest is cut into ranges listed at once
            rest = split_after(rng.prefix, contents[-1]["Key"][len(rng.prefix):], rng.upto)
            if len(rest) > 1:
                spawn(rest)
                return
        args["ContinuationToken"] = page["NextContinuationToken"]


def discover(client: Any, bucket: str, page_size: int = 1000) -> tuple[list[dict[str, Any]], list[str], str | None]:
    """One delimiter listing of the bucket's top level: (objects, prefixes, and when the level has more
    than a page, the key after which the rest of the bucket lies)."""
    with fast_pages(client):
        page = client.list_objects_v2(Bucket=bucket, Delimiter="/", MaxKeys=page_size)
    objects = page.get("Contents", [])
    prefixes = [p["Prefix"] for p in page.get("CommonPrefixes", [])]
    if not page.get("IsTruncated"):
        return objects, prefixes, None
    # past the page: everything after its last object and after every key under its last prefix
    last = max([o["Key"] for o in objects] + [p + "\U0010ffff" for p in prefixes])
    return objects, prefixes, last


def list_parallel(client: Any, bucket: str, *, workers: int = 16, progress: Progress | None = None,
                  page_size: int = 1000) -> Iterator[list[dict[str, Any]]]:
    """Every object of ``bucket`` as pages of ListObjectsV2 ``Contents``, listed ``workers`` ranges at a time."""
    progress = progress if progress is not None else Progress()
    lock = threading.Lock()
    top, prefixes, rest = discover(client, bucket, page_size)
    progress.requests += 1
    if top:
        yield top
    ranges = [KeyRange(p) for p in prefixes]
    if rest is not None:  # a wide top level (a flat bucket): its rest in cut ranges, no delimiter
        ranges += split_after("", rest, None)
    if not ranges:
        return
    pages: queue.Queue[Any] = queue.Queue(maxsize=4 * workers)
    end = object()
    futures: list[Future[None]] = []
    pool = ThreadPoolExecutor(workers, thread_name_prefix="adopt")

    def spawn(more: list[KeyRange]) -> None:
        with lock:
            progress.ranges_total += len(more)
            futures.extend(pool.submit(run, r) for r in more)

    def run(rng: KeyRange) -> None:
        try:
            _list_range(client, bucket, rng, pages, progress, lock, spawn, page_size)
        except BaseException as exc:  # handed to the consumer, which stops the listing
            pages.put(exc)
        finally:
            with lock:
                progress.ranges_done += 1
                if progress.ranges_done == progress.ranges_total:
                    pages.put(end)

    spawn(ranges)
    stop = False
    try:
        while (item := pages.get()) is not end:
            if isinstance(item, BaseException):
                raise item
            yield item
    except BaseException:
        stop = True
        raise
    finally:
        if stop:
            with lock:
                for f in futures:
                    f.cancel()
            while any(not f.done() for f in list(futures)):  # let running listers finish their page
                with contextlib.suppress(queue.Empty):
                    pages.get(timeout=0.1)
        pool.shutdown(wait=True)



# Azure and GCS ----------------------------------------------------------------------------------------------

Entry = dict[str, Any]  # key, size, etag, storage_class, modified, created
Level = Iterator[tuple[list[Entry], list[str]]]  # pages of a top level: (objects, prefixes found)


def _fan_out(top: Level, list_prefix: Callable[[str], Iterator[list[Entry]]], workers: int,
             progress: Progress) -> Iterator[list[Entry]]:
    """The top level's pages, then every prefix's, ``workers`` prefixes listed at once (started as found)."""
    lock = threading.Lock()
    pages: queue.Queue[Any] = queue.Queue(maxsize=4 * workers)
    done = object()
    futures: list[Future[None]] = []
    pool = ThreadPoolExecutor(workers, thread_name_prefix="adopt")
    stopping = threading.Event()

    def run(prefix: str) -> None:
        try:
            for page in list_prefix(prefix):
                with lock:
                    progress.requests += 1
                if stopping.is_set():
                    return
                pages.put(page)
        except BaseException as exc:  # handed to the consumer, which stops the listing
            pages.put(exc)
        finally:
            with lock:
                progress.ranges_done += 1
            pages.put(done)

    started = 0
    try:
        for objects, prefixes in top:
            with lock:
                progress.requests += 1
                progress.ranges_total += len(prefixes)
            futures.extend(pool.submit(run, p) for p in prefixes)
            started += len(prefixes)
            if objects:
                yield objects
        finished = 0
        while finished < started:
            item = pages.get()
            if item is done:
                finished += 1
            elif isinstance(item, BaseException):
                raise item
            else:
                yield item
    finally:
        stopping.set()
        for f in futures:
            f.cancel()
        while any(not f.done() for f in futures):  # let running listers finish their page
            with contextlib.suppress(queue.Empty):
                pages.get(timeout=0.1)
        pool.shutdown(wait=True)


def _azure_entry(props: Any) -> Entry:
    md5 = props.content_settings.content_md5 if props.content_settings is not None else None
    return {"key": str(props.name), "size": int(props.size),
            "etag": bytes(md5).hex() if md5 else str(props.etag or "").strip('"'),
            "storage_class": CLASS_OF_TIER.get(str(props.blob_tier or "hot").lower(), "HOT"),
            "modified": props.last_modified, "created": props.creation_time or props.last_modified}


def _list_azure(driver: AzureBlobDriver, container: str, workers: int, progress: Progress,
                page_size: int) -> Iterator[list[Entry]]:
    client = driver.service.get_container_client(container)

    def top() -> Level:
        for page in client.walk_blobs(delimiter="/", results_per_page=page_size).by_page():
            items = list(page)
            yield ([_azure_entry(i) for i in items if not isinstance(i, BlobPrefix)],
                   [str(i.name) for i in items if isinstance(i, BlobPrefix)])

    def under(prefix: str) -> Iterator[list[Entry]]:
        for page in client.list_blobs(name_starts_with=prefix, results_per_page=page_size).by_page():
            yield [_azure_entry(p) for p in page]

    return _fan_out(top(), under, workers, progress)


def _gcs_entry(blob: Any) -> Entry:
    return {"key": str(blob.name), "size": int(blob.size or 0),
            "etag": base64.b64decode(blob.md5_hash).hex() if blob.md5_hash else str(blob.etag or "").strip('"'),
            "storage_class": blob.storage_class or "STANDARD", "modified": blob.updated,
            "created": blob.time_created or blob.updated}


def _list_gcs(driver: GCSDriver, bucket: str, workers: int, progress: Progress,
              page_size: int) -> Iterator[list[Entry]]:
    def top() -> Level:
        listing = driver.client.list_blobs(bucket, delimiter="/", page_size=page_size)
        for page in listing.pages:
            yield [_gcs_entry(b) for b in page], []
        yield [], sorted(listing.prefixes)

    def under(prefix: str) -> Iterator[list[Entry]]:
        for page in driver.client.list_blobs(bucket, prefix=prefix, page_size=page_size).pages:
            yield [_gcs_entry(b) for b in page]

    return _fan_out(top(), under, workers, progress)


def _list_s3(driver: S3Driver, bucket: str, workers: int, progress: Progress,
             page_size: int) -> Iterator[list[Entry]]:
    for page in list_parallel(driver.client, bucket, workers=workers, progress=progress, page_size=page_size):
        yield [{"key": i["Key"], "size": int(i["Size"]), "etag": str(i.get("ETag", "")).strip('"'),
                "storage_class": i.get("StorageClass") or "STANDARD", "modified": i["LastModified"],
                "created": i["LastModified"]} for i in page]


def listing(driver: TierDriver, bucket: str, *, workers: int = 16, progress: Progress | None = None,
            page_size: int = 1000) -> Iterator[list[Entry]]:
    """Every object of the remote ``bucket`` (container) on ``driver``'s endpoint, in pages."""
    progress = progress if progress is not None else Progress()
    if isinstance(driver, S3Driver):
        return _list_s3(driver, bucket, workers, progress, page_size)
    if isinstance(driver, AzureBlobDriver):
        return _list_azure(driver, bucket, workers, progress, min(page_size, 5000))
    if isinstance(driver, GCSDriver):
        return _list_gcs(driver, bucket, workers, progress, page_size)
    raise AdoptionError("only buckets of s3, azure and gcs tiers are adopted", field="tier")


# adoption ---------------------------------------------------------------------------------------------------


def _row(entry: Entry, bucket: str, tier_id: int) -> dict[str, Any]:
    return {"key": entry["key"], "size": entry["size"], "etag": entry["etag"][:80], "tier_id": tier_id,
            "storage_class": entry["storage_class"], "locator": adopted_locator(bucket, entry["key"]),
            "created_at": entry["created"], "last_modified": entry["modified"], "user_metadata": {}, "headers": {},
            "tags": {}}


def prepare(session: Session, tier_id: int, remote_bucket: str, *, into: str | None, owner_id: int,
            state: str) -> adoptions.AdoptedBucket:
    """Check the tier can adopt, find or create the local bucket ``into`` (default: the remote bucket's name) for
    ``owner_id`` and remember the adoption in ``state``."""
    try:
        spec = registry.tiers.get(tier_id)
    except LookupError:
        raise AdoptionError(f"no tier {tier_id}", field="tier") from None
    driver = registry.tiers.driver(spec.id)
    if not isinstance(driver, S3Driver | AzureBlobDriver | GCSDriver):
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


def scan(adoption_id: int, *, workers: int = 16, page_size: int = 1000, prune: bool = True,
         on_progress: Callable[[Progress], None] | None = None, report_every: float = 1.0) -> Progress:
    """List the remote bucket of a running adoption into its local bucket; with ``prune``, delete from the
    catalog the adopted objects whose keys the listing no longer has. Progress goes to the adoption's row."""
    with transaction() as session:
        row = adoptions.get(session, adoption_id)
        if row is None:
            raise AdoptionError(f"no adoption {adoption_id}", field="id")
        bucket_id, tier_id, remote = row.bucket_id, row.tier_id, row.remote_bucket
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

    try:
        driver = registry.tiers.driver(tier_id)
        seen: set[str] = set()
        batch: list[dict[str, Any]] = []

        def flush() -> None:
            with transaction(write=True) as session:
                added, nbytes = catalog_repository.adopt_objects(session, bucket_id, batch)
            progress.added += added
            progress.bytes_added += nbytes
            batch.clear()

        for page in listing(driver, remote, workers=workers, progress=progress, page_size=page_size):
            batch += [_row(entry, remote, tier_id) for entry in page]
            if prune:
                seen.update(entry["key"] for entry in page)
            progress.objects += len(page)
            if len(batch) >= BATCH:
                flush()
            tell()
        if batch:
            flush()
        if prune:
            _prune(bucket_id, remote, seen, progress)
    except BaseException as exc:
        tell(force=True, state="failed", error=str(exc)[:2000] or type(exc).__name__)
        raise
    tell(force=True, state="done")
    return progress


def _prune(bucket_id: int, remote: str, seen: set[str], progress: Progress) -> None:
    """Delete the catalog rows of adopted keys the listing did not see (the remote deleted them)."""
    after: str | None = None
    prefix = adopted_locator(remote, "")
    while True:
        with transaction() as session:
            rows = catalog_repository.adopted_rows(session, bucket_id, prefix, after, BATCH)
        if not rows:
            return
        after = rows[-1][1]
        gone = [(i, loc, size) for i, key, loc, size in rows if key not in seen and loc == adopted_locator(remote, key)]
        if gone:
            with transaction(write=True) as session:
                removed, _ = catalog_repository.forget_adopted(session, bucket_id, gone)
            progress.removed += removed


def run_queued(adoption_id: int, *, workers: int = 16, page_size: int = 1000) -> Progress | None:
    """Claim a queued adoption and scan it (the worker's ``tiers.adopt``); None when it was not queued."""
    with transaction(write=True) as session:
        if not adoptions.claim(session, adoption_id):
            return None
    return scan(adoption_id, workers=workers, page_size=page_size)


def adopt(tier_name: str, remote_bucket: str, *, into: str | None = None, owner_id: int, workers: int = 16,
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


def describe(session: Session, row: adoptions.AdoptedBucket) -> AdoptionOut:
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
    try:
        from tierpilot.kit.jobs import celery_app

        celery_app.send_task("tiers.adopt", args=[adoption_id], retry=False)
    except Exception as exc:  # noqa: BLE001 - the row stays queued, tiers.rescan_adopted picks it up
        log.warning("could not enqueue tiers.adopt %s (%s: %s)", adoption_id, type(exc).__name__, str(exc)[:200])


def start(session: Session, tier_id: int, remote_bucket: str, *, into: str | None, owner_id: int) -> AdoptionOut:
    """Queue the adoption of ``remote_bucket`` (checked to exist) into ``into``; a worker scans it after commit."""
    check_remote(tier_id, remote_bucket)
    row = prepare(session, tier_id, remote_bucket, into=into, owner_id=owner_id, state="queued")
    adoption_id = row.id
    after_commit(session, lambda: _send(adoption_id))
    return describe(session, row)
