"""Backpressure: at most ``limit`` S3 requests in flight per gateway process; the next waits a bounded time.

Past what the process can serve, queueing without bound only moves the wait into every client's tail latency
(at 256 clients a 1 KiB PUT waited seconds). Here a request beyond ``limit`` waits in FIFO order for a slot at
most ``wait_s`` seconds and is then refused, to be answered S3 ``SlowDown`` (503 with ``Retry-After``), which
S3 clients retry with backoff. A freed slot passes straight to the oldest waiter, so a waiter is never
overtaken by a newcomer. Time is the event loop's (``loop.call_later``): tests run it on virtual time.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque

from tierpilot.gateway.errors import S3Error


class Admission:
    """Slots for one event loop's requests: ``await enter()`` (True = admitted) then ``leave()`` once."""

    def __init__(self, limit: int, wait_s: float) -> None:
        self.limit = limit
        self.wait_s = wait_s
        self.in_flight = 0
        self._waiters: deque[asyncio.Future[bool]] = deque()

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    def take(self) -> bool:
        """Take a free slot if there is one and nobody waits for it (``enter``'s path that never waits, without
        a coroutine); False: ``await enter()``."""
        if self.in_flight < self.limit and not self._waiters:
            self.in_flight += 1
            return True
        return False

    async def enter(self) -> bool:
        """Take a slot, waiting at most ``wait_s`` behind earlier waiters; False when none came in time."""
        if self.take():
            return True
        if self.wait_s <= 0:
            return False
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[bool] = loop.create_future()
        self._waiters.append(waiter)
        timer = loop.call_later(self.wait_s, self._expire, waiter)
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled() and waiter.result():
                self.leave()  # handed a slot just as the request was cancelled: pass it on
            elif waiter in self._waiters:
                self._waiters.remove(waiter)
            raise
        finally:
            timer.cancel()

    def leave(self) -> None:
        """Give the slot back: to the oldest waiter, or to the pool."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(True)  # the slot changes hands: in_flight stays
                return
        self.in_flight -= 1

    def _expire(self, waiter: asyncio.Future[bool]) -> None:
        if not waiter.done():
            self._waiters.remove(waiter)
            waiter.set_result(False)


def slow_down(retry_after_s: float) -> S3Error:
    """S3's answer to a request rate it cannot take now; ``Retry-After`` in whole seconds (at least 1)."""
    err = S3Error("SlowDown", "Please reduce your request rate.", 503)
    err.headers.append((b"retry-after", str(max(1, math.ceil(retry_after_s))).encode()))
    return err
