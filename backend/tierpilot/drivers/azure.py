"""The azure driver: blobs as block blobs of one container (and name prefix) of an Azure storage account.

Access tiers map to tierpilot storage classes HOT, COOL, COLD and ARCHIVE (the ids of the Azure price
catalogs). Large writes are staged as blocks in parallel (``max_concurrency`` blocks of ``block_size`` in
flight) and committed at the end, so a blob is visible only once complete. Multipart parts are blobs under
``<prefix>%p/``; completing stages them into the new blob server-side (Put Block From URL).

Archived blobs are offline. A restore rehydrates them Azure's way, chosen per tier by ``rehydrate``:
``copy`` (default) copies the archived blob into a readable blob under ``<prefix>%r/`` with the restore's
priority (speed ``expedited`` → High, ``standard``/``bulk`` → Standard), which is deleted at its expiry
like an S3 restored copy; ``in_place`` changes the blob's own tier, after which it stays online. The
pending state is polled through the blob's properties (``archive_status``, copy status).
"""

from __future__ import annotations

import base64
import contextlib
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any, Literal
from urllib.parse import urlparse

import requests
from azure.core.exceptions import AzureError, HttpResponseError, ResourceNotFoundError
from azure.core.pipeline.transport import RequestsTransport
from azure.storage.blob import (
    BlobBlock,
    BlobClient,
    BlobProperties,
    BlobSasPermissions,
    BlobServiceClient,
    RehydratePriority,
    StandardBlobTier,
    generate_blob_sas,
)
from requests.adapters import HTTPAdapter

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
from tierpilot.drivers.cloud import (
    HASHED,
    RESTORED,
    ChunkReader,
    blocks,
    bounded_map,
    empty,
    locator_of,
    object_name,
    scan_prefixes,
    upload_prefix,
)
from tierpilot.drivers.offline import MAX_RESTORE_DAYS, SPEEDS, restore_expiry
from tierpilot.drivers.s3 import ADOPTED
from tierpilot.kit.db import utcnow

CHUNK = 4 << 20
MAX_BLOCK_FROM_URL = 256 << 20  # bytes per Put Block From URL (the service takes up to 4000 MiB)
# tierpilot class -> Azure access tier; S3 names a client may send map to their nearest tier
ACCESS_TIERS = {"HOT": "Hot", "COOL": "Cool", "COLD": "Cold", "ARCHIVE": "Archive",
                "STANDARD": "Hot", "STANDARD_IA": "Cool", "GLACIER": "Archive", "DEEP_ARCHIVE": "Archive"}
CLASS_OF_TIER = {"hot": "HOT", "cool": "COOL", "cold": "COLD", "archive": "ARCHIVE"}
PRIORITY: dict[str, RehydratePriority] = {"expedited": RehydratePriority.HIGH, "standard": RehydratePriority.STANDARD,
                                          "bulk": RehydratePriority.STANDARD}
_LOCATOR_META = "tierpilot_locator"
_DAYS_META = "tierpilot_days"
_SPEED_META = "tierpilot_speed"
_EXPIRY_META = "tierpilot_expiry"  # set when a restore extends a readable copy
_PART_NAME_LEN = 5 + 1 + 32
Rehydrate = Literal["copy", "in_place"]


def _code(exc: HttpResponseError) -> str | None:
    code = getattr(exc, "error_code", None)
    return str(getattr(code, "value", code)) if code else None


@contextlib.contextmanager
def _mapped_errors(locator: str) -> Iterator[None]:
    """Azure errors as tier errors: callers handle one family whatever the driver."""
    try:
        yield
    except ResourceNotFoundError as exc:
        if _code(exc) == "ContainerNotFound":
            raise TierError(f"ContainerNotFound: {exc.message}") from exc
        raise BlobNotFound(locator) from exc
    except HttpResponseError as exc:
        if _code(exc) in ("BlobArchived", "BlobBeingRehydrated"):
            raise NotRestored(locator) from exc
        raise TierError(f"{_code(exc) or exc.status_code}: {exc.message}") from exc
    except AzureError as exc:
        raise TierError(str(exc)) from exc


def _pending(props: BlobProperties) -> bool:
    """A rehydration (in place, or into a copy) has not finished."""
    copy_status = getattr(props.copy, "status", None)
    return bool(props.archive_status and str(props.archive_status).startswith("rehydrate-pending")) or \
        copy_status == "pending"


def _archived(props: BlobProperties) -> bool:
    return str(props.blob_tier or "").lower() == "archive" and not _pending(props)


class AzureBlobDriver(TierDriver):
    """A container (and name prefix) of an Azure storage account as a tier."""

    remote = True  # far: the gateway reads it ahead (drivers/readahead.py)

    def __init__(
        self,
        name: str,
        *,
        container: str,
        account_url: str | None = None,
        prefix: str = "",
        account_name: str | None = None,
        account_key: str | None = None,
        sas_token: str | None = None,
        connection_string: str | None = None,
        access_tier: str = "HOT",
        rehydrate: Rehydrate = "copy",
        rehydrate_tier: str = "HOT",
        block_size: int = 8 << 20,
        max_concurrency: int = 4,
        max_pool_connections: int = 32,
        offline: bool = False,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        if not 1 << 20 <= block_size <= 256 << 20:
            raise ValueError("block_size must be between 1 MiB and 256 MiB")
        if rehydrate_tier not in ("HOT", "COOL", "COLD"):
            raise ValueError("rehydrate_tier must be HOT, COOL or COLD")
        self.name = name
        self.container = container
        self.prefix = prefix
        self.access_tier = access_tier
        self.rehydrate = rehydrate
        self.rehydrate_tier = rehydrate_tier
        self.block_size = block_size
        self.max_concurrency = max_concurrency
        self.offline = offline or access_tier == "ARCHIVE"
        self.clock = clock
        session = requests.Session()
        adapter = HTTPAdapter(pool_connections=4, pool_maxsize=max_pool_connections)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        options: dict[str, Any] = {
            "transport": RequestsTransport(session=session, session_owner=False, connection_timeout=10,
                                           read_timeout=120),
            "max_single_get_size": CHUNK, "max_chunk_get_size": CHUNK,
            "max_block_size": block_size, "max_single_put_size": block_size,
        }
        self._key: tuple[str, str] | None = None
        self._sas = bool(sas_token)
        if connection_string:
            service = BlobServiceClient.from_connection_string(connection_string, **options)
            cred = service.credential
            if getattr(cred, "account_key", None):
                self._key = (str(cred.account_name), str(cred.account_key))
        else:
            if not account_url:
                raise ValueError("account_url or connection_string is required")
            credential: Any = None
            if account_key:
                account_name = account_name or _account_of(account_url)
                credential = {"account_name": account_name, "account_key": account_key}
                self._key = (account_name, account_key)
            elif sas_token:
                credential = sas_token.lstrip("?")
            service = BlobServiceClient(account_url, credential=credential, **options)
        self.account_url = service.url.split("?")[0].rstrip("/")
        self.service = service
        self.container_client = service.get_container_client(container)
        self._pool = ThreadPoolExecutor(max_workers=max_pool_connections, thread_name_prefix=f"azure-{name}")

    @classmethod
    def from_config(cls, name: str, config: Mapping[str, Any], offline: bool = False) -> AzureBlobDriver:
        """A driver from a tier's config dict (keys as in tiers.schemas.AzureConfig, plain secrets)."""
        known = ("account_url", "prefix", "account_name", "account_key", "sas_token", "connection_string",
                 "access_tier", "rehydrate", "rehydrate_tier", "block_size", "max_concurrency",
                 "max_pool_connections")
        kwargs = {k: config[k] for k in known if config.get(k) is not None}
        return cls(name, container=config["container"], offline=offline, **kwargs)

    # names ---------------------------------------------------------------------------------------------

    def _where(self, name: str) -> tuple[str, str]:
        """(container, blob name) of a name: an adopted blob (``%a/<container>/<name>``) stays where it was found."""
        if name.startswith(ADOPTED):
            container, _, blob = name[len(ADOPTED):].partition("/")
            if not container or not blob:
                raise ValueError("adopted locator without container or name")
            return container, blob
        return self.container, name

    def _blob(self, name: str) -> BlobClient:
        if name.startswith(ADOPTED):
            return self.service.get_blob_client(*self._where(name))
        return self.container_client.get_blob_client(name)

    def _name(self, locator: str) -> tuple[str, dict[str, str]]:
        if locator.startswith(ADOPTED):  # tiers adopt: the locator names the blob itself
            self._where(locator)
            return locator, {}
        name, long = object_name(self.prefix, locator)
        meta = {_LOCATOR_META: base64.urlsafe_b64encode(long.encode()).decode()} if long is not None else {}
        return name, meta

    def _copy_name(self, name: str) -> str:
        if name.startswith(ADOPTED):  # an adopted blob's copy goes to the tier's own container
            return f"{self.prefix}{RESTORED}{name}"
        return f"{self.prefix}{RESTORED}{name[len(self.prefix):]}"

    def _tier(self, storage_class: str | None) -> StandardBlobTier:
        chosen = ACCESS_TIERS.get((storage_class or "").upper()) or ACCESS_TIERS[self.access_tier]
        return StandardBlobTier(chosen)

    def _source_url(self, name: str) -> str:
        """URL a server-side copy reads ``name`` from: signed for an hour when the tier has the account key
        (Copy Blob and Put Block From URL do not take the destination's shared key for the source); a SAS
        tier's blob URLs carry its token."""
        blob = self._blob(name)
        if self._key is None:
            return str(blob.url)
        container, blob_name = self._where(name)
        sas = generate_blob_sas(self._key[0], container, blob_name, account_key=self._key[1],
                                permission=BlobSasPermissions(read=True),
                                expiry=datetime.now(UTC) + timedelta(hours=1))
        return f"{str(blob.url).split('?')[0]}?{sas}"

    # writes --------------------------------------------------------------------------------------------

    def _upload(self, name: str, chunks: Iterator[bytes], seen: Callable[[bytes], None],
                metadata: dict[str, str], tier: StandardBlobTier) -> None:
        """One Put Blob when the body fits a block, else blocks staged in parallel and committed."""
        blob = self._blob(name)
        stream = blocks(chunks, self.block_size, seen)
        first = next(stream, b"")
        second = next(stream, None)
        if second is None:
            blob.upload_blob(first, overwrite=True, metadata=metadata, standard_blob_tier=tier)
            return
        tag = uuid.uuid4().hex

        def stage(number: int, data: bytes) -> Callable[[], str]:
            block_id = base64.b64encode(f"{tag}{number:06d}".encode()).decode()

            def call() -> str:
                blob.stage_block(block_id, data, length=len(data))
                return block_id

            return call

        def calls() -> Iterator[Callable[[], str]]:
            yield stage(0, first)
            yield stage(1, second)
            for number, data in enumerate(stream, start=2):
                yield stage(number, data)

        ids = bounded_map(self._pool, self.max_concurrency, calls())
        blob.commit_block_list([BlobBlock(block_id=i) for i in ids], metadata=metadata, standard_blob_tier=tier)

    def put(
        self,
        locator: str,
        chunks: Iterator[bytes],
        checksum_algorithm: ChecksumAlgorithm | None = None,
        storage_class: str | None = None,
    ) -> PutResult:
        """Stream ``chunks`` into a new blob; visible only once complete and durable."""
        name, metadata = self._name(locator)
        digest = StreamDigest(checksum_algorithm)
        with _mapped_errors(locator):
            self._upload(name, chunks, digest.update, metadata, self._tier(storage_class))
        return digest.result()

    # reads ---------------------------------------------------------------------------------------------

    def _download(self, name: str, locator: str, start: int, end: int | None) -> ChunkReader:
        length = None if end is None else end - start + 1
        try:
            with _mapped_errors(locator):
                downloader = self._blob(name).download_blob(offset=start if start or length else None, length=length,
                                                                max_concurrency=1)
        except TierError as exc:
            cause = exc.__cause__
            if isinstance(cause, HttpResponseError) and _code(cause) == "InvalidRange":
                return empty()  # start past the end: nothing, as the posix driver
            raise
        return ChunkReader(downloader.chunks(), errors=(AzureError, OSError))

    def open(self, locator: str, start: int = 0, end: int | None = None) -> Iterator[bytes]:
        """Stream bytes [start, end] (inclusive end, as HTTP ranges); an archived blob from its rehydrated copy."""
        if start < 0:
            raise ValueError("negative range start")
        if end is not None and end < start:
            return empty()
        name, _ = self._name(locator)
        try:
            return self._download(name, locator, start, end)
        except NotRestored:
            if self.rehydrate != "copy":
                raise
        copy = self._copy_props(name)
        if copy is None or self._copy_state(copy)[0] != "ready":
            raise NotRestored(locator)
        try:
            return self._download(copy.name, locator, start, end)
        except BlobNotFound:  # the copy expired between the look and the read
            raise NotRestored(locator) from None

    def _props(self, name: str, locator: str) -> BlobProperties:
        with _mapped_errors(locator):
            return self._blob(name).get_blob_properties()

    def head(self, locator: str) -> BlobInfo:
        name, _ = self._name(locator)
        props = self._props(name, locator)
        return BlobInfo(locator=locator, size=int(props.size), modified=props.last_modified,
                        storage_class=CLASS_OF_TIER.get(str(props.blob_tier or "hot").lower(), "HOT"))

    def delete(self, locator: str) -> None:
        """Remove a blob (and its rehydrated copy); deleting a missing blob is not an error (idempotent)."""
        name, _ = self._name(locator)
        names = [name, self._copy_name(name)] if self.offline else [name]
        for each in names:
            with contextlib.suppress(BlobNotFound), _mapped_errors(locator):
                self._blob(each).delete_blob()

    def list(self, prefix: str = "") -> Iterator[BlobInfo]:
        """Every blob whose locator starts with ``prefix`` (fsck and tests)."""
        for scan in scan_prefixes(self.prefix, prefix):
            hashed = scan.startswith(self.prefix + HASHED)
            with _mapped_errors(scan):
                for props in self.container_client.list_blobs(name_starts_with=scan,
                                                              include=["metadata"] if hashed else None):
                    locator = self._listed_locator(props)
                    if locator is not None and locator.startswith(prefix):
                        yield BlobInfo(locator=locator, size=int(props.size), modified=props.last_modified,
                                       storage_class=CLASS_OF_TIER.get(str(props.blob_tier or "hot").lower()))

    def _listed_locator(self, props: BlobProperties) -> str | None:
        if str(props.name).startswith(self.prefix + HASHED):
            raw = (props.metadata or {}).get(_LOCATOR_META)
            return base64.urlsafe_b64decode(raw).decode("utf-8") if raw else None
        return locator_of(self.prefix, str(props.name))

    # copies --------------------------------------------------------------------------------------------

    def same_account(self, other: TierDriver) -> bool:
        """Whether ``other`` is a tier of this storage account (same account endpoint)."""
        return isinstance(other, AzureBlobDriver) and other.account_url == self.account_url

    def copies_from(self, other: TierDriver) -> bool:
        """Whether the service can copy from ``other`` (Copy Blob): a tier of this account, or of another
        account whose blob URLs the other tier can authorize (its account key signs a SAS, or its SAS token)."""
        return isinstance(other, AzureBlobDriver) and (self.same_account(other) or other._key is not None
                                                       or other._sas)

    def _readable_name(self, locator: str) -> str:
        """The name holding the readable bytes of a blob: itself, or its rehydrated copy."""
        name, _ = self._name(locator)
        props = self._props(name, locator)
        if not _archived(props) and not _pending(props):
            return name
        copy = self._copy_props(name) if self.rehydrate == "copy" else None
        if copy is not None and self._copy_state(copy)[0] == "ready":
            return str(copy.name)
        raise NotRestored(locator)

    def _wait_copy(self, blob: BlobClient, locator: str, timeout: float = 600.0) -> BlobProperties:
        """Poll a server-side copy inside one account until it finished (usually at once)."""
        deadline, pause = time.monotonic() + timeout, 0.05
        while True:
            props = self._props(blob.blob_name, locator)
            status = getattr(props.copy, "status", None)
            if status != "pending":
                if status not in (None, "success"):
                    raise TierError(f"server-side copy {status}: {getattr(props.copy, 'status_description', '')}")
                return props
            if time.monotonic() > deadline:
                with contextlib.suppress(AzureError):
                    blob.abort_copy(props.copy.id or "")
                raise TierError("server-side copy did not finish in time")
            time.sleep(pause)
            pause = min(pause * 2, 2.0)

    def copy_from(self, source: TierDriver, src_locator: str, dst_locator: str,
                  storage_class: str | None = None) -> PutResult:
        """Copy a blob from any tier; from an Azure tier the service copies (Copy Blob), across accounts too when
        the source URL can be authorized (the copy then runs asynchronously and is polled until done)."""
        if not (isinstance(source, AzureBlobDriver) and self.copies_from(source)):
            return super().copy_from(source, src_locator, dst_locator, storage_class)
        src_name = source._readable_name(src_locator)
        name, metadata = self._name(dst_locator)
        blob = self._blob(name)
        with _mapped_errors(src_locator):
            blob.start_copy_from_url(source._source_url(src_name), metadata=metadata,
                                     standard_blob_tier=self._tier(storage_class))
        props = self._wait_copy(blob, dst_locator)
        md5 = props.content_settings.content_md5
        return PutResult(size=int(props.size), md5_hex=bytes(md5).hex() if md5 else "")

    # multipart -----------------------------------------------------------------------------------------

    def put_part(self, upload_locator: str, part_number: int, chunks: Iterator[bytes],
                 checksum_algorithm: ChecksumAlgorithm | None = None) -> tuple[PartInfo, PutResult]:
        """Store one part (1..10000) of the upload ``upload_locator``; see TierDriver.put_part."""
        if not 1 <= part_number <= 10000:
            raise ValueError("part number must be 1..10000")
        part = f"{part_number:05d}.{uuid.uuid4().hex}"
        digest = StreamDigest(checksum_algorithm)
        with _mapped_errors(upload_locator):
            # parts stay in Hot whatever the target class: the join reads them
            self._upload(upload_prefix(self.prefix, upload_locator) + part, chunks, digest.update, {},
                         StandardBlobTier.HOT)
        result = digest.result()
        return PartInfo(part_number=part_number, locator=part, size=result.size), result

    def _parts(self, base: str) -> dict[str, int]:
        with _mapped_errors(base):
            return {str(p.name)[len(base):]: int(p.size) for p in self.container_client.list_blobs(
                name_starts_with=base)}

    def complete_multipart(self, upload_locator: str, locator: str, parts: Sequence[PartInfo],
                           storage_class: str | None = None) -> int:
        """Join ``parts`` in order into the new blob ``locator`` server-side (Put Block From URL)."""
        base = upload_prefix(self.prefix, upload_locator)
        stored = self._parts(base)
        for part in parts:
            if len(part.locator) != _PART_NAME_LEN or "/" in part.locator:
                raise TierError(f"not a part of this tier: {part.locator!r}")
            if part.locator not in stored:
                raise BlobNotFound(f"part {part.part_number} of {upload_locator}")
            if stored[part.locator] != part.size:
                raise TierError(f"part {part.part_number} has {stored[part.locator]} bytes, recorded {part.size}")
        total = sum(p.size for p in parts)
        name, metadata = self._name(locator)
        blob = self._blob(name)
        tier = self._tier(storage_class)
        tag = uuid.uuid4().hex
        pieces = [(base + p.locator, lo, min(p.size - lo, MAX_BLOCK_FROM_URL))
                  for p in parts for lo in range(0, p.size, MAX_BLOCK_FROM_URL)]

        def stage(number: int, source: str, offset: int, length: int) -> Callable[[], str]:
            block_id = base64.b64encode(f"{tag}{number:06d}".encode()).decode()

            def call() -> str:
                blob.stage_block_from_url(block_id, self._source_url(source), source_offset=offset,
                                          source_length=length)
                return block_id

            return call

        with _mapped_errors(locator):
            if not pieces:
                blob.upload_blob(b"", overwrite=True, metadata=metadata, standard_blob_tier=tier)
                return 0
            ids = bounded_map(self._pool, self.max_concurrency,
                              (stage(n, *piece) for n, piece in enumerate(pieces)))
            blob.commit_block_list([BlobBlock(block_id=i) for i in ids], metadata=metadata, standard_blob_tier=tier)
        return total

    def abort_multipart(self, upload_locator: str) -> None:
        """Remove every stored part of the upload (after complete or abort); idempotent."""
        base = upload_prefix(self.prefix, upload_locator)

        def remover(name: str) -> Callable[[], None]:
            def call() -> None:
                with contextlib.suppress(BlobNotFound), _mapped_errors(name):
                    self._blob(name).delete_blob()
            return call

        bounded_map(self._pool, self.max_concurrency, [remover(base + part) for part in self._parts(base)])

    # archive -------------------------------------------------------------------------------------------

    def _copy_props(self, name: str) -> BlobProperties | None:
        try:
            return self._props(self._copy_name(name), name)
        except BlobNotFound:
            return None

    def _copy_state(self, copy: BlobProperties) -> tuple[str, datetime | None]:
        """("pending" | "ready" | "gone", expiry) of a rehydrated copy; an expired or failed copy is deleted."""
        if _pending(copy):
            return "pending", None
        meta = copy.metadata or {}
        status = getattr(copy.copy, "status", None)
        if status in ("failed", "aborted"):
            expiry = None
        elif meta.get(_EXPIRY_META):
            expiry = datetime.fromisoformat(meta[_EXPIRY_META])
        else:
            done = getattr(copy.copy, "completion_time", None) or copy.last_modified
            expiry = restore_expiry(done, int(meta.get(_DAYS_META, "1")))
        if expiry is not None and self.clock() < expiry:
            return "ready", expiry
        with contextlib.suppress(BlobNotFound, TierError), _mapped_errors(str(copy.name)):
            self._blob(str(copy.name)).delete_blob()
        return "gone", None

    def restore(self, locator: str, days: int, speed: RestoreSpeed) -> RestoreStatus:
        """Start, upgrade or extend a rehydration; see TierDriver.restore."""
        if speed not in SPEEDS:
            raise ValueError(f"restore speed must be one of {', '.join(SPEEDS)}")
        if not 1 <= days <= MAX_RESTORE_DAYS:
            raise ValueError(f"restore days must be 1..{MAX_RESTORE_DAYS}")
        name, _ = self._name(locator)
        props = self._props(name, locator)
        if self.rehydrate == "in_place":
            return self._restore_in_place(name, locator, props, speed)
        if not _archived(props):
            raise NotArchived(locator)
        copy = self._copy_props(name)
        if copy is not None:
            state, expiry = self._copy_state(copy)
            if state == "pending":
                return self._upgrade(self._copy_name(name), locator, copy, speed)
            if state == "ready":
                expiry = restore_expiry(self.clock(), days)
                with _mapped_errors(locator):
                    self._blob(self._copy_name(name)).set_blob_metadata(
                        {**(copy.metadata or {}), _EXPIRY_META: expiry.isoformat()})
                return RestoreStatus(ongoing=False, restored=True, expiry=expiry, accepted=False)
        try:
            reply = self._start_rehydration(name, locator, days, speed)
        except (NotRestored, TierError) as exc:
            cause = exc.__cause__
            if isinstance(cause, HttpResponseError) and _code(cause) in ("BlobArchived", "CannotVerifyCopySource"):
                # Azurite (and a service without archive copies) refuses to copy an archived blob
                raise TierError(f"{locator}: the service cannot rehydrate an archived blob into a copy; "
                                "set the tier's rehydrate to in_place") from exc
            raise
        if reply.get("copy_status") == "success":  # the service had it at once (not Azure's Archive tier)
            now = self.clock()
            return RestoreStatus(ongoing=False, restored=True, expiry=restore_expiry(now, days), speed=speed,
                                 ready_at=now, accepted=True)
        return RestoreStatus(ongoing=True, restored=False, speed=speed, accepted=True)

    def _start_rehydration(self, name: str, locator: str, days: int, speed: RestoreSpeed) -> dict[str, Any]:
        with _mapped_errors(locator):
            return self._blob(self._copy_name(name)).start_copy_from_url(
                self._source_url(name), metadata={_DAYS_META: str(days), _SPEED_META: speed},
                standard_blob_tier=StandardBlobTier(ACCESS_TIERS[self.rehydrate_tier]),
                rehydrate_priority=PRIORITY[speed])

    def _upgrade(self, name: str, locator: str, props: BlobProperties, speed: RestoreSpeed) -> RestoreStatus:
        """A pending rehydration asked again: High priority upgrades a Standard one, anything else waits."""
        current = str(props.rehydrate_priority or "Standard")
        if PRIORITY[speed] != RehydratePriority.HIGH or current == "High":
            raise RestoreInProgress(locator)
        target = ACCESS_TIERS.get(str(props.archive_status or "").rsplit("-", 1)[-1].upper()) or \
            ACCESS_TIERS[self.rehydrate_tier]
        with _mapped_errors(locator):
            self._blob(name).set_standard_blob_tier(StandardBlobTier(target), rehydrate_priority=RehydratePriority.HIGH)
        return RestoreStatus(ongoing=True, restored=False, speed=speed, accepted=True)

    def _restore_in_place(self, name: str, locator: str, props: BlobProperties,
                          speed: RestoreSpeed) -> RestoreStatus:
        if _pending(props):
            return self._upgrade(name, locator, props, speed)
        if not _archived(props):  # rehydrated before: online for good
            return RestoreStatus(ongoing=False, restored=True, accepted=False)
        with _mapped_errors(locator):
            self._blob(name).set_standard_blob_tier(StandardBlobTier(ACCESS_TIERS[self.rehydrate_tier]),
                                                    rehydrate_priority=PRIORITY[speed])
        return self._status_in_place(self._props(name, locator), accepted=True)

    @staticmethod
    def _status_in_place(props: BlobProperties, accepted: bool = False) -> RestoreStatus:
        if _pending(props):
            return RestoreStatus(ongoing=True, restored=False, accepted=accepted)
        return RestoreStatus(ongoing=False, restored=not _archived(props), accepted=accepted)

    def restore_status(self, locator: str) -> RestoreStatus:
        """Current rehydration state, from the properties of the blob or of its copy (BlobNotFound)."""
        name, _ = self._name(locator)
        if self.rehydrate == "in_place":
            return self._status_in_place(self._props(name, locator))
        copy = self._copy_props(name)
        if copy is not None:
            state, expiry = self._copy_state(copy)
            if state == "pending":
                meta = copy.metadata or {}
                speed = meta.get(_SPEED_META)
                return RestoreStatus(ongoing=True, restored=False,
                                     speed=speed if speed in SPEEDS else None)  # type: ignore[arg-type]
            if state == "ready":
                return RestoreStatus(ongoing=False, restored=True, expiry=expiry)
        props = self._props(name, locator)
        return RestoreStatus(ongoing=False, restored=not _archived(props))

    # housekeeping --------------------------------------------------------------------------------------

    def check(self) -> None:
        """Reach the container with the tier's credentials (the tier form's connection test)."""
        with _mapped_errors(self.container):
            self.container_client.get_container_properties()


def _account_of(account_url: str) -> str:
    """The account name of an account URL: the host's first label, or (emulators) the first path segment."""
    parsed = urlparse(account_url)
    host = parsed.hostname or ""
    if ".blob." in host:
        return host.split(".", 1)[0]
    segment = parsed.path.strip("/").split("/", 1)[0]
    if not segment:
        raise ValueError("account_name is required for this account_url")
    return segment
