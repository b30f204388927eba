"""Group commit: callers that arrive while a round runs share the next one, each gets its own
outcome, and nobody is answered before the round holding its item ended. Rounds are held open with events,
so what shares a round is decided by the test, not by timing."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import pytest

from tierpilot.kit.groupcommit import GroupCommit, Outcome


class _Rounds:
    """A round function that records its batches and, for the first round, waits until released."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self.first_started = threading.Event()
        self.release_first = threading.Event()
        self.finished: list[int] = []  # items whose round has returned

    def __call__(self, items: Sequence[int]) -> list[Outcome[int]]:
        self.batches.append(list(items))
        if len(self.batches) == 1:
            self.first_started.set()
            assert self.release_first.wait(10)
        if -1 in items and len(items) > 1:
            raise OSError("the whole round failed")
        out: list[Outcome[int]] = [ValueError(f"bad {i}") if i < 0 else i * 10 for i in items]
        self.finished.extend(items)
        return out


def _wait_queued(group: GroupCommit[int, int], n: int) -> None:
    for _ in range(1000):
        with group._lock:
            if len(group._queue) == n:
                return
        threading.Event().wait(0.005)
    raise AssertionError(f"{n} items never queued")


def test_callers_arriving_during_a_round_share_the_next_one_and_each_gets_its_result() -> None:
    rounds = _Rounds()
    group: GroupCommit[int, int] = GroupCommit(rounds)
    answered: dict[int, tuple[int, list[int]]] = {}

    def call(i: int) -> None:
        answered[i] = (group.submit(i), list(rounds.finished))

    with ThreadPoolExecutor(10) as pool:
        first = pool.submit(call, 0)
        assert rounds.first_started.wait(10)
        later = [pool.submit(call, i) for i in range(1, 10)]
        _wait_queued(group, 9)
        rounds.release_first.set()
        for f in [first, *later]:
            f.result(10)
    assert rounds.batches == [[0], list(range(1, 10))]  # two rounds for ten callers
    assert (group.rounds, group.items) == (2, 10)
    for i, (result, finished_then) in answered.items():
        assert result == i * 10 and i in finished_then  # answered only after its own round returned


def test_one_items_error_is_only_its_callers_and_a_failed_round_fails_all_of_its_callers() -> None:
    rounds = _Rounds()
    rounds.release_first.set()
    group: GroupCommit[int, int] = GroupCommit(rounds)
    with pytest.raises(ValueError, match="bad -2"):
        group.submit(-2)
    assert group.submit(3) == 30

    gate = _Rounds()
    group2: GroupCommit[int, int] = GroupCommit(gate)
    with ThreadPoolExecutor(3) as pool:
        lead = pool.submit(group2.submit, 1)
        assert gate.first_started.wait(10)
        failing = [pool.submit(group2.submit, i) for i in (-1, 2)]
        _wait_queued(group2, 2)
        gate.release_first.set()
        assert lead.result(10) == 10
        for f in failing:
            with pytest.raises(OSError, match="whole round"):
                f.result(10)
    assert group2.submit(4) == 40  # a failed round leaves the group usable


def test_a_round_takes_at_most_max_items_and_the_rest_follow() -> None:
    rounds = _Rounds()
    group: GroupCommit[int, int] = GroupCommit(rounds, max_items=3)
    with ThreadPoolExecutor(8) as pool:
        first = pool.submit(group.submit, 0)
        assert rounds.first_started.wait(10)
        later = [pool.submit(group.submit, i) for i in range(1, 8)]
        _wait_queued(group, 7)
        rounds.release_first.set()
        assert [f.result(10) for f in [first, *later]] == [i * 10 for i in range(8)]
    assert [len(b) for b in rounds.batches] == [1, 3, 3, 1]
    assert sorted(i for b in rounds.batches for i in b) == list(range(8))


def test_event_loop_callers_share_rounds_with_threads_and_are_answered_after_their_round() -> None:
    """``submit_async`` queues beside blocking callers: a thread's round takes the loop's items that arrived
    during the round before, a leader thread leads when the oldest item is the loop's, errors stay per item."""
    rounds = _Rounds()
    group: GroupCommit[int, int] = GroupCommit(rounds)

    async def main() -> list[int | BaseException]:
        futures = [group.submit_async(1)]  # led by a leader thread: the loop never blocks
        assert await asyncio.to_thread(rounds.first_started.wait, 10)
        futures += [group.submit_async(i) for i in (2, -3)]
        with ThreadPoolExecutor(1) as pool:
            blocking = pool.submit(group.submit, 4)
            more = [group.submit_async(i) for i in (5, 6)]
            await asyncio.to_thread(_wait_queued, group, 5)
            assert not any(f.done() for f in futures)
            rounds.release_first.set()
            assert await asyncio.wrap_future(blocking) == 40
            return list(await asyncio.gather(*futures, *more, return_exceptions=True))

    results = asyncio.run(main())
    assert results[:2] == [10, 20] and isinstance(results[2], ValueError) and results[3:] == [50, 60]
    assert rounds.batches[0] == [1] and sorted(i for b in rounds.batches[1:] for i in b) == [-3, 2, 4, 5, 6]
    assert rounds.batches[1] == [2, -3, 4, 5, 6]  # everything queued during the first round shares the second
    assert (group.rounds, group.items) == (2, 6)
