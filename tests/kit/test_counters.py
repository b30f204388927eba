"""Shared counters on the suite's real Redis and database: windows on an injected clock, and parallel hits
each get their own count (what keeps parallel login attempts from sharing one allowance)."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.servers import free_port
from tierpilot.kit.counters import SharedCounters, Tally


class Clock:
    def __init__(self) -> None:
        self.now = 1_900_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["database", "redis"])
def counters(request: pytest.FixtureRequest, db: str) -> Iterator[tuple[SharedCounters, Clock]]:
    clock = Clock()
    url = None
    if request.param == "redis":
        import redis

        url = request.getfixturevalue("redis_url").rsplit("/", 1)[0] + "/14"
        redis.Redis.from_url(url).flushdb()
    counters = SharedCounters("test", url, clock=clock)
    assert counters.backend == request.param
    yield counters, clock
    if url:
        redis.Redis.from_url(url).flushdb()


def test_a_window_counts_its_hits_and_then_starts_over(counters: tuple[SharedCounters, Clock]) -> None:
    shared, clock = counters
    key = Tally("k", 60)
    start = clock.now
    seen = [shared.hit(key)[0] for _ in range(3)]
    assert [s.count for s in seen] == [1, 2, 3]
    assert seen[0].last is None and seen[2].last == pytest.approx(start)
    clock.now += 59.5
    assert shared.peek(key)[0].count == 3
    shared.refund(key)
    assert shared.peek(key)[0].count == 2
    clock.now += 0.5
    assert shared.peek(key)[0].count == 0
    again = shared.hit(key)[0]
    assert (again.count, again.started, again.last) == (1, pytest.approx(clock.now), None)
    shared.forget("k")
    assert shared.peek(key)[0].count == 0


def test_parallel_hits_each_get_their_own_count(counters: tuple[SharedCounters, Clock]) -> None:
    shared, _ = counters
    keys = (Tally("a", 60), Tally("b", 60))
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: shared.hit(*keys), range(24)))
    assert sorted(r[0].count for r in results) == list(range(1, 25))
    assert sorted(r[1].count for r in results) == list(range(1, 25))


def test_an_unreachable_redis_hands_the_counting_to_the_database(db: str) -> None:
    clock = Clock()
    shared = SharedCounters("test", f"redis://127.0.0.1:{free_port()}/0", clock=clock)
    assert shared.backend == "redis"
    assert shared.hit(Tally("x", 60))[0].count == 1
    assert shared.backend == "database"
    assert SharedCounters("test", None, clock=clock).peek(Tally("x", 60))[0].count == 1
