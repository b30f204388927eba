"""A PUT's body on its way to a tier: aws-chunked decoding and every integrity check S3 clients rely on
(signed payload SHA-256, chunk signatures, Content-MD5, x-amz-checksum-* in headers or trailers).

Runs in the worker thread that writes the tier, so hashing never blocks the event loop. The checks
that need the whole body run in ``verify`` after the tier has the bytes but before the catalog
points at them: a mismatch leaves nothing visible.
"""

from __future__ import annotations

import hashlib
import hmac
import queue
import threading
from collections.abc import Iterator
from typing import Protocol

from tierpilot.drivers.base import PutResult
from tierpilot.gateway import checksums, sigv4
from tierpilot.gateway.chunked import AwsChunkedDecoder
from tierpilot.gateway.errors import S3Error, bad_digest, invalid_argument, invalid_request
from tierpilot.gateway.http import Request
from tierpilot.kit.flow import Flow
from tierpilot.kit.streaming import Receive, body_pieces

MAX_OBJECT_SIZE = 5 * 1024**3  # one PUT or part, as S3
CLAIMED = "(claimed)"


def _int_header(req: Request, name: str) -> int | None:
    value = req.header(name)
    if value is None:
        return None
    if not (value.strip().isascii() and value.strip().isdigit()):
        raise invalid_argument(f"{name} must be a non-negative integer", name, value[:64])
    return int(value)


def small_body(req: Request, limit: int) -> bool:
    """Whether the request's body is at most ``limit`` bytes on the wire (its Content-Length says so)."""
    if "transfer-encoding" in req.headers:
        return False
    value = req.header("content-length")
    return value is not None and value.isdigit() and int(value) <= limit


def requested_checksum(req: Request) -> tuple[str | None, str | None, str | None]:
    """(algorithm, value from a header, trailer name) of the checksum a client sent with a body."""
    present = [alg for alg, name in checksums.HEADERS.items() if name in req.headers]
    if len(present) > 1:
        raise invalid_request("Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.")
    trailer = (req.header("x-amz-trailer") or "").strip().lower() or None
    algorithm: str | None = None
    value: str | None = None
    if present:
        algorithm = present[0]
        value = req.headers[checksums.HEADERS[algorithm]].strip()
    elif trailer:
        if not trailer.startswith("x-amz-checksum-"):
            raise invalid_request(f"The value specified in the x-amz-trailer header is not supported: {trailer}")
        algorithm = checksums.normalise_algorithm(trailer[len("x-amz-checksum-"):])
    sdk = req.header("x-amz-sdk-checksum-algorithm")
    if sdk:
        sdk_alg = checksums.normalise_algorithm(sdk)
        if algorithm is None:
            algorithm = sdk_alg
        elif sdk_alg != algorithm:
            raise invalid_request("Value for x-amz-sdk-checksum-algorithm header is invalid.")
    if value is not None and algorithm is not None:
        checksums.decode_b64(value, checksums.DIGEST_SIZES[algorithm], f"x-amz-checksum-{algorithm.lower()}")
    return algorithm, value, trailer


SIDE_HASH_MIN = 8 * 1024 * 1024


class SideHasher:
    """Feeds pieces to digests in a helper thread, at most ``depth`` pieces behind the caller."""

    def __init__(self, digests: list[checksums.Digest], depth: int = 8) -> None:
        self._digests = digests
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._room = threading.Semaphore(depth)
        self._thread = threading.Thread(target=self._run, name="payload-hash", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (piece := self._queue.get()) is not None:
            for d in self._digests:
                d.update(piece)
            self._room.release()

    def feed(self, piece: bytes) -> None:
        self._room.acquire()
        self._queue.put(piece)

    def close(self) -> None:
        """Wait until every fed piece is hashed (the digests are final after this)."""
        self._queue.put(None)
        self._thread.join()


class BodySource(Protocol):
    def blocks(self) -> Iterator[bytes]: ...


class WholeBody:
    """A small body read whole on the event loop (``read``), then decoded and checked like any other by
    ``Payload`` there too: no worker thread and no hand-off queue for a body of a few KiB."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    async def read(self, receive: Receive, flow: Flow) -> None:
        async for body in body_pieces(receive):
            await flow.consume(len(body))
            self.parts.append(body)

    def blocks(self) -> Iterator[bytes]:
        return iter(self.parts)


class Payload:
    """The decoded body of one request and what it must match."""

    def __init__(self, req: Request, inbound: BodySource, stored_algorithm: str | None = CLAIMED) -> None:
        """``stored_algorithm``: the checksum the tier computes and the catalog keeps (default: the claimed one)."""
        signed = req.signed  # None: an anonymous write (a bucket anyone may write): a plain, unsigned body
        self._inbound = inbound
        self.algorithm, self._claimed, self._trailer = requested_checksum(req)
        content_md5 = req.header("content-md5")
        self._md5 = checksums.decode_b64(content_md5.strip(), 16, "Content-MD5") if content_md5 is not None else None
        self._decoder: AwsChunkedDecoder | None = None
        self._sha: hashlib._Hash | None = None
        self._sha_expected: str | None = None
        mode = signed.payload_hash if signed is not None else sigv4.UNSIGNED_PAYLOAD
        if signed is not None and mode in sigv4.STREAMING_MODES:
            self.expected_size = _int_header(req, "x-amz-decoded-content-length")
            if self.expected_size is None:
                raise S3Error("MissingContentLength", "You must provide the Content-Length HTTP header.", 411)
            signer = None
            if mode != sigv4.STREAMING_UNSIGNED_TRAILER:
                assert req.signing_key is not None
                signer = sigv4.ChunkSigner(req.signing_key, signed)
            has_trailer = mode != sigv4.STREAMING_SIGNED
            if self._trailer and not has_trailer:
                raise invalid_request("x-amz-trailer needs a STREAMING-…-TRAILER payload")
            self._decoder = AwsChunkedDecoder(signer, expect_trailer=has_trailer)
        else:
            self.expected_size = _int_header(req, "content-length")
            if mode != sigv4.UNSIGNED_PAYLOAD:
                self._sha = hashlib.sha256()
                self._sha_expected = mode
            if self._trailer:
                raise invalid_request("x-amz-trailer needs an aws-chunked body")
        if self.expected_size is not None and self.expected_size > MAX_OBJECT_SIZE:
            raise S3Error("EntityTooLarge", "Your proposed upload exceeds the maximum allowed object size.", 400,
                          ProposedSize=str(self.expected_size), MaxSizeAllowed=str(MAX_OBJECT_SIZE))
        if stored_algorithm == CLAIMED:
            stored_algorithm = self.algorithm
        # the tier computes MD5 and the stored algorithm; any other claimed checksum is computed here
        self._extra = (checksums.new(self.algorithm)
                       if self.algorithm is not None and self.algorithm != stored_algorithm else None)
        self.size = 0

    def chunks(self) -> Iterator[bytes]:
        """The payload bytes (worker thread)."""
        decoder = self._decoder
        digests: list[checksums.Digest] = [d for d in (self._sha, self._extra) if d is not None]
        # big bodies hash in a second thread, beside the tier's own MD5 (hashlib releases the GIL)
        side = SideHasher(digests) if digests and (self.expected_size or 0) >= SIDE_HASH_MIN else None
        try:
            for block in self._inbound.blocks():
                pieces = decoder.feed(block) if decoder is not None else (block,)
                for piece in pieces:
                    if side is not None:
                        side.feed(piece)
                    else:
                        for d in digests:
                            d.update(piece)
                    self.size += len(piece)
                    yield piece
            if decoder is not None:
                decoder.finish()
        finally:
            if side is not None:
                side.close()

    def verify(self, result: PutResult) -> None:
        """Refuse the written bytes unless they are complete and match every digest the client sent."""
        if self.expected_size is not None and self.size != self.expected_size:
            raise S3Error("IncompleteBody", "You did not provide the number of bytes specified by the "
                          "Content-Length HTTP header.", 400)
        if self._sha is not None and not hmac.compare_digest(self._sha.hexdigest(), self._sha_expected or ""):
            raise S3Error("XAmzContentSHA256Mismatch", "The provided 'x-amz-content-sha256' header does not match "
                          "what was computed.", 400, ClientComputedContentSHA256=self._sha_expected or "",
                          S3ComputedContentSHA256=self._sha.hexdigest())
        if self._md5 is not None and self._md5.hex() != result.md5_hex:
            raise bad_digest()
        if self.algorithm is None:
            return
        claimed = self._claimed
        if claimed is None and self._trailer and self._decoder is not None:
            claimed = self._decoder.trailers.get(self._trailer)
            if claimed is None:
                raise invalid_request(f"The trailer {self._trailer} was declared but not sent")
            checksums.decode_b64(claimed, checksums.DIGEST_SIZES[self.algorithm], self._trailer)
        if claimed is None:
            return
        actual = checksums.b64(self._extra.digest()) if self._extra is not None else result.checksum_b64
        if actual != claimed:
            raise bad_digest(f"The {self.algorithm} you specified did not match the calculated checksum.")

    def checksum(self, result: PutResult) -> str | None:
        """The verified checksum of the claimed algorithm (for response headers)."""
        if self.algorithm is None:
            return None
        return checksums.b64(self._extra.digest()) if self._extra is not None else result.checksum_b64
