"""The one rate limiter: its buckets simulated in virtual time, the Lua script against the in-memory
buckets, buckets shared through a real Redis by several processes, the local fall-back, and the
blocking throttle. Every rate here is measured on a clock the test moves; wall-time rates are
bench/reservations.py's and bench/lifecycle.py's."""

from __future__ import annotations

import asyncio
import heapq
import threading
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.clocks import Ticks, run_in_virtual_time
from tests.servers import free_port
from tierpilot.kit.limiter import (
    MIN_LEASE,
    THROTTLE_BURST,
    Lease,
    MemoryBackend,
    RedisBackend,
    Scheduler,
    SharedBuckets,
    Throttle,
    lease_size,
    shared_throttle,
)

MB = 1_000_000
MiB = 1 << 20


def simulate(capacity: int, classes: dict[str, int], demand: dict[str, float | None], seconds: float,
             chunk: int = 1 << 20, stalls: dict[str, tuple[float, float]] | None = None) -> dict[str, int]:
    """Greedy (None) or capped (bytes/s) clients of each class leasing from one MemoryBackend in
    virtual time, optionally stalled (not asking) during a span; returns bytes granted per class."""
    clock = Ticks()
    backend = MemoryBackend(clock)
    got = dict.fromkeys(classes, 0)
    events = [(0.0, i, name) for i, name in enumerate(classes)]
    heapq.heapify(events)
    while events:
        t, i, name = heapq.heappop(events)
        if t >= seconds:
            continue
        clock.now = t
        stall = (stalls or {}).get(name)
        if stall and stall[0] <= t < stall[1]:
            heapq.heappush(events, (stall[1], i, name))
            continue
        rate = classes[name]
        want = min(lease_size(rate or capacity // 100), chunk)
        req = Lease("read", name, rate, capacity, want)
        grant = backend.lease_now(Lease("read", name, rate, capacity, min(want, req.class_burst)))
        if grant.granted:
            got[name] += grant.granted
            cap = demand.get(name)
            # a capped client comes back when its own pace allows; a greedy one at once
            delay = grant.granted / cap if cap else 1e-4
        else:
            delay = min(0.05, max(0.0005, grant.wait_s))
        heapq.heappush(events, (t + delay, i, name))
    return got


def test_every_greedy_reservation_gets_its_rate_and_best_effort_the_remainder():
    capacity = 300 * MB
    booked = {"r5": 90 * MB, "r4": 72 * MB, "r3": 54 * MB, "r2": 36 * MB, "r1": 18 * MB}
    classes = {**booked, "best-effort": capacity - sum(booked.values())}
    got = simulate(capacity, classes, {}, seconds=20)
    for name, rate in classes.items():
        assert got[name] / 20 >= 0.99 * rate, (name, got[name] / 20 / MB)
    assert sum(got.values()) / 20 <= capacity * 1.01


def test_unused_capacity_is_shared():
    capacity = 300 * MB
    # the 200 MB/s reservation only uses 50: the other 150 goes to whoever wants more
    classes = {"big": 200 * MB, "small": 40 * MB, "best-effort": 60 * MB}
    got = simulate(capacity, classes, {"big": 50 * MB}, seconds=10)
    assert got["big"] / 10 == pytest.approx(50 * MB, rel=0.02)
    assert got["small"] / 10 >= 40 * MB
    assert got["best-effort"] / 10 >= 0.99 * 60 * MB
    assert sum(got.values()) / 10 >= 0.97 * capacity
    assert sum(got.values()) / 10 <= 1.01 * capacity


def test_best_effort_alone_gets_the_whole_pool():
    got = simulate(300 * MB, {"best-effort": 30 * MB, "idle": 270 * MB}, {"idle": 1.0}, seconds=10)
    assert got["best-effort"] / 10 >= 0.97 * 300 * MB


def test_a_stalled_class_catching_up_cannot_spend_capacity_already_given_away():
    """While a reservation stalls, best-effort takes its share as spare; when it comes back, its saved
    tokens would move more than the capacity: it catches up only as far as the pool's debt allows."""
    capacity = 300 * MB
    classes = {"r": 270 * MB, "best-effort": 30 * MB}
    seconds = 10
    got = simulate(capacity, classes, {}, seconds, stalls={"r": (3.0, 3.4)})
    # the stall left 108 MB unused; best-effort took them, so at most 0.1 s of capacity may be caught up
    assert sum(got.values()) <= capacity * (seconds + 0.1) + (4 << 20)
    # without the stall it gets its rate; with it, it loses at most the stall
    assert got["r"] >= 270 * MB * (seconds - 0.4) * 0.99
    assert got["best-effort"] >= 30 * MB * seconds


def test_saved_tokens_catch_up_when_nobody_took_them():
    capacity = 300 * MB
    classes = {"r": 100 * MB, "best-effort": 200 * MB}
    # best-effort only wants 50, so the pool keeps what r leaves unused while it stalls
    got = simulate(capacity, classes, {"best-effort": 50 * MB}, 10, stalls={"r": (3.0, 3.3)})
    assert got["r"] >= 100 * MB * 10 * 0.99


rates = st.integers(1, 120).map(lambda r: r * MB)


@settings(max_examples=40, deadline=None)
@given(st.lists(rates, min_size=1, max_size=6), st.lists(st.none() | st.integers(1, 200).map(float), max_size=6),
       st.integers(0, 40))
def test_greedy_classes_get_their_rate_and_the_total_stays_within_capacity(booked, demand_spec, unbookable_pct):
    capacity = 400 * MB
    bookable = capacity * (100 - unbookable_pct) // 100
    while sum(booked) > bookable:
        booked.pop()
    classes = {f"r{i}": r for i, r in enumerate(booked)}
    classes["best-effort"] = capacity - sum(booked)
    demand = {name: (d * MB if d else None) for name, d in zip(classes, demand_spec, strict=False)}
    seconds = 5
    got = simulate(capacity, classes, demand, seconds)
    # bursts saved while idle (and a first lease) are the only way above capacity
    slack = sum(Lease("read", k, r, capacity, 0).class_burst for k, r in classes.items())
    assert sum(got.values()) <= capacity * seconds + slack
    for name, rate in classes.items():
        wanted = demand.get(name)
        floor = min(rate, wanted) if wanted else rate
        assert got[name] >= floor * seconds * 0.97 - (1 << 20), (name, got[name] / seconds / MB, floor / MB)


# ---------------------------------------------------------------- the Lua script and Redis


def _scope() -> str:
    return f"test-{uuid.uuid4().hex[:8]}"


def test_the_lua_script_answers_as_the_in_memory_buckets(redis_url: str):
    """One sequence of leases against Redis and against MemoryBackend: the same grants, the same waits.
    Rates are chosen so that the little time Redis' clock moves between calls decides nothing."""
    import redis.asyncio as aioredis

    tiny, huge = 1000, 10**13
    g, c, d = _scope(), _scope(), _scope()
    steps = [
        Lease(g, "r", tiny, 2 * tiny, MiB),  # new buckets hold one lease: guaranteed
        Lease(g, "r", tiny, 2 * tiny, MiB),  # both empty: wait (at most 1 s)
        Lease(g, "idle", tiny, 2 * tiny, MiB),  # a class's saved tokens, the pool's debt within bounds
        Lease(c, "r", tiny, huge, MiB),  # guaranteed
        Lease(c, "r", tiny, huge, MiB),  # the class is empty, the pool refilled: spare
        Lease(d, "a", tiny, 10 * MB, 4 * MiB),  # guaranteed
        Lease(d, "b", tiny, 10 * MB, 4 * MiB),  # a class's saved tokens: the pool's debt 4 MiB
        Lease(d, "c", tiny, 10 * MB, 4 * MiB),  # again: the pool's debt 8 MiB, its bound
        Lease(d, "e", tiny, 10 * MB, 4 * MiB),  # saved tokens, but the pool's debt would pass its bound: wait
    ]

    async def on_redis() -> list[tuple[int, int, float]]:
        client = aioredis.Redis.from_url(redis_url)
        backend = RedisBackend(client)
        try:
            return [(gr.guaranteed, gr.spare, gr.wait_s) for gr in [await backend.lease(s) for s in steps]]
        finally:
            await client.aclose()

    clock = Ticks()
    memory = MemoryBackend(clock)
    expected = []
    for step in steps:
        clock.sleep(0.001)
        grant = memory.lease_now(step)
        expected.append((grant.guaranteed, grant.spare, grant.wait_s))
    got = asyncio.run(on_redis())
    assert [(gr, sp) for gr, sp, _ in got] == [(gr, sp) for gr, sp, _ in expected] == [
        (MiB, 0), (0, 0), (MiB, 0), (MiB, 0), (0, MiB), (4 * MiB, 0), (4 * MiB, 0), (4 * MiB, 0), (0, 0)]
    assert [w for _, _, w in got] == pytest.approx([w for _, _, w in expected], abs=0.05)
    assert expected[1][2] == 1.0 and 0.3 < expected[8][2] < 0.5


def test_processes_share_one_bucket_through_redis_and_count_each_other(redis_url: str):
    scope, processes_key = _scope(), f"tp:test-processes:{uuid.uuid4().hex[:8]}"
    lease = Lease(scope, "r", 1000, 2000, MiB)

    async def main() -> tuple[list[int], list[int]]:
        first, second = (SharedBuckets(redis_url, processes_key=processes_key) for _ in range(2))
        try:
            granted = [(await first.lease(lease)).granted, (await second.lease(lease)).granted]
            for b in (first, second):
                await b.heartbeat()
            await first.heartbeat()
            return granted, [first.status.processes, second.status.processes]
        finally:
            await first.close()
            await second.close()

    granted, processes = asyncio.run(main())
    # the first process emptied the bucket the second one asks: in memory each would have had a lease
    assert granted == [MiB, 0]
    assert processes == [2, 2]


async def greedy(scheduler: Scheduler, klass: str, rate: int, stop: float, counter: dict[str, int],
                 chunk: int = 256 * 1024) -> None:
    loop = asyncio.get_running_loop()
    while loop.time() < stop:
        await scheduler.pay("read", chunk, lambda: (klass, rate))
        counter[klass] = counter.get(klass, 0) + chunk


def test_unreachable_redis_falls_back_to_per_process_limits():
    async def main() -> tuple[int, float, str, str]:
        loop = asyncio.get_running_loop()
        shared = SharedBuckets(f"redis://127.0.0.1:{free_port()}/0", clock=loop.time)
        scheduler = Scheduler(shared, lambda _d: 100 * MB)
        counter: dict[str, int] = {}
        started = loop.time()
        await asyncio.gather(*(greedy(scheduler, "r", 20 * MB, started + 3.0, counter) for _ in range(3)))
        elapsed = loop.time() - started
        await shared.heartbeat()
        status = shared.status
        await shared.close()
        return counter["r"], elapsed, status.mode, status.redis

    moved, elapsed, mode, redis_state = run_in_virtual_time(main())
    assert mode == "local" and redis_state.startswith("error:")
    # the reservation still gets its rate (in this process), and no more than the pool
    assert moved / elapsed >= 20 * MB
    assert moved <= 100 * MB * elapsed + Lease("read", "r", 20 * MB, 100 * MB, 0).pool_burst


def test_buffers_of_ended_classes_are_forgotten():
    async def main() -> set[tuple[str, str]]:
        scheduler = Scheduler(MemoryBackend(), lambda _d: 100 * MB)
        for klass in ("rsv_a", "rsv_b", "best-effort"):
            await scheduler.pay("read", 1000, lambda k=klass: (k, 10 * MB))
        scheduler.forget({"rsv_b", "best-effort"})
        return set(scheduler.buffers())

    assert asyncio.run(main()) == {("read", "rsv_b"), ("read", "best-effort")}


# ---------------------------------------------------------------- the blocking throttle


def test_a_throttle_passes_bytes_at_its_rate_on_its_clock():
    ticks = Ticks()
    throttle = Throttle(10 * MB, clock=ticks, sleep=ticks.sleep)
    chunks = [b"x" * MiB] * 50
    assert b"".join(throttle.throttle(iter(chunks))) == b"".join(chunks)
    total = 50 * MiB
    burst = Lease("throttle", "all", 10 * MB, 10 * MB, 0, THROTTLE_BURST).class_burst
    # ahead of the rate by at most its burst, and never slower than it
    assert (total - burst) / (10 * MB) <= ticks.now <= total / (10 * MB)
    assert throttle.account.waited_s == pytest.approx(ticks.now)


def test_threads_share_one_throttle():
    ticks = Ticks()
    throttle = Throttle(10 * MB, clock=ticks, sleep=ticks.sleep)

    def copy() -> None:
        for _ in range(10):
            throttle.acquire(MiB)

    threads = [threading.Thread(target=copy) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert ticks.now >= (40 * MiB - THROTTLE_BURST.class_s * 10 * MB) / (10 * MB)


def test_a_zero_rate_never_waits():
    ticks = Ticks()
    throttle = Throttle(0, clock=ticks, sleep=ticks.sleep)
    assert not throttle.limited
    assert [throttle.acquire(64 * MiB) for _ in range(10)] == [0.0] * 10
    assert ticks.sleeps == []


class Told(Exception):
    """Raised by a sleep that only records that the throttle wanted to wait."""


def test_throttles_of_two_processes_share_one_budget_through_redis(redis_url: str):
    scope = _scope()
    first, second = Ticks(), []

    def told_to_wait(seconds: float) -> None:
        second.append(seconds)
        raise Told

    a = Throttle(1000, scope, redis_url, clock=first, sleep=first.sleep)
    b = Throttle(1000, scope, redis_url, sleep=told_to_wait)
    assert a.acquire(MIN_LEASE) == 0.0  # a new budget holds one lease
    with pytest.raises(Told):
        b.acquire(MIN_LEASE)  # the other process spent it: wait
    assert second and second[0] > 0
    assert a.buckets.status.mode == b.buckets.status.mode == "redis"


def test_a_throttle_without_redis_keeps_pacing_locally():
    ticks = Ticks()
    throttle = Throttle(10 * MB, redis_url=f"redis://127.0.0.1:{free_port()}/0", clock=ticks, sleep=ticks.sleep)
    for _ in range(20):
        throttle.acquire(MiB)
    assert throttle.buckets.status.mode == "local" and throttle.buckets.status.redis.startswith("error:")
    assert ticks.now >= (20 * MiB - THROTTLE_BURST.class_s * 10 * MB) / (10 * MB)


def test_the_shared_throttle_is_rebuilt_when_its_rate_changes():
    scope = _scope()
    first = shared_throttle(scope, 5 * MB)
    assert shared_throttle(scope, 5 * MB) is first
    assert shared_throttle(scope, 7 * MB) is not first and shared_throttle(scope, 7 * MB).rate_bps == 7 * MB
