"""Adopt a bucket that already lives on a remote tier (s3, Azure Blob, GCS): its listing becomes catalog rows, no
byte is copied.

Listing a large bucket page by page costs one round trip per 1,000 keys, so it is parallel: a delimiter
listing finds the top-level prefixes (and the keys beside them; a top level of more than a page has the
rest cut into key ranges), threads list the prefixes at once, and a range whose first page is not its last
has the rest of its keys cut into disjoint ranges at fixed characters, one position deeper each time, listed
at once too (``StartAfter`` as the lower bound, the first key past the upper bound ends a range). How many
requests are in flight adapts to the remote (``Gate``): a few at first, one more for every page answered up
to ``workers``, halved when it throttles. S3 pages are fetched and parsed by ``S3Lister`` (botocore's signer
and HTTP session, regular expressions over the body): boto3's own pipeline cost ~25 ms of CPU per 1,000-key
page here, as much as the remote took to answer, serialised by the GIL across the listing's threads.

Every listed object is one plain tuple (``Entry``) from the parse to the database: key, size, ETag, class and
its times as text, no dict or datetime per key (a scan handles ~1,000 a page, and our CPU per page bounds how
far a parallel listing outruns a pager). Pages go through a queue to the calling thread, which hands batches
of ``BATCH`` rows to a writer thread (``_Writer``): one INSERT per batch (``catalog.repository.adopt_listed``),
committed while the listing goes on. Adopted objects keep their key in their bucket
(``drivers.s3.adopted_locator``): reads go there through the tier's driver, so read-ahead, reservations and
restores apply as to any object of the tier.

Azure and GCS list with their SDKs: a delimiter listing of the top level, then one lister per top-level
prefix, ``workers`` at a time (at most 16; Azure's listing has no start-after bound to cut ranges at; prefixes
are the parallelism both services allow). Their adopted objects take the same locator,
``%a/<container>/<name>``, which their drivers read, restore and delete in place. The catalog's ETag is the
service's MD5 (hex) when it has one (Azure's Content-MD5, GCS's md5Hash), else the service's own ETag.

Every scan is remembered (``tiers.adoptions``: tier, remote bucket, progress) and re-run by beat every
``TIERPILOT_ADOPT_RESCAN_S``: it adds the keys that appeared since and deletes from the catalog the adopted
objects whose keys left the remote bucket (those still at their adopted locator: an object overwritten through
the gateway lives on the tier's own space and stays); rows of keys the catalog has already stay as they are.
"""

from __future__ import annotations

import base64
import contextlib
import html
import logging
import os
import queue
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, unquote_plus, urlencode

from azure.storage.blob import BlobPrefix
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import ConnectionError as BotoConnectionError
from botocore.exceptions import HTTPClientError
from botocore.httpsession import URLLib3Session
from botocore.utils import get_environ_proxies
from sqlalchemy.orm import Session

from tierpilot.catalog import repository as catalog_repository
from tierpilot.catalog import service as catalog_service
from tierpilot.drivers import registry
from tierpilot.drivers.azure import CLASS_OF_TIER, AzureBlobDriver
from tierpilot.drivers.gcs import GCSDriver
from tierpilot.drivers.s3 import S3Driver, adopted_locator
from tierpilot.kit.db import after_commit, transaction
from tierpilot.kit.errors import DomainError, NotFound
from tierpilot.tiers import adoptions
from tierpilot.tiers.adoption_schemas import AdoptionOut

# characters a range is cut at (S3 lists in code point order)
CUTS = ("", "0", "2", "4", "6", "8", "B", "F", "J", "N", "R", "V", "Z", "b", "d", "f", "h", "j", "l", "n", "p",
        "r", "t", "v", "x", "z")
REMOTE_DRIVERS = ("s3", "azure", "gcs")  # tiers whose buckets are adopted
BATCH = 2000  # rows per insert transaction: short enough that SQLite's other writers barely wait
PRUNE_PAGE = 10_000  # catalog rows a re-scan compares with the listing per query
log = logging.getLogger(__name__)

# key, size, ETag, storage class, last modified, created (UTC ISO 8601 text with microseconds): one tuple per
# listed key, as catalog_repository.adopt_listed takes them
Entry = catalog_repository.AdoptedRow
Level = Iterator[tuple[list[Entry], list[str]]]  # pages of a top level: (objects, prefixes found)


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
    batches: int = 0  # insert transactions committed


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


class Throttled(Exception):
    """The remote asked us to slow down (503 SlowDown, 429) or failed in passing (5xx, a dropped connection)."""


@dataclass(frozen=True)
class Page:
    """One ListObjectsV2 answer: its objects (``Entry`` dicts), common prefixes, and where the next page starts."""

    contents: list[Entry]
    prefixes: list[str]
    truncated: bool
    token: str | None


# one <Contents> as S3 writes it (checksums and owner optional): a page where this matches every <Contents> is
# parsed in one pass, any other field by field
_CONTENTS = re.compile(
    r"<Contents><Key>([^<]*)</Key><LastModified>([^<]*)</LastModified><ETag>([^<]*)</ETag>"
    r"(?:<Checksum(?:Algorithm|Type)>[^<]*</Checksum(?:Algorithm|Type)>)*<Size>([0-9]+)</Size>"
    r"(?:<Owner>(?:[^<]|<(?!/Owner>))*</Owner>)?(?:<StorageClass>([^<]*)</StorageClass>)?</Contents>")
_ENTRY_FIELD = re.compile(r"<(Key|LastModified|ETag|Size|StorageClass)>([^<]*)</")
_PREFIX = re.compile(r"<CommonPrefixes>\s*<Prefix>([^<]*)</Prefix>")
_TRUNCATED = re.compile(r"<IsTruncated>true</IsTruncated>")
_TOKEN = re.compile(r"<NextContinuationToken>([^<]*)</NextContinuationToken>")
_ERROR = re.compile(r"<Code>([^<]*)</Code>(?:.*?<Message>([^<]*)</Message>)?", re.S)


def _text(raw: str) -> str:
    return html.unescape(raw) if "&" in raw else raw


def listed_time(value: datetime) -> str:
    """A time as ``Entry`` holds it: UTC, ISO 8601 with microseconds and "Z"."""
    return value.astimezone(UTC).isoformat("T", "microseconds")[:26] + "Z"


def _entry(key: str, modified: str, etag: str, size: str, storage_class: str, url_encoded: bool) -> Entry:
    """One object of a page from its fields' raw text."""
    if "&" in key:
        key = html.unescape(key)
    if url_encoded and ("%" in key or "+" in key):
        key = unquote_plus(key)
    # S3's "2026-11-27T10:00:00.000Z" in Entry's form by slicing; anything else through a datetime
    modified = modified[:23] + "000Z" if len(modified) == 24 and modified[19] == "." and modified[23] == "Z" \
        else listed_time(datetime.fromisoformat(modified))
    etag = etag[6:-6] if etag.startswith("&quot;") else _text(etag).strip('"')
    return key, int(size), etag, storage_class or "STANDARD", modified, modified


def parse_page(body: bytes) -> Page:
    """A ListObjectsV2 body asked with ``encoding-type=url``. Regular expressions over the text: a general XML
    parser took as long per 1,000-key page as the remote took to answer it, and the GIL serialises the parse
    across the listing's threads. One match per ``<Contents>`` when the page has S3's layout; else field by
    field (only ``Contents`` has the matched fields; a key starts a new object)."""
    text = body.decode()
    url_encoded = "<EncodingType>url</EncodingType>" in text
    found = _CONTENTS.findall(text)
    if len(found) == text.count("<Contents>"):
        # inline for what S3 sends (its time, a quoted ETag, a key without XML escapes), else _entry: a call
        # per key was half of the parse
        contents = [
            (unquote_plus(key) if url_encoded and ("%" in key or "+" in key) else key, int(size), etag[6:-6],
             cls or "STANDARD", (iso := modified[:23] + "000Z"), iso)
            if len(modified) == 24 and modified[19] == "." and modified[23] == "Z" and etag[:6] == "&quot;"
            and "&" not in key else _entry(key, modified, etag, size, cls, url_encoded)
            for key, modified, etag, size, cls in found]
    else:
        fields: list[dict[str, str]] = []
        for tag, raw in _ENTRY_FIELD.findall(text):
            if tag == "Key":
                fields.append({"Key": raw, "Size": "0", "ETag": "", "StorageClass": ""})
            else:
                fields[-1][tag] = raw
        contents = [_entry(f["Key"], f["LastModified"], f["ETag"], f["Size"], f["StorageClass"], url_encoded)
                    for f in fields]
    token = _TOKEN.search(text)
    prefixes = [_text(p) for p in _PREFIX.findall(text)]
    return Page(contents, [unquote_plus(p) for p in prefixes] if url_encoded else prefixes,
                _TRUNCATED.search(text) is not None, _text(token.group(1)) if token else None)


@dataclass(frozen=True)
class S3Source:
    """Where an S3 bucket is listed: a tier's endpoint, region, addressing and key pair."""

    endpoint_url: str | None
    region: str = "us-east-1"
    access_key_id: str | None = None
    secret_access_key: str | None = None
    addressing_style: str = "path"

    @classmethod
    def of_tier(cls, config: Mapping[str, Any]) -> S3Source:
        return cls(config.get("endpoint_url"), config.get("region") or "us-east-1", config.get("access_key_id"),
                   registry.secret_of(config), config.get("addressing_style") or "path")


class S3Lister:
    """ListObjectsV2 pages without boto3's request and parse pipeline, which cost ~25 ms of CPU per page here
    (its handlers parse each body twice before its own parse): requests signed by botocore's SigV4, sent over
    botocore's HTTP session (its CA bundle and proxies), answers parsed by ``parse_page``. Thread-safe."""

    def __init__(self, source: S3Source, pool: int = 64) -> None:
        url = (source.endpoint_url or f"https://s3.{source.region}.amazonaws.com").rstrip("/")
        self.source = source
        self._url = url
        self._credentials = Credentials(source.access_key_id, source.secret_access_key) \
            if source.access_key_id and source.secret_access_key else None
        self._http = URLLib3Session(verify=os.environ.get("AWS_CA_BUNDLE") or True,
                                    proxies=get_environ_proxies(url), timeout=(10, 120), max_pool_connections=pool)

    def _bucket_url(self, bucket: str) -> str:
        if self.source.addressing_style == "virtual":
            scheme, host = self._url.split("://", 1)
            return f"{scheme}://{bucket}.{host}/"
        return f"{self._url}/{quote(bucket)}"

    def page(self, bucket: str, *, prefix: str = "", start_after: str | None = None, token: str | None = None,
             delimiter: str | None = None, max_keys: int = 1000) -> Page:
        """One page; ``Throttled`` when the remote asks to slow down or fails in passing, ``AdoptionError``
        for any other refusal (no such bucket, access denied)."""
        query = {"list-type": "2", "encoding-type": "url", "max-keys": str(max_keys), "prefix": prefix}
        if start_after is not None:
            query["start-after"] = start_after
        if token is not None:
            query["continuation-token"] = token
        if delimiter is not None:
            query["delimiter"] = delimiter
        request = AWSRequest("GET", f"{self._bucket_url(bucket)}?{urlencode(sorted(query.items()), quote_via=quote)}")
        if self._credentials is not None:
            S3SigV4Auth(self._credentials, "s3", self.source.region).add_auth(request)
        try:
            answer = self._http.send(request.prepare())
        except (HTTPClientError, BotoConnectionError) as exc:  # dropped or refused: tried again, then failed
            raise Throttled(str(exc)) from exc
        body = answer.content
        if answer.status_code == 200:
            return parse_page(body)
        found = _ERROR.search(body.decode(errors="replace"))
        code, message = (found.group(1), found.group(2) or "") if found else (str(answer.status_code), "")
        if answer.status_code in (429, 500, 502, 503, 504) or code in ("SlowDown", "InternalError"):
            raise Throttled(f"{code} {message}".strip())
        raise AdoptionError(f"listing {bucket!r} failed: {answer.status_code} {code} {message}".strip(),
                            field="bucket")


class Gate:
    """How many list requests may be in flight: starts at ``start``, one more for every page answered (up to
    ``limit``) while the remote keeps answering, halved when it throttles (additive increase, multiplicative
    decrease, as TCP's window). Waiters block; ``peak`` is the most seen in flight."""

    def __init__(self, start: int, limit: int) -> None:
        self.limit = limit
        self.allowed = max(1, min(start, limit))
        self.in_flight = 0
        self.peak = 0
        self.throttled = 0
        self._cond = threading.Condition()

    def __enter__(self) -> Gate:
        with self._cond:
            while self.in_flight >= self.allowed:
                self._cond.wait()
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        return self

    def __exit__(self, *_: object) -> None:
        with self._cond:
            self.in_flight -= 1
            self._cond.notify()

    def answered(self) -> None:
        with self._cond:
            if self.allowed < self.limit:
                self.allowed += 1
                self._cond.notify()

    def throttle(self) -> None:
        with self._cond:
            self.throttled += 1
            self.allowed = max(1, self.allowed // 2)


RETRIES = 6  # attempts of one page after throttling or a dropped connection, with exponential back-off


def _fetch(lister: S3Lister, gate: Gate, bucket: str, **kwargs: Any) -> Page:
    """One page through the gate, retried after throttling."""
    for attempt in range(RETRIES):
        try:
            with gate:
                page = lister.page(bucket, **kwargs)
            gate.answered()
            return page
        except Throttled:
            gate.throttle()
            if attempt == RETRIES - 1:
                raise
            time.sleep(min(5.0, 0.05 * 2 ** attempt))
    raise AssertionError("unreachable")


def _list_range(lister: S3Lister, gate: Gate, bucket: str, rng: KeyRange, out: queue.Queue[Any],
                progress: Progress, lock: threading.Lock, spawn: Callable[[list[KeyRange]], None],
                page_size: int) -> None:
    """List one range; when it has more than a page, the rest of its keys go to ``spawn`` as cut ranges,
    which other threads list at once."""
    upper = rng.upper()
    token: str | None = None
    while True:
        page = _fetch(lister, gate, bucket, prefix=rng.prefix, start_after=rng.lower(), token=token,
                      max_keys=page_size)
        with lock:
            progress.requests += 1
        contents = page.contents
        done = False
        if upper is not None and contents and contents[-1][0] > upper:
            contents = [c for c in contents if c[0] <= upper]
            done = True
        if contents:
            out.put(contents)
        if done or not page.truncated:
            return
        if contents:  # more than a page: the rest is cut into ranges listed at once
            rest = split_after(rng.prefix, contents[-1][0][len(rng.prefix):], rng.upto)
            if len(rest) > 1:
                spawn(rest)
                return
        token = page.token


def discover(lister: S3Lister, gate: Gate, bucket: str, page_size: int = 1000) -> tuple[list[Entry], list[str],
                                                                                          str | None]:
    """One delimiter listing of the bucket's top level: (objects, prefixes, and when the level has more
    than a page, the key after which the rest of the bucket lies)."""
    page = _fetch(lister, gate, bucket, delimiter="/", max_keys=page_size)
    if not page.truncated:
        return page.contents, page.prefixes, None
    # past the page: everything after its last object and after every key under its last prefix
    last = max([o[0] for o in page.contents] + [p + "\U0010ffff" for p in page.prefixes])
    return page.contents, page.prefixes, last


def list_parallel(lister: S3Lister, bucket: str, *, workers: int = 64, start: int = 8,
                  progress: Progress | None = None, page_size: int = 1000,
                  gate: Gate | None = None) -> Iterator[list[Entry]]:
    """Every object of ``bucket`` as pages of entries, listed by up to ``workers`` threads: ``start`` requests
    in flight at first, more while pages keep coming (``Gate``)."""
    progress = progress if progress is not None else Progress()
    gate = gate if gate is not None else Gate(start, workers)
    lock = threading.Lock()
    top, prefixes, rest = discover(lister, gate, bucket, page_size)
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
            _list_range(lister, gate, bucket, rng, pages, progress, lock, spawn, page_size)
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
    return (str(props.name), int(props.size), bytes(md5).hex() if md5 else str(props.etag or "").strip('"'),
            CLASS_OF_TIER.get(str(props.blob_tier or "hot").lower(), "HOT"), listed_time(props.last_modified),
            listed_time(props.creation_time or props.last_modified))


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
    return (str(blob.name), int(blob.size or 0),
            base64.b64decode(blob.md5_hash).hex() if blob.md5_hash else str(blob.etag or "").strip('"'),
            blob.storage_class or "STANDARD", listed_time(blob.updated), listed_time(blob.time_created or blob.updated))


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


def listing(tier_id: int, bucket: str, *, workers: int = 64, progress: Progress | None = None,
            page_size: int = 1000) -> Iterator[list[Entry]]:
    """Every object of the remote ``bucket`` (container) on the endpoint of tier ``tier_id``, in pages."""
    progress = progress if progress is not None else Progress()
    spec = registry.tiers.get(tier_id)
    if spec.driver == "s3":  # S3Lister needs no boto3 client, whose making cost ~0.3 s of CPU in a fresh process
        lister = S3Lister(S3Source.of_tier(spec.config), pool=workers)
        return list_parallel(lister, bucket, workers=workers, progress=progress, page_size=page_size)
    driver = registry.tiers.driver(tier_id)
    if isinstance(driver, AzureBlobDriver):
        return _list_azure(driver, bucket, min(workers, 16), progress, min(page_size, 5000))
    if isinstance(driver, GCSDriver):
        return _list_gcs(driver, bucket, min(workers, 16), progress, page_size)
    raise AdoptionError("only buckets of s3, azure and gcs tiers are adopted", field="tier")


# adoption ---------------------------------------------------------------------------------------------------


def prepare(session: Session, tier_id: int, remote_bucket: str, *, into: str | None, owner_id: int,
            state: str) -> adoptions.AdoptedBucket:
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
