"""Adopt a bucket that already lives on a remote (s3) tier: its listing becomes catalog rows, no byte is copied.

Listing a large bucket page by page costs one round trip per 1,000 keys, so it is parallel: a delimiter
listing finds the top-level prefixes (and the keys beside them; a top level of more than a page has the
rest cut into key ranges), ``workers`` threads list the prefixes at once, and a range whose first page is
not its last has the rest of its keys cut into disjoint ranges at fixed characters, one position deeper
each time, listed at once too (``StartAfter`` as the lower bound, the first key past the upper bound ends
a range). Pages go through a queue to the calling thread, which inserts them in batches
(``catalog.repository.adopt_objects``, one transaction per batch). Adopted objects keep their key in their
bucket (``drivers.s3.adopted_locator``): reads go there through the tier's driver, so read-ahead,
reservations and restores apply as to any object of the tier.

Run again (``tierpilot tiers adopt``), it adds the keys that appeared since; rows of keys the catalog has
already stay as they are.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from tierpilot.catalog import repository as catalog_repository
from tierpilot.catalog import service as catalog_service
from tierpilot.drivers import registry
from tierpilot.drivers.s3 import S3Driver, adopted_locator
from tierpilot.kit.db import transaction
from tierpilot.kit.errors import DomainError

# characters a range is cut at (S3 lists in code point order)
CUTS = ("", "0", "2", "4", "6", "8", "B", "F", "J", "N", "R", "V", "Z", "b", "d", "f", "h", "j", "l", "n", "p",
        "r", "t", "v", "x", "z")
BATCH = 5000  # rows per insert transaction


class AdoptionError(DomainError):
    status_code = 422


@dataclass
class Progress:
    ranges_total: int = 0
    ranges_done: int = 0
    objects: int = 0
    added: int = 0
    bytes_added: int = 0
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


def _list_range(client: Any, bucket: str, rng: KeyRange, out: queue.Queue[Any], progress: Progress,
                lock: threading.Lock, spawn: Callable[[list[KeyRange]], None], page_size: int) -> None:
    """List one range; when it has more than a page, the rest of its keys go to ``spawn`` as cut ranges,
    which other threads list at once."""
    args: dict[str, Any] = {"Bucket": bucket, "Prefix": rng.prefix, "MaxKeys": page_size}
    if rng.lower() is not None:
        args["StartAfter"] = rng.lower()
    upper = rng.upper()
    while True:
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


def _row(item: dict[str, Any], bucket: str, tier_id: int) -> dict[str, Any]:
    modified = item["LastModified"]
    return {"key": item["Key"], "size": int(item["Size"]), "etag": str(item.get("ETag", "")).strip('"'),
            "tier_id": tier_id, "storage_class": item.get("StorageClass") or "STANDARD",
            "locator": adopted_locator(bucket, item["Key"]), "created_at": modified, "last_modified": modified,
            "user_metadata": {}, "headers": {}, "tags": {}}


def adopt(tier_name: str, remote_bucket: str, *, into: str | None = None, owner_id: int, workers: int = 16,
          on_progress: Callable[[Progress], None] | None = None, page_size: int = 1000) -> Progress:
    """List ``remote_bucket`` on the s3 tier ``tier_name`` into the local bucket ``into`` (default: the same
    name; created on the tier for ``owner_id`` when missing)."""
    spec = next((t for t in registry.tiers.all() if t.name == tier_name), None)
    if spec is None:
        raise AdoptionError(f"no tier named {tier_name!r}", field="tier")
    driver = registry.tiers.driver(spec.id)
    if not isinstance(driver, S3Driver):
        raise AdoptionError(f"tier {tier_name!r} is not an s3 tier: only remote buckets are adopted", field="tier")
    local = into or remote_bucket
    with transaction(write=True) as session:
        bucket = catalog_repository.get_bucket_by_name(session, local)
        if bucket is None:
            bucket = catalog_service.create_bucket(session, owner_id=owner_id, name=local, tier_name=tier_name)
        elif bucket.tier_id != spec.id:
            raise AdoptionError(f"bucket {local!r} is on another tier", field="into")
        bucket_id = bucket.id
    progress = Progress()
    batch: list[dict[str, Any]] = []

    def flush() -> None:
        with transaction(write=True) as session:
            added, nbytes = catalog_repository.adopt_objects(session, bucket_id, batch)
        progress.added += added
        progress.bytes_added += nbytes
        batch.clear()

    for page in list_parallel(driver.client, remote_bucket, workers=workers, progress=progress,
                              page_size=page_size):
        batch += [_row(item, remote_bucket, spec.id) for item in page]
        progress.objects += len(page)
        if len(batch) >= BATCH:
            flush()
        if on_progress is not None:
            on_progress(progress)
    if batch:
        flush()
    if on_progress is not None:
        on_progress(progress)
    return progress
