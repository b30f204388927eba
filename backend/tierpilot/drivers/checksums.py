"""Streaming digests for tier writes: MD5 (the ETag) plus the one checksum a client asked for, and the CRC
combination that gives a multipart object's full-object CRC from its parts' CRCs without reading the data."""

from __future__ import annotations

import base64
import hashlib
import zlib
from collections.abc import Callable
from typing import Protocol

import google_crc32c
from awscrt import checksums as crt

from tierpilot.drivers.base import ChecksumAlgorithm, PutResult

ALGORITHMS: tuple[ChecksumAlgorithm, ...] = ("CRC32", "CRC32C", "CRC64NVME", "SHA1", "SHA256")
# the CRCs S3 can combine into a FULL_OBJECT multipart checksum, with their digest sizes
CRC_SIZES: dict[str, int] = {"CRC32": 4, "CRC32C": 4, "CRC64NVME": 8}
# the checksum an object gets at ingest when its client sends none (S3's default too): the fastest we compute, and
# a CRC, so a multipart object's whole-object value is combined from its parts' without reading the bytes again
INGEST_ALGORITHM: ChecksumAlgorithm = "CRC64NVME"


class _Digest(Protocol):
    def update(self, data: bytes, /) -> None: ...

    def digest(self) -> bytes: ...


class _Crc:
    """A running CRC, digested as S3 encodes CRCs: big-endian bytes of the CRC's width."""

    __slots__ = ("_extend", "_size", "_value")

    def __init__(self, extend: Callable[[bytes, int], int], size: int) -> None:
        self._extend, self._size, self._value = extend, size, 0

    def update(self, data: bytes, /) -> None:
        self._value = self._extend(data, self._value)

    def digest(self) -> bytes:
        return self._value.to_bytes(self._size, "big")


# awscrt's CRC64-NVME is the carry-less-multiply one botocore uses (GB/s; a table-driven Python CRC64 would run
# at a few MB/s); CRC32 stays zlib's, which is as fast here
_EXTEND: dict[str, Callable[[bytes, int], int]] = {
    "CRC32": zlib.crc32,
    "CRC32C": lambda data, value: google_crc32c.extend(value, data),
    "CRC64NVME": crt.crc64nvme,
}


def new_digest(algorithm: ChecksumAlgorithm) -> _Digest:
    """A fresh digest object for an S3 checksum algorithm (big-endian bytes, as S3 encodes CRCs)."""
    if algorithm in _EXTEND:
        return _Crc(_EXTEND[algorithm], CRC_SIZES[algorithm])
    if algorithm == "SHA1":
        return hashlib.sha1(usedforsecurity=False)
    if algorithm == "SHA256":
        return hashlib.sha256()
    raise ValueError(f"unsupported checksum algorithm {algorithm!r}")


_COMBINE = {"CRC32": crt.combine_crc32, "CRC32C": crt.combine_crc32c, "CRC64NVME": crt.combine_crc64nvme}


def combine_crcs(algorithm: str, parts: list[tuple[bytes, int]]) -> bytes:
    """The CRC of the concatenation of blocks given as (CRC digest, length) pairs, in order: CRC algebra over
    the stored parts' values (a few microseconds a part), never a second pass over the bytes."""
    combine = _COMBINE[algorithm]
    value = 0
    for i, (digest, length) in enumerate(parts):
        crc = int.from_bytes(digest, "big")
        value = crc if i == 0 else combine(value, crc, length)
    return value.to_bytes(CRC_SIZES[algorithm], "big")


class StreamDigest:
    """Size, MD5 and an optional S3 checksum of a byte stream, updated chunk by chunk."""

    __slots__ = ("size", "_md5", "_algorithm", "_checksum")

    def __init__(self, algorithm: ChecksumAlgorithm | None = None) -> None:
        self.size = 0
        self._md5 = hashlib.md5(usedforsecurity=False)
        self._algorithm = algorithm
        self._checksum = new_digest(algorithm) if algorithm else None

    def update(self, data: bytes) -> None:
        self.size += len(data)
        self._md5.update(data)
        if self._checksum is not None:
            self._checksum.update(data)

    def result(self) -> PutResult:
        checksum_b64 = None
        if self._checksum is not None:
            checksum_b64 = base64.b64encode(self._checksum.digest()).decode("ascii")
        return PutResult(
            size=self.size,
            md5_hex=self._md5.hexdigest(),
            checksum_algorithm=self._algorithm,
            checksum_b64=checksum_b64,
        )


def checksum_b64(algorithm: ChecksumAlgorithm, data: bytes) -> str:
    """Base64 checksum of ``data`` in S3's encoding (tests and small bodies)."""
    digest = new_digest(algorithm)
    digest.update(data)
    return base64.b64encode(digest.digest()).decode("ascii")
