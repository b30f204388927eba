"""kit/httpserver.py's protocol writes a response's headers with its first body bytes (one segment for a small
answer), and still sends headers without a body (HEAD, 304), a 100 Continue before the body, and streams."""

from __future__ import annotations

import gc
import socket
import threading
import time
import weakref
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn

from tests.servers import free_port, wait_port
from tests.waiting import wait_until
from tierpilot.kit.httpserver import GuardedHttpToolsProtocol

_cycles: list[weakref.ref[Any]] = []  # each /small request's response cycle (uvicorn's; ``send`` is its method)


async def _app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    path = scope["path"]
    if path == "/small":
        _cycles.append(weakref.ref(send.__self__))
    if path == "/echo":  # reads the body (a client sending Expect: 100-continue waits for the 100 first)
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"%d" % len(body))]})
        await send({"type": "http.response.body", "body": body})
    elif path == "/not-modified":
        await send({"type": "http.response.start", "status": 304, "headers": [(b"etag", b'"x"')]})
        await send({"type": "http.response.body", "body": b""})
    elif path == "/stream":
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"10")]})
        await send({"type": "http.response.body", "body": b"01234", "more_body": True})
        await send({"type": "http.response.body", "body": b"56789"})
    else:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"5")]})
        await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else b"hello"})


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(_app, host="127.0.0.1", port=port, http=GuardedHttpToolsProtocol,
                                           loop="uvloop", log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_port(port)
    yield port
    server.should_exit = True
    thread.join(timeout=10)


def _until(sock: socket.socket, done: bytes, data: bytes = b"") -> bytes:
    deadline = time.monotonic() + 10
    while not data.endswith(done) and time.monotonic() < deadline:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def test_a_small_answer_arrives_as_one_segment_headers_and_body(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        for _ in range(3):  # keep-alive: every response of the connection
            sock.sendall(b"GET /small HTTP/1.1\r\nHost: x\r\n\r\n")
            first = sock.recv(65536)  # one writev: the whole answer is in the first segment
            assert first.startswith(b"HTTP/1.1 200 ") and first.endswith(b"\r\n\r\nhello"), first


def test_headers_without_a_body_still_go_and_the_connection_serves_on(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"HEAD /small HTTP/1.1\r\nHost: x\r\n\r\n")
        head = _until(sock, b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200 ") and b"content-length: 5" in head
        sock.sendall(b"GET /not-modified HTTP/1.1\r\nHost: x\r\n\r\n")
        assert _until(sock, b"\r\n\r\n").startswith(b"HTTP/1.1 304 ")
        sock.sendall(b"GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        assert _until(sock, b"0123456789").endswith(b"\r\n\r\n0123456789")


def test_100_continue_comes_before_the_body_is_sent(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"PUT /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
        assert _until(sock, b"\r\n\r\n") == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(b"body")
        answer = _until(sock, b"body")
        assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"\r\n\r\nbody")


def test_a_finished_response_cycle_is_freed_without_the_cyclic_collector(port: int) -> None:
    """The held-headers transport refers to its cycle weakly: with the collector off, each request's cycle (and
    the scope and headers it holds) goes when the connection has moved on to the next request."""
    gc.collect()
    gc.disable()
    try:
        _cycles.clear()
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            for _ in range(3):
                sock.sendall(b"GET /small HTTP/1.1\r\nHost: x\r\n\r\n")
                assert _until(sock, b"hello").endswith(b"hello")
            wait_until(lambda: all(ref() is None for ref in _cycles[:2]), message="a finished cycle is still held")
            assert len(_cycles) == 3
    finally:
        gc.enable()
