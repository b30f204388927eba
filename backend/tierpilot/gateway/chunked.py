"""Incremental decoder of ``Content-Encoding: aws-chunked`` bodies (signed chunks, unsigned chunks,
trailing checksums), fed with whatever slices the HTTP server hands over."""

from __future__ import annotations

import hashlib
import hmac

from tierpilot.gateway.errors import S3Error, invalid_request
from tierpilot.gateway.sigv4 import ChunkSigner

MAX_LINE = 4096
MAX_TRAILER = 16 * 1024

_HEADER, _DATA, _DATA_END, _TRAILER, _DONE = range(5)


def _incomplete(message: str = "The request body terminated unexpectedly") -> S3Error:
    return S3Error("IncompleteBody", message, 400)


def _bad_signature() -> S3Error:
    return S3Error("SignatureDoesNotMatch", "The chunk signature we calculated does not match the signature you "
                   "provided.", 403)


class AwsChunkedDecoder:
    """Yields the payload of each chunk as it arrives; verifies chunk signatures at each chunk's end.

    Payload bytes are handed on before their chunk's signature is checked: the caller must treat the
    whole upload as unverified until :meth:`finish` returns (nothing is committed before that).
    """

    def __init__(self, signer: ChunkSigner | None, expect_trailer: bool) -> None:
        self._signer = signer
        self._expect_trailer = expect_trailer
        self._state = _HEADER
        self._line = bytearray()
        self._remaining = 0
        self._chunk_sig = ""
        self._sha = hashlib.sha256() if signer else None
        self._trailer_lines: list[bytes] = []
        self._trailer_bytes = 0
        self.trailers: dict[str, str] = {}
        self.decoded = 0

    def feed(self, data: bytes) -> list[bytes]:
        out: list[bytes] = []
        pos, n = 0, len(data)
        while pos < n:
            if self._state == _DATA:
                take = min(self._remaining, n - pos)
                piece = data if (pos == 0 and take == n) else data[pos:pos + take]
                if self._sha is not None:
                    self._sha.update(piece)
                out.append(piece)
                self.decoded += take
                self._remaining -= take
                pos += take
                if self._remaining == 0:
                    self._state = _DATA_END
                continue
            if self._state == _DONE:
                if data[pos:].strip(b"\r\n"):
                    raise invalid_request("Unexpected data after the last aws-chunked chunk")
                return out
            # line-oriented states: chunk header, CRLF after data, trailer lines
            end = data.find(b"\n", pos)
            if end < 0:
                self._line += data[pos:]
                if len(self._line) > MAX_LINE:
                    raise invalid_request("aws-chunked chunk header is too long")
                return out
            self._line += data[pos:end + 1]
            pos = end + 1
            line = bytes(self._line)
            self._line.clear()
            if len(line) > MAX_LINE:
                raise invalid_request("aws-chunked chunk header is too long")
            self._on_line(line.rstrip(b"\r\n") if line.endswith(b"\r\n") else self._no_cr(line))
        return out

    @staticmethod
    def _no_cr(line: bytes) -> bytes:
        raise invalid_request("aws-chunked lines must end with CRLF")

    def _on_line(self, line: bytes) -> None:
        if self._state == _DATA_END:
            if line:
                raise _incomplete("aws-chunked chunk is longer than its declared size")
            self._verify_chunk()
            self._state = _HEADER
        elif self._state == _HEADER:
            self._on_header(line)
        elif self._state == _TRAILER:
            self._on_trailer(line)

    def _on_header(self, line: bytes) -> None:
        size_field, _, ext = line.partition(b";")
        try:
            size = int(size_field.strip(), 16)
        except ValueError:
            raise invalid_request("aws-chunked chunk header is malformed") from None
        if size < 0:
            raise invalid_request("aws-chunked chunk header is malformed")
        sig = ""
        if self._signer is not None:
            name, _, value = ext.partition(b"=")
            if name.strip() != b"chunk-signature" or not value:
                raise invalid_request("aws-chunked chunk needs a chunk-signature")
            sig = value.strip().decode("ascii", "replace")
        self._chunk_sig = sig
        if size == 0:
            self._verify_chunk()
            # without trailers the body ends with one CRLF, i.e. an empty trailer section
            self._state = _TRAILER
            return
        self._remaining = size
        self._state = _DATA

    def _verify_chunk(self) -> None:
        if self._signer is None or self._sha is None:
            return
        expected = self._signer.chunk(self._sha.hexdigest())
        self._sha = hashlib.sha256()
        if not hmac.compare_digest(expected, self._chunk_sig):
            raise _bad_signature()

    def _on_trailer(self, line: bytes) -> None:
        if not line:
            self._finish_trailer()
            return
        if not self._expect_trailer:
            raise invalid_request("aws-chunked trailer sent without x-amz-trailer")
        self._trailer_bytes += len(line)
        if self._trailer_bytes > MAX_TRAILER:
            raise invalid_request("aws-chunked trailer is too long")
        self._trailer_lines.append(line)

    def _finish_trailer(self) -> None:
        signature = ""
        canonical = b""
        for line in self._trailer_lines:
            name, sep, value = line.partition(b":")
            if not sep:
                raise invalid_request("aws-chunked trailer line is malformed")
            key = name.strip().lower().decode("latin-1")
            val = value.strip().decode("latin-1")
            if key == "x-amz-trailer-signature":
                signature = val
                continue
            self.trailers[key] = val
            canonical += f"{key}:{val}\n".encode("latin-1")
        if self._signer is not None and self._expect_trailer and (
                not signature or not hmac.compare_digest(self._signer.trailer(canonical), signature)):
            raise _bad_signature()
        self._state = _DONE

    def finish(self) -> None:
        """Check the body ended where the encoding says it should."""
        if self._state == _DONE:
            return
        # botocore and others may omit the final empty line after the trailers
        if self._state == _TRAILER and not self._line:
            self._finish_trailer()
            return
        raise _incomplete()

