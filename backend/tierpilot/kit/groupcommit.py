"""Group commit: concurrent callers share one round of durability work (an fsync round, a transaction).

A caller hands in its item and blocks. If no round is running it leads one at once over everything queued;
otherwise it waits, and whoever queued while a round ran is served by the next round, led by the oldest of
them. Nobody waits for a timer: a lone caller pays one round as before, and under load a round takes every
item that arrived during the previous one, so the rounds per second stay about what one caller could do
while the items per round grow with the load. A caller is answered only after the round that holds its
item finished, so "answered" still means "done".

An event-loop caller (``submit_async``) never blocks and never leads: it queues its item with a future, and
the round that holds it is led by a waiting thread or, when none is, by a leader thread of this module. The
futures of one round are resolved with one ``call_soon_threadsafe`` per event loop, so a request waiting on a
round costs its loop no thread of its own and no wake-up of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Generic, TypeAlias, TypeVar, Union

T = TypeVar("T")
R = TypeVar("R")

# what a round gives back per item: its result, or the exception that item (or the whole round) raised
Outcome: TypeAlias = Union[R, BaseException]  # noqa: UP007  (a generic alias: subscripted below)


# leads rounds whose oldest item is an event-loop caller's (those callers cannot block)
_LEADERS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="groupcommit")


class _Slot(Generic[T, R]):
    __slots__ = ("item", "outcome", "lead", "ready", "future")

    def __init__(self, item: T, future: asyncio.Future[R] | None = None) -> None:
        self.item = item
        self.outcome: Outcome[R] | None = None
        self.lead = False  # woken to lead the next round rather than with an outcome
        self.future = future  # an event-loop caller's: resolved instead of ``ready``
        self.ready = threading.Event() if future is None else None


def _resolve(done: list[tuple[asyncio.Future[Any], Any]]) -> None:
    """On the event loop: hand each caller of a round its outcome (one callback for the whole round)."""
    for future, outcome in done:
        if future.cancelled():
            continue
        if isinstance(outcome, BaseException):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)


class GroupCommit(Generic[T, R]):
    """Runs ``run_round(items)`` for batches of concurrently submitted items (at most ``max_items`` each).

    ``run_round`` returns one outcome per item, in order; an exception it raises is every item's outcome.
    ``rounds`` and ``items`` count what was done (tests and benchmarks read the ratio).
    """

    def __init__(self, run_round: Callable[[Sequence[T]], Sequence[Outcome[R]]], max_items: int = 256) -> None:
        self._run_round = run_round
        self._max_items = max_items
        self._lock = threading.Lock()
        self._queue: list[_Slot[T, R]] = []
        self._leading = False
        self.rounds = 0
        self.items = 0

    def submit(self, item: T) -> R:
        """The item's result once its round is done (its exception re-raised)."""
        slot: _Slot[T, R] = _Slot(item)
        with self._lock:
            self._queue.append(slot)
            lead = not self._leading
            self._leading = True
        if not lead:
            assert slot.ready is not None
            slot.ready.wait()
            lead = slot.lead
        if lead and self._lead():  # this round holds our own item: we are the oldest queued
            _LEADERS.submit(self._lead_rounds)  # the next round's oldest item is an event-loop caller's
        outcome = slot.outcome
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome  # type: ignore[return-value]

    def submit_async(self, item: T) -> asyncio.Future[R]:
        """From an event loop: a future of the item's result, resolved once its round is done."""
        future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        slot: _Slot[T, R] = _Slot(item, future)
        with self._lock:
            self._queue.append(slot)
            lead = not self._leading
            self._leading = True
        if lead:
            _LEADERS.submit(self._lead_rounds)
        return future

    def _lead_rounds(self) -> None:
        """A leader thread's work: rounds until the lead passes to a waiting thread or nothing is queued."""
        while self._lead():
            pass

    def _lead(self) -> bool:
        """One round; then the lead goes to the oldest waiter. True: that is an event-loop caller's item,
        so the caller (a leader thread) leads the next round itself."""
        with self._lock:
            batch, self._queue = self._queue[: self._max_items], self._queue[self._max_items:]
            self.rounds += 1
            self.items += len(batch)
        try:
            outcomes: Sequence[Outcome[R]] = self._run_round([s.item for s in batch])
            if len(outcomes) != len(batch):
                raise RuntimeError(f"a round answered {len(outcomes)} outcomes for {len(batch)} items")
        except BaseException as exc:  # noqa: BLE001  (handed to every caller of the round, re-raised there)
            outcomes = [exc] * len(batch)
        loops: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], Any]]] = {}
        for s, outcome in zip(batch, outcomes, strict=True):
            s.outcome = outcome
            if s.future is not None:
                loops.setdefault(s.future.get_loop(), []).append((s.future, outcome))
            else:
                assert s.ready is not None
                s.ready.set()
        for loop, done in loops.items():
            with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits for these
                loop.call_soon_threadsafe(_resolve, done)
        with self._lock:
            if not self._queue:
                self._leading = False
                return False
            nxt = self._queue[0]
            if nxt.ready is None:  # an event-loop caller's item: whoever led this round leads the next
                return True
            nxt.lead = True  # hand the lead to the oldest waiter: its round starts after ours ended
            nxt.ready.set()
            return False
