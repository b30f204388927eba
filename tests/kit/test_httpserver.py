"""`tierpilot api` (uvicorn with kit/httpserver.py's protocol) against half-open connections: past the cap the
oldest are closed at once, the rest at the header deadline, and the API answers meanwhile. Before the guard,
uvicorn held every half-sent header section for ever."""

from __future__ import annotations

import os
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
from tests.waiting import DEADLINE_S, closed_sockets

# long enough that opening every connection, on a loaded machine, ends well before the first kept one's deadline
HEADER_TIMEOUT_S = 5.0
MAX_PENDING = 40
CONNECTIONS = 160


@pytest.fixture
def api_port(db: str, data_dir: Path) -> Iterator[int]:
    port = free_port()
    env = dict(os.environ, TIERPILOT_DATABASE_URL=db, TIERPILOT_API_HEADER_TIMEOUT_S=str(HEADER_TIMEOUT_S),
               TIERPILOT_API_MAX_PENDING_CONNECTIONS=str(MAX_PENDING))
    with open(data_dir / "api-half-open.log", "ab") as log:
        proc = subprocess.Popen([sys.executable, "-m", "tierpilot.app.cli", "api", "--port", str(port)], env=env,
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


def test_the_api_closes_half_open_connections_and_answers_meanwhile(api_port: int) -> None:
    socks: list[socket.socket] = []
    kept_from = CONNECTIONS - MAX_PENDING
    try:
        started = time.monotonic()
        for i in range(CONNECTIONS):
            if i == kept_from:
                # no connection opened from here on can reach its header deadline before this
                first_kept_at = time.monotonic()
            sock = socket.create_connection(("127.0.0.1", api_port))
            sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            socks.append(sock)
        # past the cap the oldest go at once, seen before any of the newest could have timed out
        early = closed_sockets(socks, first_kept_at + HEADER_TIMEOUT_S * 0.9, enough=kept_from)
        assert len(early) >= kept_from, len(early)
        assert early <= set(range(kept_from)), "the newest are kept, the oldest closed"
        answer = httpx.get(f"http://127.0.0.1:{api_port}/api/health", timeout=60)
        assert answer.status_code == 200, answer.text
        rest = [s for i, s in enumerate(socks) if i not in early]
        late = closed_sockets(rest, started + HEADER_TIMEOUT_S + DEADLINE_S)
        assert len(late) == len(rest)
        assert time.monotonic() - started >= HEADER_TIMEOUT_S * 0.9
    finally:
        for sock in socks:
            sock.close()
    assert httpx.get(f"http://127.0.0.1:{api_port}/api/health", timeout=60).status_code == 200
