"""Checksums S3 clients send and expect: MD5 (Content-MD5, ETag), CRC32, CRC32C, CRC64NVME, SHA1, SHA256, and
the two kinds of multipart checksum (COMPOSITE: a checksum of the parts' checksums; FULL_OBJECT: the CRC of
the whole object, combined from the parts' CRCs)."""

from __future__ import annotations

import base64
import binascii
from typing import Protocol, cast

from tierpilot.drivers.base import ChecksumAlgorithm
from tierpilot.drivers.checksums import CRC_SIZES, INGEST_ALGORITHM, combine_crcs, new_digest
from tierpilot.gateway.errors import S3Error, invalid_request

ALGORITHMS = ("CRC32", "CRC32C", "CRC64NVME", "SHA1", "SHA256")
INGEST = INGEST_ALGORITHM  # what an object without a client's checksum gets
HEADERS = {alg: f"x-amz-checksum-{alg.lower()}" for alg in ALGORITHMS}
COMPOSITE, FULL_OBJECT = "COMPOSITE", "FULL_OBJECT"
# what S3 allows per multipart checksum type (CRC64NVME only as a full-object CRC; SHAs cannot be combined)
TYPES = {COMPOSITE: ("CRC32", "CRC32C", "SHA1", "SHA256"), FULL_OBJECT: tuple(CRC_SIZES)}


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


DIGEST_SIZES = {**CRC_SIZES, "SHA1": 20, "SHA256": 32}


def normalise_algorithm(value: str) -> str:
    """Upper-case algorithm name, refusing what we cannot compute."""
    alg = value.strip().upper()
    if alg not in ALGORITHMS:
        raise invalid_request(f"Checksum algorithm {value[:32]!r} is not valid")
    return alg


def multipart_type(algorithm: str | None, kind: str | None) -> str | None:
    """The checksum type of a new multipart upload (x-amz-checksum-algorithm, x-amz-checksum-type) as S3 decides
    it: CRC64NVME defaults to FULL_OBJECT, the others to COMPOSITE; a type without an algorithm or one the
    algorithm cannot be is InvalidRequest."""
    if kind is not None:
        kind = kind.strip().upper()
        if kind not in TYPES:
            raise invalid_request(f"Value for x-amz-checksum-type header is invalid: {kind[:32]!r}")
        if algorithm is None:
            raise invalid_request("The x-amz-checksum-type header can only be used with the "
                                  "x-amz-checksum-algorithm header.")
        if algorithm not in TYPES[kind]:
            raise invalid_request(f"The {kind} checksum type cannot be used with the {algorithm.lower()} checksum "
                                  "algorithm.")
        return kind
    if algorithm is None:
        return None
    return FULL_OBJECT if algorithm == "CRC64NVME" else COMPOSITE


def kind_of(value: str) -> str:
    """COMPOSITE or FULL_OBJECT, from a stored checksum value (only a composite one ends in ``-N``)."""
    return COMPOSITE if "-" in value else FULL_OBJECT


def composite(part_digests: list[bytes], algorithm: str) -> str:
    """S3's COMPOSITE multipart checksum: checksum of the concatenated part checksums, suffixed -N."""
    d = new(algorithm)
    for raw in part_digests:
        d.update(raw)
    return f"{b64(d.digest())}-{len(part_digests)}"


def full_object(parts: list[tuple[bytes, int]], algorithm: str) -> str:
    """S3's FULL_OBJECT multipart checksum: the CRC of the whole object, from (part CRC, part size) pairs."""
    return b64(combine_crcs(algorithm, parts))


def multipart(parts: list[tuple[bytes, int]], algorithm: str, kind: str | None) -> str:
    """The object checksum of a multipart upload of ``kind`` (None: an upload from before types were kept,
    which were all COMPOSITE)."""
    if kind == FULL_OBJECT:
        return full_object(parts, algorithm)
    return composite([digest for digest, _size in parts], algorithm)

