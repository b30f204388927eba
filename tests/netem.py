"""A delaying, rate-limiting TCP proxy on 127.0.0.1: a far link for tests and benchmarks.

This kernel has no ``tc netem``, so latency and bandwidth come from user space. Each direction of each
connection models a link: a chunk read at ``t`` finishes serialising at ``t' = max(t, link free) + n / rate``
(the connection's own cap and the proxy's total cap both pace it) and is delivered ``delay`` after that.
The reader waits until its chunk is serialised before reading the next one, so at most one
bandwidth-delay product is buffered per direction and TCP's flow control reaches the real sender.

Used by ``tests/fartiers`` and ``bench/far_tiers.py``::

    with NetemProxy(upstream_port, one_way_delay_s=0.0125, rate_bps=125e6) as proxy:
        ... connect to 127.0.0.1:proxy.port ...
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from dataclasses import dataclass, field

READ = 256 << 10  # bytes read from a socket at once
QUANTUM = 64 << 10  # bytes paced at once: finer than READ so a cap holds within a few ms


@dataclass
class Pacer:
    """A link's serialisation clock: when the bytes handed to it so far will have left."""

    rate_bps: float | None  # bytes per second; None = unlimited
    free_at: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reserve(self, n: int, now: float) -> float:
        """Queue ``n`` bytes at ``now``; the time their last byte leaves."""
        if self.rate_bps is None:
            return now
        with self.lock:
            self.free_at = max(now, self.free_at) + n / self.rate_bps
            return self.free_at


@dataclass
class Counters:
    connections: int = 0
    bytes_up: int = 0  # client to upstream
    bytes_down: int = 0  # upstream to client


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
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._thread = threading.Thread(target=self._loop.run_forever, name="netem", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> NetemProxy:
        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._accept, "127.0.0.1", 0, backlog=256), self._loop).result(10)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    def stop(self) -> None:
        if not self._thread.is_alive():
            return

        async def shutdown() -> None:
            if self._server is not None:
                self._server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def __enter__(self) -> NetemProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _accept(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.counters.connections += 1
        try:
            up_r, up_w = await asyncio.open_connection(*self.upstream)
        except OSError:
            client_w.close()
            self._tasks.discard(task)
            return
        try:
            await asyncio.gather(
                self._pipe(client_r, up_w, Pacer(self.rate_bps), self.total_up, "up"),
                self._pipe(up_r, client_w, Pacer(self.rate_bps), self.total_down, "down"),
            )
        except (OSError, asyncio.IncompleteReadError, asyncio.CancelledError):  # closed, or the proxy stops
            pass
        finally:
            for w in (client_w, up_w):
                w.close()
            self._tasks.discard(task)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, own: Pacer, total: Pacer,
                    direction: str) -> None:
        """One direction: pace each quantum through both links, deliver it ``delay`` later, in order."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[float, bytes] | None] = asyncio.Queue()

        async def deliver() -> None:
            while (item := await queue.get()) is not None:
                due, data = item
                wait = due - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                writer.write(data)
                await writer.drain()
            with contextlib.suppress(OSError):
                if writer.can_write_eof():
                    writer.write_eof()

        sender = loop.create_task(deliver())
        try:
            while data := await reader.read(READ):
                if direction == "up":
                    self.counters.bytes_up += len(data)
                else:
                    self.counters.bytes_down += len(data)
                for lo in range(0, len(data), QUANTUM):
                    piece = data[lo:lo + QUANTUM]
                    now = time.monotonic()
                    left = max(own.reserve(len(piece), now), total.reserve(len(piece), now))
                    queue.put_nowait((left + self.delay, piece))
                    if left - now > 0.001:  # the link is busy: stop reading, as a full TCP window would
                        await asyncio.sleep(left - now)
            queue.put_nowait(None)
            await sender
        finally:
            sender.cancel()


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
    proxy.stop()
    sys.exit(0)


if __name__ == "__main__":
    main()
