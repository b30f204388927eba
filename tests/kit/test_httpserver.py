"""`tierpilot api` (uvicorn with kit/httpserver.py's protocol) against half-open connections: past the cap the
oldest are closed at once, the rest at the header deadline, and the API answers meanwhile. Before the guard,
uvicorn held every half-sent header section for ever."""

from __future__ import annotations

import os
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import ROOT
from tests.servers import free_port, wait_port

HEADER_TIMEOUT_S = 2.0
MAX_PENDING = 40
CONNECTIONS = 160


@pytest.fixture
def api_port(db: str, data_dir: Path) -> Iterator[int]:
    port = free_port()
    env = dict(os.environ, TIERPILOT_DATABASE_URL=db, TIERPILOT_API_HEADER_TIMEOUT_S=str(HEADER_TIMEOUT_S),
               TIERPILOT_API_MAX_PENDING_CONNECTIONS=str(MAX_PENDING))
    with open(data_dir / "api-half-open.log", "ab") as log:
        proc = subprocess.Popen([sys.executable, "-m", "tierpilot.cli", "api", "--port", str(port)], env=env,
                                stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
        try:
            wait_port(port)
            yield port
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _closed(socks: list[socket.socket], deadline: float) -> set[int]:
    """Indexes of the sockets the server closed by ``deadline`` (told by select)."""
    closed: set[int] = set()
    while len(closed) < len(socks) and time.monotonic() < deadline:
        open_ = [s for i, s in enumerate(socks) if i not in closed]
        ready, _, _ = select.select(open_, [], [], max(0.0, deadline - time.monotonic()))
        for s in ready:
            try:
                data = s.recv(4096)
            except ConnectionResetError:
                data = b""
            if not data:
                closed.add(socks.index(s))
        if not ready:
            break
    return closed


def test_the_api_closes_half_open_connections_and_answers_meanwhile(api_port: int) -> None:
    socks: list[socket.socket] = []
    try:
        started = time.monotonic()
        for _ in range(CONNECTIONS):
            sock = socket.create_connection(("127.0.0.1", api_port))
            sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            socks.append(sock)
        early = _closed(socks, time.monotonic() + HEADER_TIMEOUT_S * 0.5)
        assert len(early) >= CONNECTIONS - MAX_PENDING, len(early)
        assert early <= set(range(CONNECTIONS - MAX_PENDING)), "the newest are kept, the oldest closed"
        answer = httpx.get(f"http://127.0.0.1:{api_port}/api/health", timeout=10)
        assert answer.status_code == 200, answer.text
        rest = [s for i, s in enumerate(socks) if i not in early]
        late = _closed(rest, started + HEADER_TIMEOUT_S + 5)
        assert len(late) == len(rest)
        assert time.monotonic() - started >= HEADER_TIMEOUT_S * 0.9
    finally:
        for sock in socks:
            sock.close()
    assert httpx.get(f"http://127.0.0.1:{api_port}/api/health", timeout=10).status_code == 200
