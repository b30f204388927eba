"""Request bodies and keys as every S3 operation reads them: small XML documents, checked keys."""

from __future__ import annotations

import hashlib

from tierpilot.catalog import service as catalog
from tierpilot.gateway import checksums
from tierpilot.gateway.errors import S3Error, bad_digest, invalid_request
from tierpilot.gateway.http import Request
from tierpilot.gateway.sigv4 import UNSIGNED_PAYLOAD
from tierpilot.kit.streaming import Receive, body_pieces

XML_BODY_LIMIT = 2 * 1024 * 1024


def key_of(req: Request) -> str:
    catalog.validate_key(req.key)
    return req.key


def _too_big() -> S3Error:
    return S3Error("MaxMessageLengthExceeded", "Your request was too big.", 400)


async def read_all(receive: Receive, limit: int) -> bytes:
    """A small request body (XML documents) read whole; over ``limit`` bytes is an error."""
    parts: list[bytes] = []
    size = 0
    async for body in body_pieces(receive):
        size += len(body)
        if size > limit:
            raise _too_big()
        parts.append(body)
    return b"".join(parts)


def _check_body_digest(req: Request, body: bytes, checksum_headers: bool = True) -> None:
    md5 = req.header("content-md5")
    if md5 is not None and checksums.decode_b64(md5.strip(), 16, "Content-MD5") != hashlib.md5(body).digest():
        raise bad_digest()
    for alg, name in checksums.HEADERS.items() if checksum_headers else ():
        claimed = req.header(name)
        if claimed is not None:
            d = checksums.new(alg)
            d.update(body)
            if checksums.b64(d.digest()) != claimed.strip():
                raise bad_digest(f"The {alg} you specified did not match the calculated checksum.")


async def read_xml_body(req: Request, checksum_headers: bool = True) -> bytes:
    """``checksum_headers`` False: x-amz-checksum-* headers are not the body's (CompleteMultipartUpload: the
    object's) and the caller checks them."""
    declared = (req.header("content-length") or "").strip()
    if declared.isdigit() and int(declared) > XML_BODY_LIMIT:  # refused before a byte of it is read
        raise _too_big()
    body = await read_all(req.receive, XML_BODY_LIMIT)
    signed = req.signed
    if signed is not None and signed.payload_hash != UNSIGNED_PAYLOAD and not signed.streaming:
        if hashlib.sha256(body).hexdigest() != signed.payload_hash:
            raise S3Error("XAmzContentSHA256Mismatch", "The provided 'x-amz-content-sha256' header does not match "
                          "what was computed.", 400)
    elif signed is not None and signed.streaming:
        raise invalid_request("aws-chunked bodies are accepted for object data only")
    _check_body_digest(req, body, checksum_headers)
    return body
