"""A delaying, rate-limiting TCP proxy on 127.0.0.1: a far link for tests and benchmarks.

This kernel has no ``tc netem``, so latency and bandwidth come from user space. Each direction of each
connection models a link: bytes received at ``t`` finish serialising at ``t' = max(t, link free) + n / rate``
(the connection's own cap and the proxy's total cap both pace them) and are delivered ``delay`` after that,
in order. While a link is busy further ahead than ``SLACK`` the proxy stops reading that side, as a full TCP
window would, so at most one bandwidth-delay product is buffered per direction and TCP's flow control reaches
the real sender; it also stops reading while the receiving side's socket buffer is full.

Built on asyncio protocols (uvloop when installed) with one timer per direction, not a coroutine and a sleep
per chunk: the proxy's own CPU per byte stays small next to the processes it sits between (a Python stream
copy loop here carried ~72 MB/s, under the 1 Gbit/s link it was asked to model).

Used by ``tests/fartiers`` and ``bench/far_tiers.py``::

    with NetemProxy(upstream_port, one_way_delay_s=0.0125, rate_bps=125e6) as proxy:
        ... connect to 127.0.0.1:proxy.port ...
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from dataclasses import dataclass
from typing import cast


def _new_loop() -> asyncio.AbstractEventLoop:
    """uvloop's loop when installed (uvicorn[standard] brings it): about twice the bytes per CPU second."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


SLACK = 0.005  # seconds a link may be booked ahead before its sender is paused (and still is when resumed)


@dataclass
class Pacer:
    """A link's serialisation clock: when the bytes handed to it so far will have left (event-loop time)."""

    rate_bps: float | None  # bytes per second; None = unlimited
    free_at: float = 0.0

    def reserve(self, n: int, now: float) -> float:
        """Queue ``n`` bytes at ``now``; the time their last byte leaves."""
        if self.rate_bps is None:
            return now
        self.free_at = max(now, self.free_at) + n / self.rate_bps
        return self.free_at


@dataclass
class Counters:
    connections: int = 0
    bytes_up: int = 0  # client to upstream
    bytes_down: int = 0  # upstream to client


class _Side(asyncio.Protocol):
    """One socket of a proxied connection: what it receives is paced, delayed and written to ``peer``."""

    def __init__(self, proxy: NetemProxy, upstream: bool) -> None:
        self.proxy = proxy
        self.upstream = upstream  # this socket is the upstream server's (it receives the "down" direction)
        self.loop = proxy.loop
        self.own = Pacer(proxy.rate_bps)
        self.total = proxy.total_down if upstream else proxy.total_up
        self.transport: asyncio.Transport | None = None
        self.peer: _Side | None = None
        self.line: deque[tuple[float, bytes | None]] = deque()  # (due, data); None: end of stream
        self.timer: asyncio.TimerHandle | None = None
        self.holds: set[str] = set()  # why reading is paused: "link", "peer" (its buffer is full), "connect"
        self.eof_delivered = False  # this side's end of stream reached the peer
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # a TCP transport (uvloop's is not a subclass)
        self.transport.set_write_buffer_limits(high=1 << 20)  # fewer pause/resume rounds than 64 KiB's
        if self.holds:
            self.transport.pause_reading()
        self.proxy.sides.add(self)

    def hold(self, why: str) -> None:
        if not self.holds and self.transport is not None and not self.closed:
            self.transport.pause_reading()
        self.holds.add(why)

    def release(self, why: str) -> None:
        if why in self.holds:
            self.holds.discard(why)
            if not self.holds and self.transport is not None and not self.closed:
                self.transport.resume_reading()

    def data_received(self, data: bytes) -> None:
        if self.upstream:
            self.proxy.counters.bytes_down += len(data)
        else:
            self.proxy.counters.bytes_up += len(data)
        now = self.loop.time()
        left = max(self.own.reserve(len(data), now), self.total.reserve(len(data), now))
        self._enqueue(left + self.proxy.delay, data)
        if left - now > SLACK:  # the link is busy: stop reading until it has little left to send
            self.hold("link")
            self.loop.call_at(left - SLACK, self.release, "link")  # it still has SLACK to send: never idle

    def eof_received(self) -> bool:
        now = self.loop.time()
        self._enqueue(max(now, self.own.free_at, self.total.free_at) + self.proxy.delay, None)
        return True  # keep the socket open for the other direction

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.proxy.sides.discard(self)
        if not self.line and self.peer is not None:
            self.peer.close()

    def close(self) -> None:
        if self.transport is not None and not self.closed:
            self.transport.close()

    def _enqueue(self, due: float, data: bytes | None) -> None:
        self.line.append((due, data))
        if self.timer is None:
            self.deliver()

    def deliver(self) -> None:
        """Write to the peer what is due; then wait for the next item, or pass the end on."""
        self.timer = None
        peer = self.peer
        if peer is None or peer.transport is None:  # not connected yet: the connect delivers
            return
        now = self.loop.time()
        out: list[bytes] = []
        while self.line and self.line[0][0] <= now:
            data = self.line.popleft()[1]
            if data is not None:
                out.append(data)
                continue
            if out and not peer.closed:
                peer.transport.writelines(out)
                out = []
            self.eof_delivered = True
            if peer.closed or not peer.transport.can_write_eof():
                peer.close()
            else:
                peer.transport.write_eof()
            if peer.eof_delivered:  # both directions ended
                peer.close()
                self.close()
        if out and not peer.closed:
            peer.transport.writelines(out)
        if self.line:
            self.timer = self.loop.call_at(self.line[0][0], self.deliver)
        elif self.closed:
            peer.close()

    def pause_writing(self) -> None:  # this socket's send buffer is full: stop reading what feeds it
        if self.peer is not None:
            self.peer.hold("peer")

    def resume_writing(self) -> None:
        if self.peer is not None:
            self.peer.release("peer")


class NetemProxy:
    """``127.0.0.1:port`` → ``upstream_host:upstream_port`` with one-way delay and bandwidth caps.

    ``one_way_delay_s`` applies to each direction (12.5 ms each way is a 25 ms round trip);
    ``rate_bps`` caps each direction of each connection and ``total_rate_bps`` each direction of all
    connections together (bytes per second; 1 Gbit/s = 125e6). Runs its own event loop in a thread;
    ``stop()`` (or leaving the ``with``) closes every connection.
    """

    def __init__(self, upstream_port: int, *, upstream_host: str = "127.0.0.1", one_way_delay_s: float = 0.0,
                 rate_bps: float | None = None, total_rate_bps: float | None = None) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.delay = one_way_delay_s
        self.rate_bps = rate_bps
        self.total_up = Pacer(total_rate_bps)
        self.total_down = Pacer(total_rate_bps)
        self.counters = Counters()
        self.port = 0
        self.loop = _new_loop()
        self.sides: set[_Side] = set()
        self._server: asyncio.AbstractServer | None = None
        self._thread = threading.Thread(target=self.loop.run_forever, name="netem", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> NetemProxy:
        self._thread.start()
        server = asyncio.run_coroutine_threadsafe(
            self.loop.create_server(self._accept, "127.0.0.1", 0, backlog=256), self.loop).result(10)
        self._server = server
        self.port = int(server.sockets[0].getsockname()[1])
        return self

    def stop(self) -> None:
        if not self._thread.is_alive():
            return

        async def shutdown() -> None:
            if self._server is not None:
                self._server.close()
            for side in list(self.sides):
                if side.transport is not None:
                    side.transport.abort()

        asyncio.run_coroutine_threadsafe(shutdown(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()

    def __enter__(self) -> NetemProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _accept(self) -> _Side:
        """A client connected: hold its bytes until the upstream connection is made."""
        self.counters.connections += 1
        client = _Side(self, upstream=False)
        client.hold("connect")
        self.loop.create_task(self._connect(client))
        return client

    async def _connect(self, client: _Side) -> None:
        try:
            _, server = await self.loop.create_connection(lambda: _Side(self, upstream=True), *self.upstream)
        except OSError:
            if client.transport is not None:
                client.transport.close()
            return
        client.peer, server.peer = server, client
        if client.closed and not client.line:
            server.close()
            return
        client.release("connect")
        if client.line:
            client.deliver()


def main() -> None:
    """``python -m tests.netem UPSTREAM_PORT --delay-ms 12.5 --rate-mbit 1000``: prints the port, runs until killed
    (benchmarks run it in its own process, away from the client's and the server's interpreters)."""
    import argparse
    import signal
    import sys

    parser = argparse.ArgumentParser()
    parser.add_argument("upstream_port", type=int)
    parser.add_argument("--delay-ms", type=float, default=0.0, help="one-way delay per direction")
    parser.add_argument("--rate-mbit", type=float, default=0.0, help="cap per connection and direction (0: none)")
    parser.add_argument("--total-mbit", type=float, default=0.0, help="cap of all connections (0: none)")
    args = parser.parse_args()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})  # before the proxy's thread starts
    proxy = NetemProxy(args.upstream_port, one_way_delay_s=args.delay_ms / 1000,
                       rate_bps=args.rate_mbit * 125_000 or None, total_rate_bps=args.total_mbit * 125_000 or None)
    proxy.start()
    print(proxy.port, flush=True)
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    with contextlib.suppress(RuntimeError):
        proxy.stop()
    sys.exit(0)


if __name__ == "__main__":
    main()
