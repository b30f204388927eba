"""A small independent SigV4 client for requests boto3 will not make: chosen dates, broken signatures,
hand-made aws-chunked bodies (signed chunks, trailing checksums), malformed documents."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import quote, urlsplit

import httpx

EMPTY = hashlib.sha256(b"").hexdigest()


def _enc(value: str, safe: str = "-_.~") -> str:
    return quote(value, safe=safe)


@dataclass
class Signed:
    headers: dict[str, str]
    signature: str
    signing_key: bytes
    scope: str
    amz_date: str


def sign(method: str, url: str, headers: Mapping[str, str], payload_hash: str, key_id: str, secret: str,
         when: datetime | None = None, region: str = "us-east-1") -> Signed:
    """Headers (with Authorization) for a SigV4-signed request."""
    when = when or datetime.now(UTC)
    amz_date = when.strftime("%Y%m%dT%H%M%SZ")
    day = amz_date[:8]
    parts = urlsplit(url)
    out = {k.lower(): v for k, v in headers.items()}
    out["host"] = parts.netloc
    out["x-amz-date"] = amz_date
    out["x-amz-content-sha256"] = payload_hash
    pairs = []
    for item in parts.query.split("&") if parts.query else []:
        k, _, v = item.partition("=")
        pairs.append((k, v))
    query = "&".join(f"{k}={v}" for k, v in sorted(pairs))
    names = sorted(out)
    canonical_headers = "".join(f"{n}:{out[n].strip()}\n" for n in names)
    signed_headers = ";".join(names)
    creq = f"{method}\n{parts.path or '/'}\n{query}\n{canonical_headers}\n{signed_headers}\n{payload_hash}"
    scope = f"{day}/{region}/s3/aws4_request"
    sts = f"AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{hashlib.sha256(creq.encode()).hexdigest()}"
    key = hmac.digest(f"AWS4{secret}".encode(), day.encode(), "sha256")
    for part in (region, "s3", "aws4_request"):
        key = hmac.digest(key, part.encode(), "sha256")
    signature = hmac.new(key, sts.encode(), hashlib.sha256).hexdigest()
    out["authorization"] = (f"AWS4-HMAC-SHA256 Credential={key_id}/{scope}, SignedHeaders={signed_headers}, "
                            f"Signature={signature}")
    return Signed(out, signature, key, scope, amz_date)


def url_for(base: str, bucket: str, key: str = "", query: str = "") -> str:
    path = f"/{bucket}" + (f"/{_enc(key, '/-_.~')}" if key else "")
    return f"{base}{path}" + (f"?{query}" if query else "")


def signed_chunks(data: bytes, signed: Signed, chunk: int = 64 * 1024, corrupt: int | None = None,
                  trailer: tuple[str, str] | None = None) -> bytes:
    """STREAMING-AWS4-HMAC-SHA256-PAYLOAD(-TRAILER) body; ``corrupt`` breaks that chunk's signature."""
    out = []
    previous = signed.signature
    pieces = [data[i:i + chunk] for i in range(0, len(data), chunk)] + [b""]
    for index, piece in enumerate(pieces):
        sts = (f"AWS4-HMAC-SHA256-PAYLOAD\n{signed.amz_date}\n{signed.scope}\n{previous}\n{EMPTY}\n"
               f"{hashlib.sha256(piece).hexdigest()}")
        sig = hmac.new(signed.signing_key, sts.encode(), hashlib.sha256).hexdigest()
        previous = sig
        if corrupt == index:
            sig = "0" * 64
        out.append(f"{len(piece):x};chunk-signature={sig}\r\n".encode() + piece + (b"\r\n" if piece else b""))
    if trailer is None:
        out.append(b"\r\n")
    else:
        name, value = trailer
        line = f"{name}:{value}\n".encode()
        sts = (f"AWS4-HMAC-SHA256-TRAILER\n{signed.amz_date}\n{signed.scope}\n{previous}\n"
               f"{hashlib.sha256(line).hexdigest()}")
        sig = hmac.new(signed.signing_key, sts.encode(), hashlib.sha256).hexdigest()
        out.append(f"{name}:{value}\r\nx-amz-trailer-signature:{sig}\r\n\r\n".encode())
    return b"".join(out)


def unsigned_chunks(data: bytes, trailer: tuple[str, str] | None, chunk: int = 64 * 1024) -> bytes:
    """STREAMING-UNSIGNED-PAYLOAD-TRAILER body as botocore frames it."""
    out = [f"{len(data[i:i + chunk]):x}\r\n".encode() + data[i:i + chunk] + b"\r\n"
           for i in range(0, len(data), chunk)]
    out.append(b"0\r\n")
    if trailer is not None:
        out.append(f"{trailer[0]}:{trailer[1]}\r\n".encode())
    out.append(b"\r\n")
    return b"".join(out)


def send(method: str, url: str, headers: Mapping[str, str], body: bytes = b"") -> httpx.Response:
    with httpx.Client(timeout=30) as client:
        return client.request(method, url, headers=dict(headers), content=body)


def error_code(response: httpx.Response) -> str:
    text = response.text
    start = text.find("<Code>")
    return text[start + 6: text.find("</Code>")] if start >= 0 else ""
