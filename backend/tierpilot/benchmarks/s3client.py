"""The sweep's measuring client: as little client work per request as S3 allows, so a point measures the gateway.

boto3 costs about a millisecond of Python per request and, over plain HTTP, hashes every body twice (SHA-256
for the signature, CRC32 for its checksum); a sweep's client sharing the gateway's cores would then measure
itself.
Here: SigV4 header signing with ``UNSIGNED-PAYLOAD`` (S3 accepts it; the gateway then checks no body digest
unless a ``Content-MD5`` is sent), the day's signing key derived once, no client checksum, one keep-alive
``http.client`` connection per client, response bodies read into one reused buffer.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import socket
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

UNSIGNED = "UNSIGNED-PAYLOAD"
REGION = "us-east-1"
READ_CHUNK = 1 << 20


class Unanswered(Exception):
    """No answer: the connection failed or timed out (the research's client-side failures)."""


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    request_id: str
    nbytes: int  # response body bytes
    ttfb_s: float  # from sending to the status line and headers


class S3Client:
    """One keep-alive connection to ``endpoint`` signing as ``key_id``; not shared between threads."""

    def __init__(self, endpoint: str, key_id: str, secret: str, timeout_s: float = 60.0) -> None:
        url = urlsplit(endpoint)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"endpoint must be an http(s) URL, not {endpoint!r}")
        self.https = url.scheme == "https"
        self.hostname, self.port = url.hostname, url.port or (443 if self.https else 80)
        self.host = url.netloc
        self.key_id, self.secret, self.timeout_s = key_id, secret, timeout_s
        self._day = ""
        self._key = b""
        self._conn: http.client.HTTPConnection | None = None
        self._buf = bytearray(READ_CHUNK)

    def _signing_key(self, day: str) -> bytes:
        if day != self._day:
            key = hmac.digest(f"AWS4{self.secret}".encode(), day.encode(), "sha256")
            for part in (REGION, "s3", "aws4_request"):
                key = hmac.digest(key, part.encode(), "sha256")
            self._day, self._key = day, key
        return self._key

    def _headers(self, method: str, path: str, query: str) -> dict[str, str]:
        amz = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        scope = f"{amz[:8]}/{REGION}/s3/aws4_request"
        canonical = (f"{method}\n{path}\n{query}\nhost:{self.host}\nx-amz-content-sha256:{UNSIGNED}\n"
                     f"x-amz-date:{amz}\n\nhost;x-amz-content-sha256;x-amz-date\n{UNSIGNED}")
        to_sign = f"AWS4-HMAC-SHA256\n{amz}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
        signature = hmac.new(self._signing_key(amz[:8]), to_sign.encode(), hashlib.sha256).hexdigest()
        return {"Host": self.host, "x-amz-date": amz, "x-amz-content-sha256": UNSIGNED,
                "Authorization": f"AWS4-HMAC-SHA256 Credential={self.key_id}/{scope}, "
                                 f"SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature={signature}"}

    def send(self, method: str, bucket: str, key: str = "", query: Sequence[tuple[str, str]] = (),
             body: bytes = b"", headers: Mapping[str, str] | None = None) -> Answer:
        """One request; the body of the answer is read and counted. Raises ``Unanswered`` without an answer."""
        path = quote(f"/{bucket}/{key}" if key else f"/{bucket}", safe="/~")
        qs = "&".join(f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}" for k, v in sorted(query))
        sent = self._headers(method, path, qs)
        if headers:
            sent.update(headers)
        if method in ("PUT", "POST"):
            sent["Content-Length"] = str(len(body))
        t0 = time.perf_counter()
        try:
            conn = self._conn or self._connect()
            conn.request(method, f"{path}?{qs}" if qs else path, body=body or None, headers=sent)
            response = conn.getresponse()
            ttfb = time.perf_counter() - t0
            nbytes = 0
            if method != "HEAD":
                while n := response.readinto(self._buf):
                    nbytes += n
            else:
                response.read()
        except (OSError, http.client.HTTPException) as exc:
            self.close()
            raise Unanswered(f"{type(exc).__name__}: {exc}") from exc
        if response.will_close:
            self.close()
        return Answer(response.status, response.getheader("x-amz-request-id", ""), nbytes, ttfb)

    def _connect(self) -> http.client.HTTPConnection:
        cls = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
        conn = cls(self.hostname, self.port, timeout=self.timeout_s)
        conn.connect()
        # http.client writes the headers and the body separately: without NODELAY a small body's write waits
        # for the ACK of the headers (Nagle against delayed ACK, up to 40 ms), as urllib3 (boto3) also avoids
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._conn = conn
        return conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
