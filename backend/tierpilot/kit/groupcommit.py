"""Group commit: concurrent callers share one round of durability work (an fsync round, a transaction).

A caller hands in its item and blocks. If no round is running it leads one at once over everything queued;
otherwise it waits, and whoever queued while a round ran is served by the next round, led by the oldest of
them. Nobody waits for a timer: a lone caller pays one round as before, and under load a round takes every
item that arrived during the previous one, so the rounds per second stay about what one caller could do
while the items per round grow with the load. A caller is answered only after the round that holds its
item finished, so "answered" still means "done".
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeAlias, TypeVar, Union

T = TypeVar("T")
R = TypeVar("R")

# what a round gives back per item: its result, or the exception that item (or the whole round) raised
Outcome: TypeAlias = Union[R, BaseException]  # noqa: UP007  (a generic alias: subscripted below)


class _Slot(Generic[T, R]):
    __slots__ = ("item", "outcome", "lead", "ready")

    def __init__(self, item: T) -> None:
        self.item = item
        self.outcome: Outcome[R] | None = None
        self.lead = False  # woken to lead the next round rather than with an outcome
        self.ready = threading.Event()


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
            slot.ready.wait()
            lead = slot.lead
        if lead:  # this round holds our own item: we are the oldest queued
            self._lead()
        outcome = slot.outcome
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome  # type: ignore[return-value]

    def _lead(self) -> None:
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
        for s, outcome in zip(batch, outcomes, strict=True):
            s.outcome = outcome
            s.ready.set()
        with self._lock:
            if self._queue:  # hand the lead to the oldest waiter: its round starts after ours ended
                nxt = self._queue[0]
                nxt.lead = True
                nxt.ready.set()
            else:
                self._leading = False
