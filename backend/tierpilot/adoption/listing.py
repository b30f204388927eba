"""The listing of a remote bucket (s3, Azure Blob, GCS) for adoption, in parallel.

Listing a large bucket page by page costs one round trip per 1,000 keys, so it is parallel: a delimiter
listing finds the top-level prefixes (and the keys beside them; a top level of more than a page has the
rest cut into key ranges), threads list the prefixes at once, and a range whose first page is not its last
has the rest of its keys cut into disjoint ranges at fixed characters, one position deeper each time, listed
at once too (``StartAfter`` as the lower bound, the first key past the upper bound ends a range). How many
requests are in flight adapts to the remote (``Gate``): a few at first, one more for every page answered up
to ``workers``, halved when it throttles. S3 pages are fetched and parsed by ``S3Lister`` (botocore's signer
and HTTP session, regular expressions over the body): boto3's own pipeline costs about as much CPU per
1,000-key page as the remote takes to answer, serialised by the GIL across the listing's threads.

Azure and GCS list with their SDKs: a delimiter listing of the top level, then one lister per top-level
prefix, ``workers`` at a time (at most 16; Azure's listing has no start-after bound to cut ranges at; prefixes
are the parallelism both services allow). Their adopted objects take the same locator,
``%a/<container>/<name>``, which their drivers read, restore and delete in place. The catalog's ETag is the
service's MD5 (hex) when it has one (Azure's Content-MD5, GCS's md5Hash), else the service's own ETag.
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

from tierpilot.catalog import repository as catalog_repository
from tierpilot.drivers import registry
from tierpilot.drivers.azure import CLASS_OF_TIER, AzureBlobDriver
from tierpilot.drivers.gcs import GCSDriver
from tierpilot.kit.errors import DomainError

# characters a range is cut at (S3 lists in code point order)
CUTS = ("", "0", "2", "4", "6", "8", "B", "F", "J", "N", "R", "V", "Z", "b", "d", "f", "h", "j", "l", "n", "p",
        "r", "t", "v", "x", "z")
REMOTE_DRIVERS = ("s3", "azure", "gcs")  # tiers whose buckets are adopted
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
    """ListObjectsV2 pages without boto3's request and parse pipeline, whose handlers parse each body twice
    before its own parse: requests signed by botocore's SigV4, sent over
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
