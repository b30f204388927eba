"""``Expect: 100-continue`` on a raw socket: a write the gateway refuses is answered before the body (no 100),
an anonymous write to a bucket anyone may write gets ``100 Continue``, then the body, then 200."""

from __future__ import annotations

import socket
import uuid

from botocore.client import BaseClient

from tests.gateway.conftest import Gateway


def _put(gateway: Gateway, path: str, body: bytes) -> list[bytes]:
    """The status lines the gateway sends for a PUT that waits for 100-continue before its body."""
    host, port = gateway.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(f"PUT {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {len(body)}\r\n"
                  "Expect: 100-continue\r\n\r\n".encode())
        first = s.recv(65536)
        if not first.startswith(b"HTTP/1.1 100"):
            return [first.split(b"\r\n", 1)[0]]
        s.sendall(body)
        rest = s.recv(65536)
    return [first.split(b"\r\n", 1)[0], rest.split(b"\r\n", 1)[0]]


def test_refused_before_the_body_and_continued_where_anyone_may_write(gateway: Gateway, s3: BaseClient) -> None:
    private = f"t-{uuid.uuid4().hex[:10]}"
    s3.create_bucket(Bucket=private)
    assert _put(gateway, f"/{private}/obj", b"x" * 123) == [b"HTTP/1.1 403 Forbidden"]
    public = f"t-{uuid.uuid4().hex[:10]}"
    s3.create_bucket(Bucket=public, ACL="public-read-write")
    assert _put(gateway, f"/{public}/obj", b"y" * 123) == [b"HTTP/1.1 100 Continue", b"HTTP/1.1 200 OK"]
    assert s3.get_object(Bucket=public, Key="obj")["Body"].read() == b"y" * 123
