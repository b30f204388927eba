"""The delaying proxy gives the round trip and the rate it was asked for (tests/netem.py)."""

from __future__ import annotations

import socket
import socketserver
import statistics
import threading
import time
from collections.abc import Iterator

import pytest

from tests.netem import NetemProxy


class _Echo(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        while data := self.request.recv(1 << 16):
            self.request.sendall(data)


class _Sink(socketserver.BaseRequestHandler):
    """Counts what it receives, then answers the count (8 bytes) at EOF."""

    def handle(self) -> None:
        total = 0
        while data := self.request.recv(1 << 18):
            total += len(data)
        self.request.sendall(total.to_bytes(8, "big"))


def _serve(handler: type[socketserver.BaseRequestHandler]) -> Iterator[int]:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def echo_port() -> Iterator[int]:
    yield from _serve(_Echo)


@pytest.fixture
def sink_port() -> Iterator[int]:
    yield from _serve(_Sink)


def _round_trips(port: int, n: int) -> list[float]:
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            s.sendall(b"x")
            assert s.recv(1) == b"x"
            times.append(time.perf_counter() - t0)
    return times


def _push(port: int, nbytes: int) -> float:
    """Send ``nbytes`` through the proxy to the sink; seconds until the sink confirmed all of them."""
    block = b"\0" * (1 << 18)
    with socket.create_connection(("127.0.0.1", port)) as s:
        t0 = time.perf_counter()
        sent = 0
        while sent < nbytes:
            sent += s.send(block[: min(len(block), nbytes - sent)])
        s.shutdown(socket.SHUT_WR)
        got = s.recv(8)
        elapsed = time.perf_counter() - t0
    assert int.from_bytes(got, "big") == nbytes
    return elapsed


@pytest.mark.parametrize("rtt_ms", [0.0, 25.0])
def test_ping_pong_measures_the_round_trip_it_was_given(echo_port: int, rtt_ms: float) -> None:
    with NetemProxy(echo_port, one_way_delay_s=rtt_ms / 2000) as proxy:
        median_ms = statistics.median(_round_trips(proxy.port, 15)) * 1000
    assert median_ms >= rtt_ms * 0.98  # a delay is never shorter than asked
    assert median_ms <= rtt_ms + 10.0  # and only scheduling noise longer


def test_bulk_transfer_runs_at_the_connection_cap(sink_port: int) -> None:
    rate = 16e6
    nbytes = 16 << 20
    with NetemProxy(sink_port, one_way_delay_s=0.005, rate_bps=rate) as proxy:
        elapsed = _push(proxy.port, nbytes)
        assert proxy.counters.bytes_up == nbytes
    ideal = nbytes / rate
    assert elapsed >= ideal * 0.97  # the cap holds (pacing cannot run early)
    assert elapsed <= ideal * 1.5  # and the link is used, give or take a loaded machine


def test_total_cap_is_shared_by_connections(sink_port: int) -> None:
    per_connection, total = 24e6, 16e6
    nbytes = 8 << 20
    with NetemProxy(sink_port, rate_bps=per_connection, total_rate_bps=total) as proxy:
        t0 = time.perf_counter()
        threads = [threading.Thread(target=_push, args=(proxy.port, nbytes)) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - t0
        assert proxy.counters.connections == 2
    ideal = 2 * nbytes / total  # two connections, each allowed 24 MB/s, share 16 MB/s
    assert elapsed >= ideal * 0.97
    assert elapsed <= ideal * 1.5
