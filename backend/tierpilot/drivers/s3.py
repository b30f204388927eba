"""The s3 driver: blobs as objects of one bucket on any S3-compatible endpoint (AWS, MinIO, Ceph RGW,
another tierpilot gateway), through one pooled, thread-safe boto3 client per tier.

Keys are ``<prefix><locator>`` with each segment made safe for strict servers: control characters and
``%`` percent-encoded, ``""``/``.``/``..`` segments written as ``%``/``%2E``/``%2E%2E``. A key that would
exceed S3's 1024 bytes becomes ``<prefix>%h/<sha256>`` with the locator in the object's metadata. Parts
of multipart uploads are objects under ``<prefix>%p/<sha256 of the upload>/``; completing joins them
server-side (UploadPartCopy), so the gateway never reads them back. Large PUTs stream as native
multipart uploads with bounded memory (``max_concurrency`` parts of ``part_size`` in flight).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import re
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from tierpilot.drivers.base import (
    BlobInfo,
    BlobNotFound,
    ChecksumAlgorithm,
    NotArchived,
    NotRestored,
    PartInfo,
    PutResult,
    RestoreInProgress,
    RestoreSpeed,
    RestoreStatus,
    TierDriver,
    TierError,
)
from tierpilot.drivers.checksums import StreamDigest

CHUNK = 1 << 20
MIN_PART = 5 << 20  # S3's smallest part but the last
MAX_COPY = 5 << 30  # largest CopyObject / UploadPartCopy source
COPY_PART = 512 << 20  # part size of a server-side multipart copy
ARCHIVE_CLASSES = frozenset({"GLACIER", "DEEP_ARCHIVE"})
_LOCATOR_META = "tierpilot-locator"
_HASHED = "%h/"
_PARTS = "%p/"
_UNSAFE = re.compile(r"[\x00-\x1f\x7f%]")
_ESCAPE = re.compile(r"%([0-9A-F]{2})")
_PART_NAME = re.compile(r"^\d{5}\.[0-9a-f]{32}$")
ADOPTED = "%a/"  # locators of adopted objects: "%a/<bucket>/<key>"
_RESTORE = re.compile(r'ongoing-request="(true|false)"(?:,\s*expiry-date="([^"]+)")?')
_T = TypeVar("_T")


def encode_key(locator: str) -> str:
    """The object key (without the tier prefix) of a locator; injective."""
    out = []
    for segment in locator.split("/"):
        if segment == "":
            out.append("%")
        elif segment in (".", ".."):
            out.append(segment.replace(".", "%2E"))
        else:
            out.append(_UNSAFE.sub(lambda m: f"%{ord(m.group()):02X}", segment))
    return "/".join(out)


def decode_key(key: str) -> str:
    return "/".join("" if s == "%" else _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), s) for s in key.split("/"))


def adopted_locator(bucket: str, key: str) -> str:
    """The locator of an object adopted in place (``tiers adopt``): its own bucket and key, never rewritten.

    Catalog locators begin with a bucket name, which has no ``%``: the two kinds cannot meet.
    """
    return f"{ADOPTED}{bucket}/{key}"


def parse_restore_header(value: str | None) -> tuple[bool, datetime | None] | None:
    """``x-amz-restore`` as (ongoing, expiry); None when absent or unreadable."""
    if not value:
        return None
    match = _RESTORE.search(value)
    if match is None:
        return None
    expiry = parsedate_to_datetime(match.group(2)) if match.group(2) else None
    return match.group(1) == "true", expiry


class BodyReader:
    """Iterator over an S3 response body in ``CHUNK`` reads; ``close()`` returns the connection."""

    def __init__(self, body: Any) -> None:
        self._body = body
        self._chunks = body.iter_chunks(CHUNK) if body is not None else iter(())

    def __iter__(self) -> BodyReader:
        return self

    def __next__(self) -> bytes:
        try:
            return bytes(next(self._chunks))
        except StopIteration:
            self.close()
            raise
        except (BotoCoreError, OSError) as exc:
            self.close()
            raise TierError(f"read failed: {exc}") from exc

    def close(self) -> None:
        if self._body is not None:
            body, self._body = self._body, None
            body.close()


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def _status(exc: ClientError) -> int:
    return int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))


@contextlib.contextmanager
def _mapped_errors(locator: str) -> Iterator[None]:
    """S3 errors as tier errors: callers handle one family whatever the driver."""
    try:
        yield
    except ClientError as exc:
        code = _code(exc)
        if code in ("NoSuchKey", "404", "NotFound") or (_status(exc) == 404 and code != "NoSuchBucket"):
            raise BlobNotFound(locator) from exc
        if code in ("InvalidObjectState", "ObjectNotInActiveTierError"):  # the latter: CopyObject's
            raise NotRestored(locator) from exc
        if code == "RestoreAlreadyInProgress":
            raise RestoreInProgress(locator) from exc
        raise TierError(f"{code or _status(exc)}: {exc}") from exc
    except BotoCoreError as exc:
        raise TierError(str(exc)) from exc


class S3Driver(TierDriver):
    """A bucket (and key prefix) on an S3-compatible endpoint as a tier."""

    remote = True  # far: the gateway reads it ahead (drivers/readahead.py)

    def __init__(
        self,
        name: str,
        *,
        endpoint_url: str | None,
        bucket: str,
        prefix: str = "",
        region: str = "us-east-1",
        access_key_id: str | None = None,
        secret_access_key: str | None = None,
        storage_class: str | None = "STANDARD",
        addressing_style: str = "path",
        max_pool_connections: int = 32,
        part_size: int = 16 << 20,
        max_concurrency: int = 4,
        offline: bool = False,
    ) -> None:
        if not MIN_PART <= part_size <= MAX_COPY:
            raise ValueError("part_size must be between 5 MiB and 5 GiB")
        self.name = name
        self.endpoint_url = endpoint_url.rstrip("/") if endpoint_url else None
        self.bucket = bucket
        self.prefix = prefix
        self.region = region
        self.access_key_id = access_key_id
        self.storage_class = storage_class
        self.part_size = part_size
        self.max_concurrency = max_concurrency
        self.offline = offline or storage_class in ARCHIVE_CLASSES
        session = boto3.session.Session(aws_access_key_id=access_key_id, aws_secret_access_key=secret_access_key,
                                        region_name=region)
        self.client = session.client(
            "s3", endpoint_url=self.endpoint_url,
            config=Config(
                max_pool_connections=max_pool_connections,
                retries={"max_attempts": 5, "mode": "standard"},
                s3={"addressing_style": addressing_style},
                connect_timeout=10, read_timeout=120, tcp_keepalive=True,
            ),
        )
        # part uploads and copies of all this tier's transfers share the connection pool's size
        self._pool = ThreadPoolExecutor(max_workers=max_pool_connections, thread_name_prefix=f"s3-{name}")

    @classmethod
    def from_config(cls, name: str, config: Mapping[str, Any], offline: bool = False) -> S3Driver:
        """A driver from a tier's config dict (keys as in tiers.schemas.S3Config, plain secret)."""
        known = ("region", "prefix", "access_key_id", "secret_access_key", "storage_class", "addressing_style",
                 "max_pool_connections", "part_size", "max_concurrency")
        kwargs = {k: config[k] for k in known if config.get(k) is not None}
        return cls(name, endpoint_url=config.get("endpoint_url"), bucket=config["bucket"], offline=offline,
                   **kwargs)

    # keys ----------------------------------------------------------------------------------------------

    def key_of(self, locator: str) -> tuple[str, dict[str, str]]:
        """(object key, metadata to store) of a locator."""
        if not locator:
            raise ValueError("empty locator")
        try:
            raw = locator.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError("locator is not valid UTF-8") from exc
        key = self.prefix + encode_key(locator)
        if len(key.encode("utf-8")) <= 1024:
            return key, {}
        digest = hashlib.sha256(raw).hexdigest()
        return f"{self.prefix}{_HASHED}{digest}", {_LOCATOR_META: base64.urlsafe_b64encode(raw).decode()}

    def where(self, locator: str) -> tuple[str, str]:
        """(bucket, key) of a locator: an adopted object (``adopted_locator``) stays where it was found."""
        if locator.startswith(ADOPTED):
            bucket, _, key = locator[len(ADOPTED):].partition("/")
            if not bucket or not key:
                raise ValueError("adopted locator without bucket or key")
            return bucket, key
        return self.bucket, self.key_of(locator)[0]

    def _upload_prefix(self, upload_locator: str) -> str:
        if not upload_locator:
            raise ValueError("empty upload locator")
        return f"{self.prefix}{_PARTS}{hashlib.sha256(upload_locator.encode('utf-8')).hexdigest()}/"

    def _class_args(self, storage_class: str | None) -> dict[str, str]:
        chosen = storage_class or self.storage_class
        return {"StorageClass": chosen} if chosen else {}

    # writes --------------------------------------------------------------------------------------------

    def _bounded_map(self, calls: Iterator[Callable[[], _T]]) -> list[_T]:
        """Run calls on the pool with at most ``max_concurrency`` in flight; results in order.

        ``calls`` is consumed in the caller's thread (it reads the request body); a failed call stops
        the consumption early.
        """
        futures: list[Future[_T]] = []
        slots = threading.BoundedSemaphore(self.max_concurrency)
        failed = threading.Event()

        def finished(future: Future[_T]) -> None:
            if not future.cancelled() and future.exception() is not None:
                failed.set()
            slots.release()

        try:
            for call in calls:
                slots.acquire()
                if failed.is_set():
                    slots.release()
                    break
                future = self._pool.submit(call)
                future.add_done_callback(finished)
                futures.append(future)
            return [f.result() for f in futures]
        finally:
            for f in futures:
                f.cancel()

    def _upload(self, key: str, chunks: Iterator[bytes], digest: StreamDigest | None,
                extra: dict[str, Any]) -> None:
        """Stream into ``key``: one PutObject when small, else a multipart upload of ``part_size`` parts."""
        stream = iter(chunks)
        buffer = bytearray()

        def fill() -> bool:
            """Read until a part is full; False when the stream ended."""
            for chunk in stream:
                if digest is not None:
                    digest.update(chunk)
                buffer.extend(chunk)
                if len(buffer) >= self.part_size:
                    return True
            return False

        more = fill()
        if not more:
            self.client.put_object(Bucket=self.bucket, Key=key, Body=bytes(buffer), **extra)
            return

        def parts(upload_id: str) -> Iterator[Callable[[], dict[str, Any]]]:
            nonlocal more
            number = 0
            while buffer:
                number += 1
                with memoryview(buffer) as view:  # one copy of the part, not two
                    body = bytes(view[: self.part_size])
                del buffer[: self.part_size]
                yield self._part_call(key, upload_id, number, body)
                if more and len(buffer) < self.part_size:
                    more = fill()

        self._multipart(key, extra, parts)

    def _multipart(self, key: str, extra: dict[str, Any],
                   calls: Callable[[str], Iterator[Callable[[], dict[str, Any]]]]) -> None:
        """One native multipart upload of ``key`` whose part requests ``calls(upload_id)`` makes; aborted
        on any failure, so no half upload lingers (bar a crash: see ``abort_stale_uploads``)."""
        upload_id = self.client.create_multipart_upload(Bucket=self.bucket, Key=key, **extra)["UploadId"]
        try:
            done = self._bounded_map(calls(upload_id))
            self.client.complete_multipart_upload(Bucket=self.bucket, Key=key, UploadId=upload_id,
                                                  MultipartUpload={"Parts": done})
        except BaseException:
            with contextlib.suppress(Exception):
                self.client.abort_multipart_upload(Bucket=self.bucket, Key=key, UploadId=upload_id)
            raise

    def _part_call(self, key: str, upload_id: str, number: int, body: bytes) -> Callable[[], dict[str, Any]]:
        def call() -> dict[str, Any]:
            reply = self.client.upload_part(Bucket=self.bucket, Key=key, UploadId=upload_id, PartNumber=number,
                                            Body=body)
            return {"PartNumber": number, "ETag": reply["ETag"]}

        return call

    def put(
        self,
        locator: str,
        chunks: Iterator[bytes],
        checksum_algorithm: ChecksumAlgorithm | None = None,
        storage_class: str | None = None,
    ) -> PutResult:
        """Stream ``chunks`` into a new blob; visible only once complete and durable."""
        key, metadata = self.key_of(locator)
        digest = StreamDigest(checksum_algorithm)
        with _mapped_errors(locator):
            self._upload(key, chunks, digest, {"Metadata": metadata, **self._class_args(storage_class)})
        return digest.result()

    # reads ---------------------------------------------------------------------------------------------

    def open(self, locator: str, start: int = 0, end: int | None = None) -> Iterator[bytes]:
        """Stream bytes [start, end] (inclusive end, as HTTP ranges) of a blob."""
        if start < 0:
            raise ValueError("negative range start")
        if end is not None and end < start:
            return BodyReader(None)
        bucket, key = self.where(locator)
        args: dict[str, Any] = {"Bucket": bucket, "Key": key}
        if start or end is not None:
            args["Range"] = f"bytes={start}-{'' if end is None else end}"
        try:
            with _mapped_errors(locator):
                reply = self.client.get_object(**args)
        except TierError as exc:
            cause = exc.__cause__
            if isinstance(cause, ClientError) and _code(cause) == "InvalidRange":
                return BodyReader(None)  # start past the end: nothing, as the posix driver
            raise
        return BodyReader(reply["Body"])

    def head(self, locator: str) -> BlobInfo:
        bucket, key = self.where(locator)
        with _mapped_errors(locator):
            reply = self.client.head_object(Bucket=bucket, Key=key)
        return BlobInfo(locator=locator, size=int(reply["ContentLength"]), modified=reply["LastModified"],
                        storage_class=reply.get("StorageClass") or "STANDARD")

    def delete(self, locator: str) -> None:
        """Remove a blob; deleting a missing blob is not an error (idempotent)."""
        bucket, key = self.where(locator)
        with _mapped_errors(locator), contextlib.suppress(BlobNotFound):
            self.client.delete_object(Bucket=bucket, Key=key)

    def list(self, prefix: str = "") -> Iterator[BlobInfo]:
        """Every blob whose locator starts with ``prefix`` (fsck and tests)."""
        complete = prefix[: prefix.rfind("/") + 1]  # whole segments encode the same in every match
        scans = [self.prefix + encode_key(complete[:-1]) + "/" if complete else self.prefix]
        if complete:  # hashed keys may hold locators of any prefix
            scans.append(self.prefix + _HASHED)
        for scan in scans:
            for obj in self._scan(scan):
                rel = obj["Key"][len(self.prefix):]
                if rel.startswith(_PARTS):
                    continue
                locator = self._stored_locator(obj["Key"]) if rel.startswith(_HASHED) else decode_key(rel)
                if locator is not None and locator.startswith(prefix):
                    yield BlobInfo(locator=locator, size=int(obj["Size"]), modified=obj["LastModified"],
                                   storage_class=obj.get("StorageClass") or "STANDARD")

    def _scan(self, key_prefix: str) -> Iterator[dict[str, Any]]:
        paginator = self.client.get_paginator("list_objects_v2")
        with _mapped_errors(key_prefix):
            for page in paginator.paginate(Bucket=self.bucket, Prefix=key_prefix):
                yield from page.get("Contents", [])

    def _stored_locator(self, key: str) -> str | None:
        try:
            with _mapped_errors(key):
                meta = self.client.head_object(Bucket=self.bucket, Key=key).get("Metadata", {})
        except BlobNotFound:
            return None
        raw = meta.get(_LOCATOR_META)
        return base64.urlsafe_b64decode(raw).decode("utf-8") if raw else None

    # copies --------------------------------------------------------------------------------------------

    def same_endpoint(self, other: TierDriver) -> bool:
        """Whether a server-side copy from ``other`` can work (same endpoint and credentials)."""
        return (isinstance(other, S3Driver) and other.endpoint_url == self.endpoint_url
                and other.access_key_id == self.access_key_id)

    def copy_from(self, source: TierDriver, src_locator: str, dst_locator: str,
                  storage_class: str | None = None) -> PutResult:
        """Copy a blob from any tier; on the same endpoint the server copies (S3 CopyObject)."""
        if not (isinstance(source, S3Driver) and self.same_endpoint(source)):
            return super().copy_from(source, src_locator, dst_locator, storage_class)
        src_bucket, src_key = source.where(src_locator)
        key, metadata = self.key_of(dst_locator)
        extra = {"Metadata": metadata, **self._class_args(storage_class)}
        with _mapped_errors(src_locator):
            size = int(self.client.head_object(Bucket=src_bucket, Key=src_key)["ContentLength"])
            copy_source = {"Bucket": src_bucket, "Key": src_key}
            if size <= MAX_COPY:
                reply = self.client.copy_object(Bucket=self.bucket, Key=key, CopySource=copy_source,
                                                MetadataDirective="REPLACE", **extra)
                etag = str(reply.get("CopyObjectResult", {}).get("ETag", "")).strip('"')
                return PutResult(size=size, md5_hex=etag if re.fullmatch(r"[0-9a-f]{32}", etag) else "")
            ranges = [(copy_source, lo, min(lo + COPY_PART, size) - 1) for lo in range(0, size, COPY_PART)]
            self._join_server_side(key, ranges, extra)
        return PutResult(size=size, md5_hex="")

    def _join_server_side(self, key: str, ranges: Sequence[tuple[dict[str, str], int, int | None]],
                          extra: dict[str, Any]) -> None:
        """One multipart upload whose parts are server-side copies of (source, first byte, last byte)."""

        def copies(upload_id: str) -> Iterator[Callable[[], dict[str, Any]]]:
            for number, (source, lo, hi) in enumerate(ranges, start=1):
                yield self._copy_call(key, upload_id, number, source, lo, hi)

        self._multipart(key, extra, copies)

    def _copy_call(self, key: str, upload_id: str, number: int, source: dict[str, str], lo: int,
                   hi: int | None) -> Callable[[], dict[str, Any]]:
        def call() -> dict[str, Any]:
            args: dict[str, Any] = {"CopySourceRange": f"bytes={lo}-{hi}"} if hi is not None else {}
            reply = self.client.upload_part_copy(Bucket=self.bucket, Key=key, UploadId=upload_id,
                                                 PartNumber=number, CopySource=source, **args)
            return {"PartNumber": number, "ETag": reply["CopyPartResult"]["ETag"]}

        return call

    # multipart -----------------------------------------------------------------------------------------

    def put_part(self, upload_locator: str, part_number: int, chunks: Iterator[bytes],
                 checksum_algorithm: ChecksumAlgorithm | None = None) -> tuple[PartInfo, PutResult]:
        """Store one part (1..10000) of the upload ``upload_locator``; see TierDriver.put_part."""
        if not 1 <= part_number <= 10000:
            raise ValueError("part number must be 1..10000")
        name = f"{part_number:05d}.{uuid.uuid4().hex}"
        digest = StreamDigest(checksum_algorithm)
        with _mapped_errors(upload_locator):
            # parts stay in STANDARD whatever the target class: they are read back by the join
            self._upload(self._upload_prefix(upload_locator) + name, chunks, digest, {"StorageClass": "STANDARD"})
        result = digest.result()
        return PartInfo(part_number=part_number, locator=name, size=result.size), result

    def complete_multipart(self, upload_locator: str, locator: str, parts: Sequence[PartInfo],
                           storage_class: str | None = None) -> int:
        """Join ``parts`` in order into the new blob ``locator``; see TierDriver.complete_multipart."""
        base = self._upload_prefix(upload_locator)
        for part in parts:
            if not _PART_NAME.match(part.locator):
                raise TierError(f"not a part of this tier: {part.locator!r}")
        stored = {obj["Key"][len(base):]: int(obj["Size"]) for obj in self._scan(base)}
        for part in parts:
            if part.locator not in stored:
                raise BlobNotFound(f"part {part.part_number} of {upload_locator}")
            if stored[part.locator] != part.size:
                raise TierError(f"part {part.part_number} has {stored[part.locator]} bytes, recorded {part.size}")
        total = sum(p.size for p in parts)
        key, metadata = self.key_of(locator)
        extra = {"Metadata": metadata, **self._class_args(storage_class)}
        small = any(p.size < MIN_PART for p in parts[:-1]) or total <= self.part_size
        with _mapped_errors(locator):
            if small:  # S3 refuses small non-last parts in a copy join: stream them (they are small)
                self._upload(key, self._concat(base, parts), None, extra)
            else:
                self._join_server_side(key, [({"Bucket": self.bucket, "Key": base + p.locator}, 0, None)
                                             for p in parts], extra)
        return total

    def _concat(self, base: str, parts: Sequence[PartInfo]) -> Iterator[bytes]:
        for part in parts:
            if part.size == 0:
                continue
            reader = BodyReader(self.client.get_object(Bucket=self.bucket, Key=base + part.locator)["Body"])
            try:
                yield from reader
            finally:
                reader.close()

    def abort_multipart(self, upload_locator: str) -> None:
        """Remove every stored part of the upload (after complete or abort); idempotent."""
        base = self._upload_prefix(upload_locator)
        keys = [obj["Key"] for obj in self._scan(base)]
        with _mapped_errors(upload_locator):
            for i in range(0, len(keys), 1000):
                self.client.delete_objects(Bucket=self.bucket, Delete={
                    "Objects": [{"Key": k} for k in keys[i:i + 1000]], "Quiet": True})

    # archive -------------------------------------------------------------------------------------------

    def restore(self, locator: str, days: int, speed: RestoreSpeed) -> RestoreStatus:
        """Start, upgrade or extend a restore (S3 RestoreObject); see TierDriver.restore."""
        if speed not in ("expedited", "standard", "bulk"):
            raise ValueError("restore speed must be expedited, standard or bulk")
        if days < 1:
            raise ValueError("restore days must be at least 1")
        bucket, key = self.where(locator)
        request = {"Days": days, "GlacierJobParameters": {"Tier": speed.capitalize()}}
        try:
            with _mapped_errors(locator):
                reply = self.client.restore_object(Bucket=bucket, Key=key, RestoreRequest=request)
        except NotRestored as exc:  # InvalidObjectState on RestoreObject: not in an archive class
            raise NotArchived(locator) from exc
        if reply.get("ResponseMetadata", {}).get("HTTPStatusCode") == 200:  # already restored: expiry moved
            current = self.restore_status(locator)
            return RestoreStatus(ongoing=False, restored=True, expiry=current.expiry, accepted=False)
        return RestoreStatus(ongoing=True, restored=False, speed=speed, accepted=True)

    def restore_status(self, locator: str) -> RestoreStatus:
        """Current restore state from HeadObject's x-amz-restore (BlobNotFound for a missing blob)."""
        bucket, key = self.where(locator)
        with _mapped_errors(locator):
            reply = self.client.head_object(Bucket=bucket, Key=key)
        parsed = parse_restore_header(reply.get("Restore"))
        if parsed is None:
            archived = (reply.get("StorageClass") or "STANDARD") in ARCHIVE_CLASSES
            return RestoreStatus(ongoing=False, restored=not archived)
        ongoing, expiry = parsed
        return RestoreStatus(ongoing=ongoing, restored=not ongoing, expiry=expiry)

    # housekeeping --------------------------------------------------------------------------------------

    def abort_stale_uploads(self, older_than: datetime) -> int:
        """Abort native multipart uploads under the prefix started before ``older_than`` (crashed PUTs)."""
        aborted = 0
        paginator = self.client.get_paginator("list_multipart_uploads")
        with _mapped_errors(self.prefix):
            for page in paginator.paginate(Bucket=self.bucket, Prefix=self.prefix):
                for upload in page.get("Uploads", []):
                    if upload["Initiated"] < older_than:
                        self.client.abort_multipart_upload(Bucket=self.bucket, Key=upload["Key"],
                                                           UploadId=upload["UploadId"])
                        aborted += 1
        return aborted
