"""Checksums S3 clients send and expect: MD5 (Content-MD5, ETag), CRC32, CRC32C, SHA1, SHA256."""

from __future__ import annotations

import base64
import binascii
from typing import Protocol, cast

from tierpilot.drivers.base import ChecksumAlgorithm
from tierpilot.drivers.checksums import new_digest
from tierpilot.gateway.errors import S3Error, invalid_request

ALGORITHMS = ("CRC32", "CRC32C", "SHA1", "SHA256")
HEADERS = {alg: f"x-amz-checksum-{alg.lower()}" for alg in ALGORITHMS}
_UNSUPPORTED = ("CRC64NVME",)


class Digest(Protocol):
    def update(self, data: bytes, /) -> None: ...

    def digest(self) -> bytes: ...


def new(algorithm: str) -> Digest:
    """A digest of an S3 checksum algorithm (the tiers compute theirs with the same code)."""
    if algorithm not in ALGORITHMS:
        raise invalid_request(f"Checksum algorithm {algorithm!r} is not supported")
    return new_digest(cast(ChecksumAlgorithm, algorithm))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def decode_b64(value: str, size: int, what: str) -> bytes:
    """The raw bytes of a base64 digest header, or InvalidDigest / InvalidRequest when malformed."""
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != size:
        if what == "Content-MD5":
            raise S3Error("InvalidDigest", "The Content-MD5 you specified was invalid.", 400)
        # a checksum that cannot be one cannot match either: BadDigest, as S3 (and the ceph suite) answer it
        raise S3Error("BadDigest", f"The value of {what} is not a valid base64 {what[15:].upper()} checksum.", 400)
    return raw


DIGEST_SIZES = {"CRC32": 4, "CRC32C": 4, "SHA1": 20, "SHA256": 32}


def normalise_algorithm(value: str) -> str:
    """Upper-case algorithm name, refusing what we cannot compute."""
    alg = value.strip().upper()
    if alg in _UNSUPPORTED:
        raise invalid_request(f"Checksum algorithm {alg} is not supported by this gateway; use CRC32, CRC32C, "
                              "SHA1 or SHA256")
    if alg not in ALGORITHMS:
        raise invalid_request(f"Checksum algorithm {value!r} is not valid")
    return alg


def composite(part_digests: list[bytes], algorithm: str) -> str:
    """S3's COMPOSITE multipart checksum: checksum of the concatenated part checksums, suffixed -N."""
    d = new(algorithm)
    for raw in part_digests:
        d.update(raw)
    return f"{b64(d.digest())}-{len(part_digests)}"

