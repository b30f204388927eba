"""What the Azure Blob and Google Cloud Storage drivers share: object names of locators, the bounded
pool of parallel block uploads, and a closable chunk iterator over a streamed download."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from tierpilot.drivers.base import TierError
from tierpilot.drivers.s3 import decode_key, encode_key

MAX_NAME = 1024  # bytes of an object name, both services
HASHED = "%h/"  # names of locators too long to spell: %h/<sha256>, the locator in the metadata
PARTS = "%p/"  # parts of multipart uploads: %p/<sha256 of the upload>/<part>
RESTORED = "%r/"  # rehydrated copies of archived blobs (Azure): %r/<name of the blob>
_T = TypeVar("_T")


def object_name(prefix: str, locator: str) -> tuple[str, str | None]:
    """(object name, locator to keep in the metadata or None) of a locator; injective.

    Besides what S3 keys escape, a segment's trailing ``.`` and every ``\\`` are percent-encoded: Azure
    folds ``\\`` into ``/`` and drops trailing dots of a path segment.
    """
    if not locator:
        raise ValueError("empty locator")
    try:
        raw = locator.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("locator is not valid UTF-8") from exc
    segments = []
    for segment in encode_key(locator).replace("\\", "%5C").split("/"):
        segments.append(segment[:-1] + "%2E" if segment.endswith(".") else segment)
    name = prefix + "/".join(segments)
    if len(name.encode("utf-8")) <= MAX_NAME:
        return name, None
    return f"{prefix}{HASHED}{hashlib.sha256(raw).hexdigest()}", locator


def locator_of(prefix: str, name: str) -> str | None:
    """The locator of an object name under ``prefix`` (None: a hashed name, read its metadata; or not a blob)."""
    rel = name[len(prefix):]
    if rel.startswith((HASHED, PARTS, RESTORED)):
        return None
    return decode_key(rel)


def upload_prefix(prefix: str, upload_locator: str) -> str:
    if not upload_locator:
        raise ValueError("empty upload locator")
    return f"{prefix}{PARTS}{hashlib.sha256(upload_locator.encode('utf-8')).hexdigest()}/"


def scan_prefixes(prefix: str, locator_prefix: str) -> list[str]:
    """Name prefixes to list for the locators starting with ``locator_prefix`` (whole segments encode alike)."""
    complete = locator_prefix[: locator_prefix.rfind("/") + 1]
    if not complete:
        return [prefix]
    name, hashed = object_name(prefix, complete + "x")
    return [prefix] if hashed is not None else [name[:-1], prefix + HASHED]


def bounded_map(pool: ThreadPoolExecutor, limit: int, calls: Iterable[Callable[[], _T]]) -> list[_T]:
    """Run calls on ``pool`` with at most ``limit`` in flight; results in order.

    ``calls`` is consumed in the caller's thread (it reads the request body); a failed call stops the
    consumption early and its exception is raised.
    """
    futures: list[Future[_T]] = []
    slots = threading.BoundedSemaphore(limit)
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
            future = pool.submit(call)
            future.add_done_callback(finished)
            futures.append(future)
        return [f.result() for f in futures]
    finally:
        for f in futures:
            f.cancel()


def blocks(chunks: Iterable[bytes], size: int, seen: Callable[[bytes], None]) -> Iterator[bytes]:
    """``chunks`` regrouped in blocks of ``size`` bytes (the last may be shorter; none when empty)."""
    buffer = bytearray()
    for chunk in chunks:
        seen(chunk)
        buffer.extend(chunk)
        while len(buffer) >= size:
            with memoryview(buffer) as view:
                block = bytes(view[:size])
            del buffer[:size]
            yield block
    if buffer:
        yield bytes(buffer)


class ChunkReader:
    """Iterator over a download's chunks that maps errors to TierError; ``close()`` releases the connection."""

    def __init__(self, chunks: Iterator[bytes], release: Callable[[], None] | None = None,
                 errors: tuple[type[BaseException], ...] = (OSError,)) -> None:
        self._chunks: Iterator[bytes] | None = chunks
        self._release = release
        self._errors = errors

    def __iter__(self) -> ChunkReader:
        return self

    def __next__(self) -> bytes:
        if self._chunks is None:
            raise StopIteration
        try:
            return bytes(next(self._chunks))
        except StopIteration:
            self.close()
            raise
        except self._errors as exc:
            self.close()
            raise TierError(f"read failed: {exc}") from exc

    def close(self) -> None:
        self._chunks = None
        if self._release is not None:
            release, self._release = self._release, None
            release()


def empty() -> ChunkReader:
    return ChunkReader(iter(()))
