"""The gcs driver: blobs as objects of one Google Cloud Storage bucket (and name prefix).

Storage classes are GCS's own (STANDARD, NEARLINE, COLDLINE, ARCHIVE): all online, so no restore is ever
needed (their minimum storage durations and retrieval fees are the planner's business). Writes larger than
one ``chunk_size`` go as a resumable upload finalized only by the last chunk, so an object is visible only
once complete; a body that fails leaves an abandoned session and no object. Multipart parts are objects under
``<prefix>%p/``; completing composes them server-side (up to 32 sources per compose, chained beyond, then
one rewrite into place). Copies inside one endpoint and account are server-side rewrites.

Production authenticates with a service-account key (JSON); ``endpoint_url`` without a key (an emulator
such as fake-gcs-server) sends anonymous requests.
"""

from __future__ import annotations

import base64
import contextlib
import json
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import quote

import requests
from google.api_core import exceptions as gexc
from google.auth.credentials import AnonymousCredentials, Credentials
from google.auth.exceptions import GoogleAuthError
from google.auth.transport.requests import AuthorizedSession
from google.cloud import storage
from google.oauth2 import service_account
from requests.adapters import HTTPAdapter

from tierpilot.drivers.base import (
    BlobInfo,
    BlobNotFound,
    ChecksumAlgorithm,
    PartInfo,
    PutResult,
    TierDriver,
    TierError,
)
from tierpilot.drivers.checksums import StreamDigest
from tierpilot.drivers.cloud import (
    HASHED,
    ChunkReader,
    blocks,
    empty,
    locator_of,
    object_name,
    scan_prefixes,
    upload_prefix,
)
from tierpilot.drivers.s3 import ADOPTED

CHUNK = 1 << 20
GRANULE = 256 << 10  # resumable upload chunks are multiples of 256 KiB
MAX_COMPOSE = 32
STORAGE_CLASSES = ("STANDARD", "NEARLINE", "COLDLINE", "ARCHIVE")
# S3 names a client may send map to their nearest GCS class
_S3_NAMES = {"STANDARD_IA": "NEARLINE", "ONEZONE_IA": "NEARLINE", "GLACIER_IR": "COLDLINE",
             "GLACIER": "ARCHIVE", "DEEP_ARCHIVE": "ARCHIVE"}
_LOCATOR_META = "tierpilot-locator"
_PUBLIC_ENDPOINT = "https://storage.googleapis.com"


@contextlib.contextmanager
def _mapped_errors(locator: str) -> Iterator[None]:
    """GCS errors as tier errors: callers handle one family whatever the driver."""
    try:
        yield
    except gexc.NotFound as exc:
        raise BlobNotFound(locator) from exc
    except (gexc.GoogleAPIError, GoogleAuthError, requests.RequestException) as exc:
        raise TierError(str(exc)) from exc


def _raise_for(reply: requests.Response, locator: str) -> None:
    if reply.status_code == 404:
        raise BlobNotFound(locator)
    if reply.status_code >= 400:
        raise TierError(f"{reply.status_code}: {reply.text[:300]}")


class GCSDriver(TierDriver):
    """A bucket (and name prefix) of Google Cloud Storage, or of a server speaking its JSON API, as a tier."""

    remote = True  # far: the gateway reads it ahead (drivers/readahead.py)

    def __init__(
        self,
        name: str,
        *,
        bucket: str,
        prefix: str = "",
        project: str | None = None,
        endpoint_url: str | None = None,
        service_account_key: str | Mapping[str, Any] | None = None,
        storage_class: str = "STANDARD",
        chunk_size: int = 16 << 20,
        max_pool_connections: int = 32,
    ) -> None:
        if chunk_size % GRANULE or not GRANULE <= chunk_size <= 256 << 20:
            raise ValueError("chunk_size must be a multiple of 256 KiB up to 256 MiB")
        self.name = name
        self.bucket_name = bucket
        self.prefix = prefix
        self.storage_class = storage_class
        self.chunk_size = chunk_size
        self.endpoint_url = (endpoint_url or _PUBLIC_ENDPOINT).rstrip("/")
        credentials: Credentials
        if service_account_key:
            info = json.loads(service_account_key) if isinstance(service_account_key, str) else \
                dict(service_account_key)
            credentials = service_account.Credentials.from_service_account_info(
                info, scopes=["https://www.googleapis.com/auth/devstorage.read_write"])
            project = project or info.get("project_id")
            self.identity = str(info.get("client_email", ""))
        elif endpoint_url:
            credentials = AnonymousCredentials()  # type: ignore[no-untyped-call]
            self.identity = ""
        else:
            raise ValueError("service_account_key is required without an endpoint_url")
        self.session = AuthorizedSession(credentials)
        adapter = HTTPAdapter(pool_connections=4, pool_maxsize=max_pool_connections)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        options = {"api_endpoint": self.endpoint_url} if endpoint_url else None
        self.client = storage.Client(project=project or "tierpilot", credentials=credentials, _http=self.session,
                                     client_options=options)
        self.bucket = self.client.bucket(bucket)

    @classmethod
    def from_config(cls, name: str, config: Mapping[str, Any]) -> GCSDriver:
        """A driver from a tier's config dict (keys as in tiers.schemas.GCSConfig, plain secret)."""
        known = ("prefix", "project", "endpoint_url", "service_account_key", "storage_class", "chunk_size",
                 "max_pool_connections")
        kwargs = {k: config[k] for k in known if config.get(k) is not None}
        return cls(name, bucket=config["bucket"], **kwargs)

    # names ---------------------------------------------------------------------------------------------

    def _blob(self, locator: str) -> storage.Blob:
        name, long = object_name(self.prefix, locator)
        blob = self.bucket.blob(name)
        if long is not None:
            blob.metadata = {_LOCATOR_META: base64.urlsafe_b64encode(long.encode()).decode()}
        return blob

    def _where(self, locator: str) -> tuple[str, str]:
        """(bucket, object name) of a locator: an adopted object (``%a/<bucket>/<name>``) stays where it was found."""
        if locator.startswith(ADOPTED):
            bucket, _, name = locator[len(ADOPTED):].partition("/")
            if not bucket or not name:
                raise ValueError("adopted locator without bucket or name")
            return bucket, name
        return self.bucket_name, object_name(self.prefix, locator)[0]

    def _existing(self, locator: str) -> storage.Blob:
        """The object a locator names, to read or delete (never to write: writes take fresh locators)."""
        bucket, name = self._where(locator)
        return (self.bucket if bucket == self.bucket_name else self.client.bucket(bucket)).blob(name)

    def _class(self, storage_class: str | None) -> str:
        chosen = (storage_class or "").upper()
        chosen = _S3_NAMES.get(chosen, chosen)
        return chosen if chosen in STORAGE_CLASSES else self.storage_class

    def _media_url(self, name: str, bucket: str | None = None) -> str:
        bucket = bucket or self.bucket_name
        return f"{self.endpoint_url}/storage/v1/b/{quote(bucket, safe='')}/o/{quote(name, safe='')}"

    # writes --------------------------------------------------------------------------------------------

    def _upload(self, blob: storage.Blob, chunks: Iterator[bytes], digest: StreamDigest | None,
                storage_class: str) -> None:
        """One request when the body fits a chunk, else a resumable upload the last chunk finalizes."""
        blob.storage_class = storage_class
        stream = blocks(chunks, self.chunk_size, digest.update if digest is not None else lambda _: None)
        first = next(stream, b"")
        second = next(stream, None)
        if second is None:
            blob.upload_from_string(first, content_type="application/octet-stream", checksum=None)
            return
        url = blob.create_resumable_upload_session(content_type="application/octet-stream", checksum=None)
        offset = 0
        pending = [first, second]
        while pending:
            data = pending.pop(0)
            following = next(stream, None)
            if following is not None:
                pending.append(following)
            last = not pending
            total = str(offset + len(data)) if last else "*"
            reply = self.session.put(url, data=data, headers={
                "Content-Range": f"bytes {offset}-{offset + len(data) - 1}/{total}" if data
                else f"bytes */{total}"})
            if reply.status_code not in ((200, 201) if last else (308,)):
                raise TierError(f"resumable upload: {reply.status_code}: {reply.text[:300]}")
            offset += len(data)

    def put(
        self,
        locator: str,
        chunks: Iterator[bytes],
        checksum_algorithm: ChecksumAlgorithm | None = None,
        storage_class: str | None = None,
    ) -> PutResult:
        """Stream ``chunks`` into a new object; visible only once complete and durable."""
        digest = StreamDigest(checksum_algorithm)
        with _mapped_errors(locator):
            self._upload(self._blob(locator), chunks, digest, self._class(storage_class))
        return digest.result()

    # reads ---------------------------------------------------------------------------------------------

    def open(self, locator: str, start: int = 0, end: int | None = None) -> Iterator[bytes]:
        """Stream bytes [start, end] (inclusive end, as HTTP ranges) of an object."""
        if start < 0:
            raise ValueError("negative range start")
        if end is not None and end < start:
            return empty()
        bucket, name = self._where(locator)
        headers = {"Accept-Encoding": "identity"}
        if start or end is not None:
            headers["Range"] = f"bytes={start}-{'' if end is None else end}"
        with _mapped_errors(locator):
            reply = self.session.get(self._media_url(name, bucket), params={"alt": "media"}, headers=headers,
                                     stream=True)
        if reply.status_code == 416:
            reply.close()
            return empty()  # start past the end: nothing, as the posix driver
        if reply.status_code >= 400:
            reply.close()
            _raise_for(reply, locator)
        return ChunkReader(reply.iter_content(CHUNK), release=reply.close,
                           errors=(requests.RequestException, OSError))

    def head(self, locator: str) -> BlobInfo:
        bucket, name = self._where(locator)
        with _mapped_errors(locator):
            blob = self.client.bucket(bucket).get_blob(name)
        if blob is None:
            raise BlobNotFound(locator)
        return BlobInfo(locator=locator, size=int(blob.size or 0), modified=blob.updated,
                        storage_class=blob.storage_class or "STANDARD")

    def delete(self, locator: str) -> None:
        """Remove an object; deleting a missing object is not an error (idempotent)."""
        with contextlib.suppress(BlobNotFound), _mapped_errors(locator):
            self._existing(locator).delete()

    def list(self, prefix: str = "") -> Iterator[BlobInfo]:
        """Every object whose locator starts with ``prefix`` (fsck and tests)."""
        for scan in scan_prefixes(self.prefix, prefix):
            with _mapped_errors(scan):
                for blob in self.client.list_blobs(self.bucket_name, prefix=scan):
                    if str(blob.name).startswith(self.prefix + HASHED):
                        raw = (blob.metadata or {}).get(_LOCATOR_META)
                        locator = base64.urlsafe_b64decode(raw).decode("utf-8") if raw else None
                    else:
                        locator = locator_of(self.prefix, str(blob.name))
                    if locator is not None and locator.startswith(prefix):
                        yield BlobInfo(locator=locator, size=int(blob.size or 0), modified=blob.updated,
                                       storage_class=blob.storage_class or "STANDARD")

    # copies --------------------------------------------------------------------------------------------

    def same_account(self, other: TierDriver) -> bool:
        """Whether a server-side rewrite from ``other`` can work (same endpoint and credentials)."""
        return isinstance(other, GCSDriver) and other.endpoint_url == self.endpoint_url and \
            other.identity == self.identity

    def _rewrite(self, dest: storage.Blob, source: storage.Blob) -> None:
        token: str | None = None
        while True:
            token, _, _ = dest.rewrite(source, token=token)
            if token is None:
                return

    def copy_from(self, source: TierDriver, src_locator: str, dst_locator: str,
                  storage_class: str | None = None) -> PutResult:
        """Copy an object from any tier; on the same endpoint the service copies (rewrite)."""
        if not (isinstance(source, GCSDriver) and self.same_account(source)):
            return super().copy_from(source, src_locator, dst_locator, storage_class)
        dest = self._blob(dst_locator)
        dest.storage_class = self._class(storage_class)
        with _mapped_errors(src_locator):
            self._rewrite(dest, source._existing(src_locator))
            dest.reload()
        md5 = base64.b64decode(dest.md5_hash).hex() if dest.md5_hash else ""
        return PutResult(size=int(dest.size or 0), md5_hex=md5)

    # multipart -----------------------------------------------------------------------------------------

    def put_part(self, upload_locator: str, part_number: int, chunks: Iterator[bytes],
                 checksum_algorithm: ChecksumAlgorithm | None = None) -> tuple[PartInfo, PutResult]:
        """Store one part (1..10000) of the upload ``upload_locator``; see TierDriver.put_part."""
        if not 1 <= part_number <= 10000:
            raise ValueError("part number must be 1..10000")
        part = f"{part_number:05d}.{uuid.uuid4().hex}"
        digest = StreamDigest(checksum_algorithm)
        with _mapped_errors(upload_locator):
            # parts stay in STANDARD whatever the target class: the join reads them
            self._upload(self.bucket.blob(upload_prefix(self.prefix, upload_locator) + part), chunks, digest,
                         "STANDARD")
        result = digest.result()
        return PartInfo(part_number=part_number, locator=part, size=result.size), result

    def _parts(self, base: str) -> dict[str, int]:
        with _mapped_errors(base):
            return {str(b.name)[len(base):]: int(b.size or 0) for b in self.client.list_blobs(self.bucket_name,
                                                                                              prefix=base)}

    def complete_multipart(self, upload_locator: str, locator: str, parts: Sequence[PartInfo],
                           storage_class: str | None = None) -> int:
        """Join ``parts`` in order into the new object ``locator`` server-side (compose)."""
        base = upload_prefix(self.prefix, upload_locator)
        stored = self._parts(base)
        for part in parts:
            if len(part.locator) != 38 or "/" in part.locator:
                raise TierError(f"not a part of this tier: {part.locator!r}")
            if part.locator not in stored:
                raise BlobNotFound(f"part {part.part_number} of {upload_locator}")
            if stored[part.locator] != part.size:
                raise TierError(f"part {part.part_number} has {stored[part.locator]} bytes, recorded {part.size}")
        dest = self._blob(locator)
        dest.storage_class = self._class(storage_class)
        sources = [self.bucket.blob(base + p.locator) for p in parts if p.size]
        with _mapped_errors(locator):
            if not sources:
                dest.upload_from_string(b"", content_type="application/octet-stream", checksum=None)
            elif len(sources) <= MAX_COMPOSE:
                dest.content_type = "application/octet-stream"
                dest.compose(sources)
            else:  # chained composes into a scratch object, then one atomic rewrite into place
                scratch = self.bucket.blob(f"{base}joined.{uuid.uuid4().hex}")
                scratch.content_type = "application/octet-stream"
                scratch.compose(sources[:MAX_COMPOSE])
                for i in range(MAX_COMPOSE, len(sources), MAX_COMPOSE - 1):
                    scratch.compose([scratch, *sources[i:i + MAX_COMPOSE - 1]])
                self._rewrite(dest, scratch)
        return sum(p.size for p in parts)

    def abort_multipart(self, upload_locator: str) -> None:
        """Remove every stored part of the upload (after complete or abort); idempotent."""
        base = upload_prefix(self.prefix, upload_locator)
        for part in self._parts(base):
            with contextlib.suppress(BlobNotFound), _mapped_errors(part):
                self.bucket.blob(base + part).delete()

    # housekeeping --------------------------------------------------------------------------------------

    def check(self) -> None:
        """Reach the bucket with the tier's credentials (the tier form's connection test)."""
        try:
            with _mapped_errors(self.bucket_name):
                self.bucket.reload()
        except BlobNotFound as exc:  # the bucket itself: say so, not just its name
            raise TierError(f"bucket {self.bucket_name!r} not found at {self.endpoint_url}") from exc
