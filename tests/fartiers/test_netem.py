"""The delaying proxy gives the round trip and the rate it was asked for (tests/netem.py).

Its schedule (when each byte may leave, when a busy link's sender is paused and resumed) is checked on an injected
clock; through real sockets only what load cannot break is asserted: nothing arrives earlier than the delay and
the caps allow, and every byte arrives."""

from __future__ import annotations

import socket
import socketserver
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from tests.netem import SLACK, NetemProxy, Pacer, _Side


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


def test_bulk_transfer_runs_at_the_connection_cap(sink_port: int) -> None:
    rate = 16e6
    nbytes = 16 << 20
    with NetemProxy(sink_port, one_way_delay_s=0.005, rate_bps=rate) as proxy:
        elapsed = _push(proxy.port, nbytes)
        assert proxy.counters.bytes_up == nbytes
    assert elapsed >= nbytes / rate * 0.97  # the cap holds (pacing cannot run early)


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
    assert elapsed >= 2 * nbytes / total * 0.97  # two connections, each allowed 24 MB/s, share 16 MB/s


# the schedule, on an injected clock -------------------------------------------------------------------------


class _Loop:
    """The event loop as a side sees it: its clock, set by the test, and the calls it was asked to make."""

    def __init__(self) -> None:
        self.now = 100.0
        self.calls: list[tuple[float, Callable[..., Any], tuple[Any, ...]]] = []

    def time(self) -> float:
        return self.now

    def call_at(self, when: float, fn: Callable[..., Any], *args: Any) -> SimpleNamespace:
        self.calls.append((when, fn, args))
        return SimpleNamespace(cancel=lambda: None)


class _Transport:
    def __init__(self) -> None:
        self.reading = True

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True

    def set_write_buffer_limits(self, high: int) -> None:
        pass


def _side(loop: _Loop, rate: float | None, total: Pacer, delay: float = 0.0) -> tuple[_Side, _Transport]:
    proxy = SimpleNamespace(loop=loop, rate_bps=rate, total_up=total, total_down=Pacer(None), delay=delay,
                            counters=SimpleNamespace(bytes_up=0, bytes_down=0), sides=set())
    side = _Side(proxy, upstream=False)  # type: ignore[arg-type]
    transport = _Transport()
    side.connection_made(transport)  # type: ignore[arg-type]
    return side, transport


def test_a_pacer_books_bytes_at_its_rate_and_saves_no_credit_while_idle() -> None:
    pacer = Pacer(1e6)
    assert pacer.reserve(1000, 0.0) == pytest.approx(0.001)
    assert pacer.reserve(1000, 0.0) == pytest.approx(0.002)  # queued behind the first
    assert pacer.reserve(1000, 1.0) == pytest.approx(1.001)  # an idle link does not send faster afterwards
    assert Pacer(None).reserve(1 << 30, 5.0) == 5.0


def test_a_busy_link_pauses_its_sender_and_resumes_it_before_it_runs_dry() -> None:
    loop = _Loop()
    rate, delay, chunk = 16e6, 0.005, 1 << 18
    side, transport = _side(loop, rate, Pacer(None), delay)
    start = loop.now
    side.data_received(b"\0" * chunk)
    side.data_received(b"\0" * chunk)
    # each chunk leaves when the link has sent it, plus the delay: never earlier (the cap) and never later
    assert [due for due, _ in side.line] == pytest.approx([start + k * chunk / rate + delay for k in (1, 2)])
    assert not transport.reading  # booked more than SLACK ahead: the sender waits
    releases = [when for when, fn, args in loop.calls if args == ("link",)]
    assert releases[-1] == pytest.approx(start + 2 * chunk / rate - SLACK)  # resumed with SLACK still to send
    loop.now = releases[-1]
    side.release("link")
    assert transport.reading


def test_connections_share_the_total_cap_in_the_order_they_send() -> None:
    loop = _Loop()
    total = Pacer(16e6)
    first, _ = _side(loop, 24e6, total)
    second, _ = _side(loop, 24e6, total)
    chunk = 1 << 20
    first.data_received(b"\0" * chunk)
    second.data_received(b"\0" * chunk)
    # each connection alone would send its MiB in 1/24 s; together they take 2 MiB at 16 MB/s
    assert first.line[-1][0] == pytest.approx(loop.now + chunk / 16e6)
    assert second.line[-1][0] == pytest.approx(loop.now + 2 * chunk / 16e6)
