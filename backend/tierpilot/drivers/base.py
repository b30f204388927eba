"""The one driver interface every tier implements.

A *locator* is the driver-level name of a blob: an opaque UTF-8 string chosen by the catalog
(``<bucket>/<key>~<write id>``), unique per write so that an overwrite never touches live bytes.
Drivers map it to a path or remote key safely; callers never build paths themselves.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

ChecksumAlgorithm = Literal["CRC32", "CRC32C", "CRC64NVME", "SHA1", "SHA256"]
RestoreSpeed = Literal["expedited", "standard", "bulk"]


class TierError(Exception):
    """Base of driver errors."""


class BlobNotFound(TierError):
    pass


class TierUnavailable(TierError):
    """The tier's location is not there as the tier left it (volume unmounted, directory gone or replaced): its
    writes are refused rather than sent elsewhere (S3: 503 ServiceUnavailable)."""


class NotRestored(TierError):
    """An archive blob was read without a completed restore (S3: InvalidObjectState)."""


class RestoreInProgress(TierError):
    """A restore is running and the request does not upgrade its speed (S3: RestoreAlreadyInProgress)."""


class NotArchived(TierError):
    """Restore asked of a blob that is not archived (S3: InvalidObjectState on RestoreObject)."""


@dataclass(frozen=True)
class PutResult:
    size: int
    md5_hex: str
    checksum_algorithm: ChecksumAlgorithm | None = None
    checksum_b64: str | None = None


@dataclass(frozen=True)
class BlobInfo:
    locator: str
    size: int
    modified: datetime
    storage_class: str | None = None


@dataclass(frozen=True)
class RestoreStatus:
    """Restore state of one blob, as S3's x-amz-restore header tells it.

    ``ongoing`` a recall is running; ``restored`` the blob is readable now (until ``expiry``, or forever
    on a tier that is not offline). ``ready_at`` is the expected completion of an ongoing recall when the
    tier knows it. ``accepted`` is set only by ``restore()``: True when the call started or upgraded a
    recall (S3 answers 202), False when the copy was already readable and only its expiry moved (200).
    """

    ongoing: bool
    expiry: datetime | None = None
    restored: bool = False
    speed: RestoreSpeed | None = None
    ready_at: datetime | None = None
    accepted: bool = False


@dataclass
class PartInfo:
    part_number: int
    locator: str
    size: int
    extra: dict[str, str] = field(default_factory=dict)


class TierDriver(abc.ABC):
    """Blocking interface; the gateway calls it from worker threads with bounded buffers."""

    name: str
    offline: bool = False

    @abc.abstractmethod
    def put(
        self,
        locator: str,
        chunks: Iterator[bytes],
        checksum_algorithm: ChecksumAlgorithm | None = None,
        storage_class: str | None = None,
    ) -> PutResult:
        """Stream ``chunks`` into a new blob; visible only once complete and durable."""

    @abc.abstractmethod
    def open(self, locator: str, start: int = 0, end: int | None = None) -> Iterator[bytes]:
        """Stream bytes [start, end] (inclusive end, as HTTP ranges) of a blob.

        Checks happen at the call, before the first chunk: BlobNotFound, NotRestored (archive blob
        without a readable restored copy). ``end`` beyond the blob is clamped to its last byte; a
        ``start`` past the end yields nothing (range validation against the size is the caller's).
        The iterator has ``close()``; call it when stopping early to release the file or connection.
        """

    @abc.abstractmethod
    def head(self, locator: str) -> BlobInfo:
        """Size, modification time and storage class of a blob (no restore needed); BlobNotFound."""

    @abc.abstractmethod
    def delete(self, locator: str) -> None:
        """Remove a blob; deleting a missing blob is not an error (idempotent)."""

    @abc.abstractmethod
    def list(self, prefix: str = "") -> Iterator[BlobInfo]:
        """Every blob whose locator starts with ``prefix`` (fsck and tests)."""

    def copy_from(self, source: TierDriver, src_locator: str, dst_locator: str,
                  storage_class: str | None = None) -> PutResult:
        """Copy a blob from any tier (lifecycle moves, CopyObject) into ``dst_locator`` of this one.

        ``source`` may be this driver. An archived source must be restored (NotRestored otherwise).
        Drivers copy without moving the bytes through Python where they can (hard link on the same
        file system, S3 server-side copy on the same endpoint); then ``md5_hex`` is "" when the
        driver does not know it: keep the source's ETag.
        """
        stream = source.open(src_locator)
        try:
            return self.put(dst_locator, stream, storage_class=storage_class)
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()

    # multipart: parts are separate blobs until complete joins them
    @abc.abstractmethod
    def put_part(self, upload_locator: str, part_number: int, chunks: Iterator[bytes],
                 checksum_algorithm: ChecksumAlgorithm | None = None) -> tuple[PartInfo, PutResult]:
        """Store one part (1..10000) of the upload ``upload_locator`` (any opaque string, e.g. its id).

        Parts may arrive in any order and in parallel, from several processes. Uploading a part number
        again stores a new part with a new ``PartInfo.locator``; the caller records which one counts.
        """

    @abc.abstractmethod
    def complete_multipart(self, upload_locator: str, locator: str, parts: Sequence[PartInfo],
                           storage_class: str | None = None) -> int:
        """Join ``parts`` in the given order into the new blob ``locator`` (durable, atomic); return its size.

        The parts stay until ``abort_multipart(upload_locator)``: call it after the object is recorded,
        so a complete whose commit failed can be retried. A part missing or of another size than
        recorded raises BlobNotFound / TierError and creates nothing.
        """

    @abc.abstractmethod
    def abort_multipart(self, upload_locator: str) -> None:
        """Remove every stored part of the upload (after complete or abort); idempotent."""

    # archive tiers
    def restore(self, locator: str, days: int, speed: RestoreSpeed) -> RestoreStatus:
        """Start, upgrade or extend a restore of an archived blob (S3 RestoreObject).

        New request: returns ``accepted=True`` (and ``ongoing`` until the recall completes). Already
        restored: extends the expiry to now + ``days`` rounded up to the next midnight UTC and returns
        ``restored=True, accepted=False``. While ongoing, a faster speed upgrades the recall; the same
        or a slower one raises RestoreInProgress. NotArchived on tiers/blobs without archive semantics.
        """
        raise NotArchived(f"tier {self.name} is not an archive tier")

    def restore_status(self, locator: str) -> RestoreStatus:
        """Current restore state (BlobNotFound for a missing blob on archive tiers)."""
        return RestoreStatus(ongoing=False, restored=not self.offline)
