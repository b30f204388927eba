"""Bounded streaming between the event loop and worker threads (request bodies in, objects out)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import queue
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from tierpilot.kit.flow import Flow

T = TypeVar("T")
BLOCK = 1 << 20  # bytes handed to a worker thread at a time
DEPTH = 4  # blocks in flight per request: memory per upload is bounded by DEPTH * BLOCK

Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

_executor: ThreadPoolExecutor | None = None


def executor() -> ThreadPoolExecutor:
    """Worker threads for blocking DB and tier work, shared by all requests of this process.

    A plain executor rather than anyio's thread runner: a hop costs about half as much, and a 1 GiB
    transfer makes a thousand of them.
    """
    global _executor
    if _executor is None:
        from tierpilot.kit.settings import get_settings

        _executor = ThreadPoolExecutor(get_settings().gateway_threads, thread_name_prefix="gateway-io")
    return _executor


async def run(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run blocking work in a worker thread."""
    return await asyncio.get_running_loop().run_in_executor(executor(), functools.partial(fn, *args, **kwargs))


class ClientDisconnected(Exception):
    """The client went away before its request body was complete."""


async def body_pieces(receive: Receive) -> AsyncIterator[bytes]:
    """A request body's pieces as they arrive, to its last message; ``ClientDisconnected`` if the client goes
    first."""
    more = True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnected("client disconnected")
        more = bool(message.get("more_body", False))
        body = message.get("body", b"")
        if body:
            yield body


class ReceiveTimeout(Exception):
    """The client sent nothing of its request body for the time-out."""


class IdleReceive:
    """An ASGI ``receive`` that gives up (``ReceiveTimeout``) after ``timeout_s`` without a message.

    One timer per time-out period, not one per call: a body arrives in thousands of messages, and the
    timer only checks, when it fires, whether the waiting call began more than ``timeout_s`` ago. Time
    spent between calls (a throttled flow, a slow tier) is the server's, not the client's, and not counted.
    """

    def __init__(self, receive: Receive, timeout_s: float) -> None:
        self._receive = receive
        self._timeout_s = timeout_s
        self._loop = asyncio.get_running_loop()
        self._waiter: asyncio.Task[Any] | None = None
        self._since = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._expired = False

    async def __call__(self) -> MutableMapping[str, Any]:
        if self._expired:
            raise ReceiveTimeout("no request body for the time-out")
        task = asyncio.current_task()
        self._since = self._loop.time()
        self._waiter = task
        if self._timer is None:
            self._timer = self._loop.call_at(self._since + self._timeout_s, self._check)
        try:
            return await self._receive()
        except asyncio.CancelledError:
            if self._expired and task is not None and task.uncancel() == 0:  # our cancel, and nobody else's
                raise ReceiveTimeout("no request body for the time-out") from None
            raise
        finally:
            self._waiter = None

    def _check(self) -> None:
        self._timer = None
        if self._waiter is None:
            return  # not waiting: the next call arms the timer again
        due = self._since + self._timeout_s
        if self._loop.time() >= due:
            self._expired = True
            self._waiter.cancel()
        else:
            self._timer = self._loop.call_at(due, self._check)

    def close(self) -> None:
        """Stop the timer (the request is over)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class Inbound:
    """A request body moved from the event loop to one worker thread in batches of ~1 MiB.

    ``pump`` (event loop) reads ASGI messages, accounts them with the flow and hands them over in
    batches (the pieces themselves, not a joined copy); at most DEPTH batches wait for the thread,
    then ``pump`` stops reading, which stops the server reading the socket: a slow tier slows the
    client instead of filling memory.
    """

    def __init__(self, receive: Receive, flow: Flow, block: int = BLOCK, depth: int = DEPTH) -> None:
        self._receive = receive
        self._flow = flow
        self._block = block
        self._queue: queue.SimpleQueue[list[bytes] | Exception | None] = queue.SimpleQueue()
        self._credit = asyncio.Semaphore(depth)
        self._loop = asyncio.get_running_loop()

    async def pump(self) -> None:
        try:
            parts: list[bytes] = []
            held = 0
            async for body in body_pieces(self._receive):
                await self._flow.consume(len(body))
                parts.append(body)
                held += len(body)
                if held >= self._block:
                    await self._credit.acquire()
                    self._queue.put(parts)
                    parts, held = [], 0
            if parts:
                await self._credit.acquire()
                self._queue.put(parts)
            self._queue.put(None)
        except Exception as exc:
            self._queue.put(exc)
        except BaseException:
            self._queue.put(ClientDisconnected("request cancelled"))
            raise

    def blocks(self) -> Iterator[bytes]:
        """The body's pieces, in a worker thread; raises what ended the body abnormally."""
        while True:
            item = self._queue.get()
            if item is None:
                return
            if isinstance(item, Exception):
                raise item
            self._loop.call_soon_threadsafe(self._credit.release)
            yield from item

    async def drive(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run ``fn`` (which reads ``blocks()``) in a worker thread while pumping the body to it."""
        task = asyncio.ensure_future(self.pump())
        try:
            return await run(fn, *args, **kwargs)
        finally:
            if not task.done():
                task.cancel()
            with contextlib.suppress(BaseException):
                await task


async def send_stream(send: Send, chunks: Iterator[bytes], flow: Flow, length: int, first: bytes | None = None
                      ) -> int:
    """Send ``length`` bytes of an object as they are read in a worker thread, one read ahead of the
    socket; an object that fits in ``first`` (read with the lookup) costs no further thread hop."""
    sent = 0

    def pull() -> bytes | None:
        return next(chunks, None)

    pending: asyncio.Future[bytes | None] | None = None
    try:
        chunk = first if first is not None else (await run(pull) if length else None)
        while chunk is not None:
            more = sent + len(chunk) < length
            if more:
                pending = asyncio.ensure_future(run(pull))
            if chunk:
                await flow.consume(len(chunk))
                await send({"type": "http.response.body", "body": chunk, "more_body": more})
                sent += len(chunk)
            if not more:
                break
            assert pending is not None
            chunk = await pending
            pending = None
        if sent < length:
            raise RuntimeError(f"the tier returned {sent} of {length} bytes")
        if sent == 0:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        return sent
    finally:
        if pending is not None:
            with contextlib.suppress(BaseException):
                await pending
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
