"""Clocks that tests move instead of sleeping: a wall clock, a monotonic one with its ``sleep``, and an
event loop whose time passes only while every task waits."""

from __future__ import annotations

import asyncio
import selectors
import threading
from collections.abc import Coroutine
from datetime import datetime, timedelta
from typing import Any, TypeVar

T = TypeVar("T")


class WallClock:
    """A ``Callable[[], datetime]`` standing still until ``advance``."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kw: float) -> None:
        self.now += timedelta(**kw)


class Ticks:
    """A monotonic clock whose ``sleep`` moves it at once and records what was asked (thread-safe)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []
        self._lock = threading.Lock()

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.sleeps.append(seconds)
            self.now += seconds


class _JumpingSelector(selectors.DefaultSelector):
    """Polls without blocking; where the loop would block until its next timer, time jumps there."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        ready = super().select(0)
        if not ready and timeout:
            self.now += timeout
        return ready


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An event loop on virtual time: ``asyncio.sleep`` and ``loop.time()`` cost no wall time."""

    def __init__(self) -> None:
        self._jumping = _JumpingSelector()
        super().__init__(self._jumping)

    def time(self) -> float:
        return self._jumping.now


def run_in_virtual_time(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` to the end on a ``VirtualTimeLoop``."""
    with asyncio.Runner(loop_factory=VirtualTimeLoop) as runner:
        return runner.run(main)
