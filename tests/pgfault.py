"""A PostgreSQL wire-protocol proxy that cuts a connection at its COMMIT, as a crash, a fail-over or a network cut
at that moment would: before the COMMIT reaches the server (nothing committed) or after the server answered it
(committed, the answer lost). Everything else passes through unchanged.

The proxy answers the client's SSLRequest itself with "no" (so the stream stays readable whatever the server
offers) and reads the client's messages: a simple query or a Parse whose text is ``COMMIT`` is a commit.
"""

from __future__ import annotations

import asyncio
import struct
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

from tests.servers import free_port

Mode = Literal["before", "after"]
_SSL_REQUEST, _GSS_REQUEST = 80877103, 80877104


def _statement(kind: bytes, body: bytes, prepared: dict[bytes, bytes]) -> bytes:
    """The SQL text, upper-cased, of a simple query, a Parse (remembered by its name in ``prepared``) or a Bind of
    a statement parsed before (psycopg prepares statements it runs often); empty for other messages."""
    if kind == b"Q":
        text = body.split(b"\0", 1)[0]
    elif kind == b"P":
        name, _, rest = body.partition(b"\0")
        text = prepared[name] = rest.split(b"\0", 1)[0]  # the unnamed statement too: a Bind of b"" runs it
    elif kind == b"B":
        parts = body.split(b"\0", 2)
        text = prepared.get(parts[1], b"") if len(parts) > 1 else b""
    else:
        return b""
    return text.strip().rstrip(b";").strip().upper()


_COMMITS = (b"COMMIT", b"END", b"COMMIT TRANSACTION")
_WRITES = (b"INSERT", b"UPDATE", b"DELETE", b"WITH")


class CommitCutter:
    """``arm(mode)`` makes the next COMMIT of a transaction that wrote to ``table`` (on any connection) the cut
    one; ``cuts`` counts those made by mode, ``commits`` every COMMIT seen."""

    def __init__(self, upstream_port: int, upstream_host: str = "127.0.0.1", table: str = "objects") -> None:
        self.table = table.upper().encode()
        self.upstream = (upstream_host, upstream_port)
        self.port = free_port()
        self.cuts: Counter[str] = Counter()
        self.commits = 0
        self._armed: Mode | None = None
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="pgfault", daemon=True)
        self._server: asyncio.Server | None = None

    def start(self) -> None:
        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._handle, "127.0.0.1", self.port), self._loop).result(30)

    def stop(self) -> None:
        async def close() -> None:
            assert self._server is not None
            self._server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)

    def arm(self, mode: Mode) -> None:
        with self._lock:
            self._armed = mode

    @property
    def armed(self) -> bool:
        with self._lock:
            return self._armed is not None

    def _take(self, wrote: bool) -> Mode | None:
        with self._lock:
            self.commits += 1
            if not wrote:
                return None
            mode, self._armed = self._armed, None
            if mode is not None:
                self.cuts[mode] += 1
            return mode

    async def _handle(self, creader: asyncio.StreamReader, cwriter: asyncio.StreamWriter) -> None:
        try:
            sreader, swriter = await asyncio.open_connection(*self.upstream)
        except OSError:
            cwriter.close()
            return
        withhold = asyncio.Event()  # the COMMIT went up: its answer is dropped and both sides closed

        def cut() -> None:
            cwriter.transport.abort()
            swriter.transport.abort()

        async def up() -> None:
            # start-up: length-prefixed messages without a type byte; an SSL or GSS request is refused here
            while True:
                head = await creader.readexactly(8)
                length, code = struct.unpack("!ii", head)
                rest = await creader.readexactly(length - 8)
                if code in (_SSL_REQUEST, _GSS_REQUEST):
                    cwriter.write(b"N")
                    await cwriter.drain()
                    continue
                swriter.write(head + rest)
                await swriter.drain()
                break
            wrote = False
            prepared: dict[bytes, bytes] = {}
            while True:
                kind = await creader.readexactly(1)
                (length,) = struct.unpack("!i", await creader.readexactly(4))
                body = await creader.readexactly(length - 4)
                statement = _statement(kind, body, prepared)
                mode = None
                if statement in _COMMITS:
                    mode, wrote = self._take(wrote), False
                elif kind != b"P" and statement.startswith(_WRITES) and self.table in statement:
                    wrote = True
                elif statement.startswith(b"ROLLBACK"):
                    wrote = False
                if mode == "before":
                    cut()
                    return
                swriter.write(kind + struct.pack("!i", length) + body)
                await swriter.drain()
                if mode == "after":
                    withhold.set()

        async def down() -> None:
            while True:
                data = await sreader.read(65536)
                if not data:
                    cwriter.close()
                    return
                if withhold.is_set():  # the server answered the COMMIT: nobody hears it
                    cut()
                    return
                cwriter.write(data)
                await cwriter.drain()

        tasks = [asyncio.ensure_future(up()), asyncio.ensure_future(down())]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            pass
        finally:
            for task in tasks:
                task.cancel()
            for w in (cwriter, swriter):
                w.transport.abort()


@contextmanager
def commit_cutter(upstream_port: int, upstream_host: str = "127.0.0.1", table: str = "objects"
                  ) -> Iterator[CommitCutter]:
    cutter = CommitCutter(upstream_port, upstream_host, table)
    cutter.start()
    try:
        yield cutter
    finally:
        cutter.stop()
