"""One fixity check: re-read an object's blob once and judge it against what the catalog recorded at ingest.

What the bytes must match, strongest first: the object's checksum (a whole-object one, or a COMPOSITE one
recomputed from each part's bytes at the recorded part sizes), else its ETag (MD5, or the MD5 of the parts' MD5s),
else its size alone. An object that has no checksum yet and whose ETag matched gets the ingest CRC of the bytes
just read, so it has one from then on.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from tierpilot.catalog.service import multipart_etag
from tierpilot.drivers.base import ChecksumAlgorithm
from tierpilot.drivers.checksums import INGEST_ALGORITHM, new_digest
from tierpilot.integrity.models import MISMATCH, OK


@dataclass(frozen=True)
class Expected:
    """What the catalog says an object's bytes are."""

    size: int
    etag: str
    checksum_algorithm: str | None = None
    checksum_value: str | None = None
    part_sizes: Sequence[int] | None = None

    @classmethod
    def of(cls, row: Any) -> Expected:
        return cls(size=int(row.size), etag=str(row.etag).strip('"'), checksum_algorithm=row.checksum_algorithm,
                   checksum_value=row.checksum_value,
                   part_sizes=[int(n) for n in row.part_sizes] if row.part_sizes else None)


@dataclass(frozen=True)
class Verdict:
    result: str  # ok | mismatch (missing is found by the caller: there is nothing to read)
    algorithm: str
    expected: str
    found: str
    size: int  # bytes read
    detail: str | None = None
    backfill: tuple[str, str] | None = None  # (algorithm, value) for an object that had no checksum


class _Parts:
    """Digests of consecutive segments of a stream (a multipart object's parts), one digest per segment."""

    def __init__(self, sizes: Sequence[int], factory: Callable[[], Any]) -> None:
        self._sizes, self._factory = list(sizes) or [0], factory
        self.digests = [factory()]
        self._left = self._sizes[0]

    def update(self, data: bytes) -> None:
        view = memoryview(data)
        while len(view):
            while self._left == 0 and len(self.digests) < len(self._sizes):
                self.digests.append(self._factory())
                self._left = self._sizes[len(self.digests) - 1]
            if self._left == 0:  # more bytes than the parts hold: the size check fails anyway
                self.digests[-1].update(bytes(view))
                return
            n = min(len(view), self._left)
            self.digests[-1].update(data if n == len(data) else bytes(view[:n]))
            self._left -= n
            view = view[n:]


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def check(chunks: Iterable[bytes], exp: Expected, on_chunk: Callable[[int], None] | None = None) -> Verdict:
    """Read ``chunks`` (the blob) once and judge them; ``on_chunk(n)`` paces the reader."""
    value = exp.checksum_value
    composite = value is not None and "-" in value
    alg = cast(ChecksumAlgorithm, exp.checksum_algorithm) if value and exp.checksum_algorithm else None
    digests: list[Any] = []
    parts: _Parts | None = None
    whole: Any = None
    if alg is not None and composite:
        if exp.part_sizes:
            parts = _Parts(exp.part_sizes, lambda: new_digest(alg))
            digests.append(parts)
    elif alg is not None:
        whole = new_digest(alg)
        digests.append(whole)
    elif "-" in exp.etag:
        if exp.part_sizes:
            parts = _Parts(exp.part_sizes, lambda: hashlib.md5(usedforsecurity=False))
            digests.append(parts)
    else:
        whole = hashlib.md5(usedforsecurity=False)
        digests.append(whole)
    ingest = new_digest(INGEST_ALGORITHM) if value is None else None
    if ingest is not None:
        digests.append(ingest)
    size = 0
    for chunk in chunks:
        size += len(chunk)
        for d in digests:
            d.update(chunk)
        if on_chunk is not None:
            on_chunk(len(chunk))
    if size != exp.size:
        return Verdict(MISMATCH, "SIZE", str(exp.size), str(size), size, "the blob's size is not the object's")
    if alg is not None and whole is not None:
        found = _b64(whole.digest())
        return Verdict(OK if found == value else MISMATCH, alg, value or "", found, size)
    if alg is not None and parts is not None:
        outer = new_digest(alg)
        for d in parts.digests:
            outer.update(d.digest())
        found = f"{_b64(outer.digest())}-{len(parts.digests)}"
        return Verdict(OK if found == value else MISMATCH, alg, value or "", found, size)
    if whole is not None or parts is not None:
        found = (whole.hexdigest() if whole is not None
                 else multipart_etag([d.hexdigest() for d in parts.digests]) if parts is not None else "")
        ok = found == exp.etag
        backfill = (INGEST_ALGORITHM, _b64(ingest.digest())) if ok and ingest is not None else None
        return Verdict(OK if ok else MISMATCH, "MD5", exp.etag, found, size, backfill=backfill)
    # a composite checksum or multipart ETag without the part sizes it needs: only the size can be vouched for
    return Verdict(OK, "SIZE", str(exp.size), str(size), size, "no part sizes recorded: size checked only")
