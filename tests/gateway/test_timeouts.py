"""A real gateway process with test-sized time-outs, driven over raw sockets: a body that stops, or dribbles
slower than the minimum rate, is answered RequestTimeout; a download its client stopped reading is cut and
its stream ended; half-sent header sections are closed (the oldest at once past the cap, the rest at their
deadline); and boto3 is served all along."""

from __future__ import annotations

import select
import socket
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.gateway import rawclient as raw
from tests.gateway.conftest import Gateway, start_gateway, stop
from tests.waiting import DEADLINE_S, closed_sockets, holds_for, wait_until

BODY_TIMEOUT_S = 1.0
# long enough that opening every connection, on a loaded machine, ends well before the first kept one's deadline
HEADER_TIMEOUT_S = 5.0
MAX_PENDING = 50
# long enough to look at the stalled download, and be served meanwhile, before it is cut on a loaded machine
SEND_TIMEOUT_S = 5.0
MIN_RATE_BPS = 1000
RATE_WINDOW_S = 2.0


@dataclass
class Slow:
    gateway: Gateway
    host: str
    port: int


@pytest.fixture(scope="module")
def slow(gateway: Gateway, db_url: str, data_dir: Path) -> Iterator[Slow]:
    """A second gateway on the suite's data with short time-outs (the package's gateway keeps the defaults)."""
    log = data_dir / f"gateway-timeouts-{uuid.uuid4().hex[:6]}.log"
    url, proc = start_gateway(db_url, log, {
        "TIERPILOT_GATEWAY_BODY_TIMEOUT_S": str(BODY_TIMEOUT_S),
        "TIERPILOT_GATEWAY_HEADER_TIMEOUT_S": str(HEADER_TIMEOUT_S),
        "TIERPILOT_GATEWAY_MAX_PENDING_CONNECTIONS": str(MAX_PENDING),
        "TIERPILOT_GATEWAY_SEND_TIMEOUT_S": str(SEND_TIMEOUT_S),
        "TIERPILOT_GATEWAY_BODY_MIN_RATE_BPS": str(MIN_RATE_BPS),
        "TIERPILOT_GATEWAY_BODY_RATE_WINDOW_S": str(RATE_WINDOW_S)})
    parts = urlsplit(url)
    gw = Gateway(url=url, proc=proc, log=log, users=gateway.users, tier_dirs=gateway.tier_dirs)
    yield Slow(gw, parts.hostname or "127.0.0.1", parts.port or 80)
    stop(proc)


def _read_all(sock: socket.socket, deadline: float) -> bytes:
    """Everything the server sends until it closes (or the deadline passes)."""
    out = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([sock], [], [], deadline - time.monotonic())
        if not ready:
            break
        try:
            data = sock.recv(65536)
        except ConnectionResetError:
            break
        if not data:
            break
        out += data
    return out


def test_a_put_that_stops_sending_its_body_gets_request_timeout(slow: Slow) -> None:
    s3 = slow.gateway.client("alice")
    bucket = f"t-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket)
    user = slow.gateway.users["alice"]
    url = raw.url_for(slow.gateway.url, bucket, "half")
    signed = raw.sign("PUT", url, {"content-length": "10"}, "UNSIGNED-PAYLOAD", user.access_key_id,
                      user.secret_access_key)
    head = "".join(f"{k}: {v}\r\n" for k, v in signed.headers.items())
    with socket.create_connection((slow.host, slow.port)) as sock:
        started = time.monotonic()
        sock.sendall(f"PUT /{bucket}/half HTTP/1.1\r\n{head}\r\n".encode() + b"12345")
        # meanwhile the gateway serves others
        s3.put_object(Bucket=bucket, Key="whole", Body=b"0123456789")
        assert s3.get_object(Bucket=bucket, Key="whole")["Body"].read() == b"0123456789"
        answer = _read_all(sock, started + BODY_TIMEOUT_S + DEADLINE_S)
        elapsed = time.monotonic() - started
    status, _, rest = answer.partition(b"\r\n")
    assert status == b"HTTP/1.1 400 Bad Request", answer[:300]
    assert b"<Code>RequestTimeout</Code>" in rest
    assert b"not read from or written to within the timeout period" in rest
    assert b"connection: close" in rest.lower()
    assert BODY_TIMEOUT_S * 0.9 <= elapsed < BODY_TIMEOUT_S + DEADLINE_S  # answered at the time-out, not held
    assert "half" not in [o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]


def test_half_sent_header_sections_are_closed_and_boto3_is_served_meanwhile(slow: Slow) -> None:
    s3 = slow.gateway.client("bob")
    bucket = f"t-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket)
    socks: list[socket.socket] = []
    kept_from = 200 - MAX_PENDING
    try:
        started = time.monotonic()
        for i in range(200):
            if i == kept_from:
                # no connection opened from here on can reach its header deadline before this
                first_kept_at = time.monotonic()
            sock = socket.create_connection((slow.host, slow.port))
            sock.sendall(f"GET /{bucket}/k{i} HTTP/1.1\r\nHost: {slow.host}\r\nX-Slow: ".encode())
            socks.append(sock)
        # past the cap the oldest go at once (at most MAX_PENDING are held), seen before any of the newest could
        # have timed out
        early = closed_sockets(socks, first_kept_at + HEADER_TIMEOUT_S * 0.9, enough=kept_from)
        assert len(early) >= kept_from
        assert early <= set(range(kept_from)), "the newest are kept, the oldest closed"
        s3.put_object(Bucket=bucket, Key="served", Body=b"meanwhile")
        assert s3.get_object(Bucket=bucket, Key="served")["Body"].read() == b"meanwhile"
        # the rest at their deadline
        rest = [s for i, s in enumerate(socks) if i not in early]
        late = closed_sockets(rest, started + HEADER_TIMEOUT_S + DEADLINE_S)
        assert len(late) == len(rest)
        assert time.monotonic() - started >= HEADER_TIMEOUT_S * 0.9
    finally:
        for sock in socks:
            sock.close()
    assert s3.get_object(Bucket=bucket, Key="served")["Body"].read() == b"meanwhile"


def test_a_body_dribbling_slower_than_the_minimum_rate_gets_request_timeout(slow: Slow) -> None:
    """One byte every 0.4 s never trips the 1 s idle time-out, but stays far under 1000 bytes/s: after the
    2 s window it is answered RequestTimeout (before the minimum rate, it was held for the whole body)."""
    s3 = slow.gateway.client("alice")
    bucket = f"t-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket)
    user = slow.gateway.users["alice"]
    url = raw.url_for(slow.gateway.url, bucket, "dribble")
    signed = raw.sign("PUT", url, {"content-length": "1000"}, "UNSIGNED-PAYLOAD", user.access_key_id,
                      user.secret_access_key)
    head = "".join(f"{k}: {v}\r\n" for k, v in signed.headers.items())
    answer = b""
    with socket.create_connection((slow.host, slow.port)) as sock:
        started = time.monotonic()
        sock.sendall(f"PUT /{bucket}/dribble HTTP/1.1\r\n{head}\r\n".encode())
        while time.monotonic() < started + RATE_WINDOW_S + DEADLINE_S:
            try:
                sock.sendall(b"x")
            except OSError:
                break
            ready, _, _ = select.select([sock], [], [], BODY_TIMEOUT_S * 0.4)
            if ready:
                answer = _read_all(sock, time.monotonic() + DEADLINE_S)
                break
        elapsed = time.monotonic() - started
        # meanwhile, and after, the gateway serves others
        s3.put_object(Bucket=bucket, Key="whole", Body=b"0123456789")
    status, _, rest = answer.partition(b"\r\n")
    assert status == b"HTTP/1.1 400 Bad Request", answer[:300]
    assert b"<Code>RequestTimeout</Code>" in rest and b"connection: close" in rest.lower()
    assert RATE_WINDOW_S * 0.9 <= elapsed < RATE_WINDOW_S + DEADLINE_S  # answered past the window, not held
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])] == ["whole"]


def _flows(gateway: Gateway) -> tuple[int, int]:
    """(requests with an open flow, bytes read through flows so far) from the gateway's health."""
    health = httpx.get(f"{gateway.url}/_tierpilot/health").json()["reservations"]
    return health["open_flows"], health["moved_bytes"]["read"]


def test_a_download_its_client_stopped_reading_is_cut_and_its_stream_ended(slow: Slow) -> None:
    """A GET of 32 MiB whose client reads the headers and then nothing: once the socket's buffers are full
    the gateway waits SEND_TIMEOUT_S, then drops the connection and ends the request: its flow closes, and
    no more of the object is read and paid for. Before the send time-out both were held for ever."""
    s3 = slow.gateway.client("bob")
    bucket = f"t-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket)
    size = 32 * 1024 * 1024
    s3.put_object(Bucket=bucket, Key="big", Body=b"b" * size)
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "big"})
    parts = urlsplit(url)
    _, read_before = _flows(slow.gateway)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    try:
        sock.connect((slow.host, slow.port))
        asked = time.monotonic()  # the gateway's send time-out cannot start before the request is sent
        sock.sendall(f"GET {parts.path}?{parts.query} HTTP/1.1\r\nHost: {parts.netloc}\r\n\r\n".encode())
        first = sock.recv(4096)
        assert first.startswith(b"HTTP/1.1 200"), first[:200]
        # the client reads nothing more: the GET is held, and others are served meanwhile
        assert _flows(slow.gateway)[0] == 1  # the stalled GET
        assert s3.get_object(Bucket=bucket, Key="big", Range="bytes=0-9")["Body"].read() == b"b" * 10
        wait_until(lambda: _flows(slow.gateway)[0] == 0, message="the stalled download is still held")
        assert time.monotonic() - asked >= SEND_TIMEOUT_S * 0.9
        _, read_after = _flows(slow.gateway)
        holds_for(lambda: _flows(slow.gateway)[1] == read_after, 0.5)  # nothing more read for the dropped connection
        assert 0 < read_after - read_before < size
        # the connection is gone: what the kernel buffered, then the end (a reset, or EOF)
        got = len(first) + len(_read_all(sock, time.monotonic() + DEADLINE_S))
        assert got < size
    finally:
        sock.close()
    assert s3.head_object(Bucket=bucket, Key="big")["ContentLength"] == size
