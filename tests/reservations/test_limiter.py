"""The token-bucket scheduler: a deterministic simulation of the in-memory buckets, and the same
buckets shared through a real Redis by several schedulers (as several gateway processes)."""

from __future__ import annotations

import asyncio
import heapq
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tierpilot.reservations.limiter import (
    Lease,
    MemoryBackend,
    Scheduler,
    SharedBuckets,
    lease_size,
)

MB = 1_000_000


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def simulate(capacity: int, classes: dict[str, int], demand: dict[str, float | None], seconds: float,
             chunk: int = 1 << 20, stalls: dict[str, tuple[float, float]] | None = None) -> dict[str, int]:
    """Greedy (None) or capped (bytes/s) clients of each class leasing from one MemoryBackend in
    virtual time, optionally stalled (not asking) during a span; returns bytes granted per class."""
    clock = Clock()
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


# ---------------------------------------------------------------- shared through Redis, real time


async def greedy(scheduler: Scheduler, klass: str, rate: int, stop: float, counter: dict[str, int],
                 chunk: int = 256 * 1024) -> None:
    while time.monotonic() < stop:
        await scheduler.pay("read", chunk, lambda: (klass, rate))
        counter[klass] = counter.get(klass, 0) + chunk


async def run_processes(redis_url: str, capacity: int, classes: dict[str, int], processes: int,
                        seconds: float, streams: int = 3) -> dict[str, int]:
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(redis_url)
    for key in await client.keys("tp:{read}:*"):
        await client.delete(key)
    await client.aclose()
    shared = [SharedBuckets(redis_url) for _ in range(processes)]
    schedulers = [Scheduler(b, lambda _d: capacity) for b in shared]
    counter: dict[str, int] = {}
    stop = time.monotonic() + seconds
    tasks = [greedy(schedulers[(i + s) % processes], klass, rate, stop, counter)
             for i, (klass, rate) in enumerate(classes.items()) for s in range(streams)]
    await asyncio.gather(*tasks)
    for b in shared:
        assert b.status.mode == "redis", b.status
        await b.close()
    return counter


def test_two_processes_share_reservations_through_redis(redis_url: str):
    capacity = 300 * MB
    booked = {"r5": 90 * MB, "r4": 72 * MB, "r3": 54 * MB, "r2": 36 * MB, "r1": 18 * MB}
    classes = {**booked, "best-effort": capacity - sum(booked.values())}
    seconds = 3.0
    got = asyncio.run(run_processes(redis_url, capacity, classes, processes=2, seconds=seconds))
    for name, rate in classes.items():
        assert got[name] / seconds >= 0.85 * rate, (name, got[name] / seconds / MB)
    assert sum(got.values()) / seconds <= 1.1 * capacity


def test_idle_reservation_capacity_goes_to_best_effort_through_redis(redis_url: str):
    capacity = 200 * MB
    seconds = 2.0
    # the reservation exists (booked 150) but nobody uses it: best-effort may use all of the pool
    got = asyncio.run(run_processes(redis_url, capacity, {"best-effort": 50 * MB}, processes=2, seconds=seconds))
    assert got["best-effort"] / seconds >= 0.8 * capacity
    assert got["best-effort"] / seconds <= 1.1 * capacity


def test_unreachable_redis_falls_back_to_per_process_limits():
    from tests.servers import free_port

    async def main() -> tuple[int, str, str]:
        shared = SharedBuckets(f"redis://127.0.0.1:{free_port()}/0")
        scheduler = Scheduler(shared, lambda _d: 100 * MB)
        counter: dict[str, int] = {}
        stop = time.monotonic() + 1.5
        await asyncio.gather(*(greedy(scheduler, "r", 20 * MB, stop, counter) for _ in range(3)))
        await shared.heartbeat()
        status = shared.status
        await shared.close()
        return counter["r"], status.mode, status.redis

    moved, mode, redis_state = asyncio.run(main())
    assert mode == "local" and redis_state.startswith("error:")
    # the reservation still gets its rate (in this process), and no more than the pool
    assert moved / 1.5 >= 15 * MB
    assert moved / 1.5 <= 105 * MB


def test_buffers_of_ended_classes_are_forgotten():
    async def main() -> set[tuple[str, str]]:
        scheduler = Scheduler(MemoryBackend(), lambda _d: 100 * MB)
        for klass in ("rsv_a", "rsv_b", "best-effort"):
            await scheduler.pay("read", 1000, lambda k=klass: (k, 10 * MB))
        scheduler.forget({"rsv_b", "best-effort"})
        return set(scheduler.buffers())

    assert asyncio.run(main()) == {("read", "rsv_b"), ("read", "best-effort")}
