"""A reservation holds from its first second, on every gateway process: windows open on the directory's
clock (no refresh needed), a booking reaches every gateway over Redis as it commits, a reservation found by
a lookup counts as contention at once, and best-effort cannot spend the savings of the time it was not
counted. The end-to-end test books a read reservation and at once reads with it, beside greedy best-effort
readers, on two real gateway processes, and judges counted events: every byte received was paid by its
class's leases, and the limiters' decisions per 0.1 s of Redis' clock keep the pool within capacity + burst,
best-effort within the unreserved rate as of right, and the reservation at its rate whenever it asked."""

from __future__ import annotations

import asyncio
import functools
import http.client
import itertools
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from tests.clocks import Ticks, run_in_virtual_time
from tests.gateway.conftest import Gateway, _setup_data, start_gateway, stop
from tests.reservations.conftest import iso
from tests.waiting import wait_until
from tierpilot.auth.models import User
from tierpilot.kit.db import transaction
from tierpilot.kit.limiter import Lease, MemoryBackend, Scheduler, SharedBuckets, class_key, pool_key
from tierpilot.kit.settings import get_settings
from tierpilot.reservations import service
from tierpilot.reservations.gateway import (
    BEST_EFFORT,
    GRANT_COLUMNS,
    POOL_BURST,
    SLOT_S,
    Directory,
    Entry,
    Pool,
    ReservationFlow,
    ReservationPolicy,
    Snapshot,
)

MB = 1_000_000
MiB = 1 << 20
HEADER = "X-Tierpilot-Reservation"
G, S, REFUSED, STARVED = range(4)  # a kind's columns of the recent grants; best-effort's follow reserved's


# ---------------------------------------------------------------- the directory and the flow


def test_a_window_opens_on_the_directorys_clock_without_a_refresh() -> None:
    """A reservation booked for 13:00 is in the snapshot before 13:00 and is enforced at 13:00 on the
    process's clock, and no longer at its end: not at the next refresh, not a tenth of a second late."""
    ticks = Ticks()
    wall = Ticks()
    wall.now = 1_800_000_000.0
    directory = Directory(clock=ticks, wall=wall)
    directory.pool = Pool(100 * MB, 100 * MB, 0.1)
    start = wall.now + 60
    directory.entries = {"rsv_13": Entry("rsv_13", 1, "b", "read", 50 * MB, start, start + 3600, False)}

    before = directory.rates("read", start - 0.001)
    assert not before.contended and before.best_effort_bps == 100 * MB
    opened = directory.rates("read", start)  # one millisecond later, the same snapshot
    assert opened.contended and opened.since == start and opened.best_effort_bps == 50 * MB
    assert directory.rates("write", start).contended is False
    closed = directory.rates("read", start + 3600)
    assert not closed.contended and closed.best_effort_bps == 100 * MB
    assert directory.refreshed_at == 0.0  # never read from the database


def test_a_run_of_overlapping_windows_is_one_contended_period() -> None:
    directory = Directory(wall=lambda: 0.0)
    directory.pool = Pool(100 * MB, 100 * MB, 0.1)
    directory.entries = {
        "a": Entry("a", 1, "b", "read", 10 * MB, 100.0, 200.0, False),
        "b": Entry("b", 1, "b", "read", 10 * MB, 200.0, 300.0, False),  # touches a: contention goes on
        "c": Entry("c", 1, "b", "read", 10 * MB, 150.0, 160.0, False),
        "d": Entry("d", 1, "b", "read", 10 * MB, 400.0, 500.0, False),
    }
    assert [directory.rates("read", t).since for t in (99.0, 100.0, 155.0, 250.0, 300.0, 450.0)] == \
        [0.0, 100.0, 100.0, 100.0, 0.0, 400.0]


def test_a_flow_opened_before_its_window_switches_to_the_reservation_on_its_first_chunk_inside() -> None:
    chunk = 256 * 1024

    async def main() -> tuple[int, int, int, dict[str, Any]]:
        loop = asyncio.get_running_loop()
        base = 1_800_000_000.0
        policy = ReservationPolicy(redis_url="", clock=loop.time, wall=lambda: base + loop.time())
        policy.directory.pool = Pool(40 * MB, 40 * MB, 0.1)
        start = base + loop.time() + 2.0
        soon = Entry("rsv_soon", 1, "b", "read", 20 * MB, start, start + 3600, False)
        policy.directory.entries = {soon.id: soon}
        flow = ReservationFlow(policy, "read", soon, [])
        early = 0
        for _ in range(4):  # no window is open: the chunks pass at once
            await flow.consume(chunk)
            early += chunk
        await asyncio.sleep(start - policy.directory.wall())  # virtual time: costs nothing
        metered_early = sum(n for _, _, n in policy.meter.take())
        for _ in range(40):
            await flow.consume(chunk)
        return early, metered_early, sum(n for _, _, n in policy.meter.take()), policy.status()

    early, metered_early, metered, status = run_in_virtual_time(main())
    assert early > 0 and metered_early == 0  # best-effort (and unmetered) before the window
    assert metered == 40 * chunk  # every chunk inside the window is the reservation's
    paid = status["classes"]["read:rsv_soon"]
    assert paid["guaranteed_bytes"] + paid["spare_bytes"] >= 40 * chunk  # paid from its class (alone: spare too)


@pytest.fixture
def publishing(redis_url: str) -> Iterator[str]:
    """This process commits like the API: with a Redis URL, so bookings are published."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIERPILOT_REDIS_URL", redis_url)
        get_settings.cache_clear()
        yield redis_url
    get_settings.cache_clear()


def test_a_reservation_found_by_lookup_counts_as_contention_at_once(
        db: str, make_bucket: Callable[[str, int], None]) -> None:
    from tierpilot.auth import service as auth

    with transaction(write=True) as s:
        owner, _ = auth.create_user(s, "lookup-owner", "lookup-password-1")
        owner_id = owner.id
    make_bucket("lookup-bucket", owner_id)
    with transaction(write=True) as s:
        owner = s.get(User, owner_id)
        assert owner is not None
        r = service.book(s, owner, bucket="lookup-bucket", direction="read", rate_bps=10 * MB,
                         start=datetime.now(UTC) - timedelta(seconds=1), end=datetime.now(UTC) + timedelta(hours=1))
        rid = r.id
    directory = Directory()  # its last snapshot predates the booking
    assert not directory.rates("read", time.time()).contended

    async def look() -> Entry | None:
        return await directory.lookup(rid)

    entry = asyncio.run(look())
    assert entry is not None and entry.id == rid
    rates = directory.rates("read", time.time())  # before the request's first byte
    assert rates.contended and rates.best_effort_bps == service.DEFAULT_READ_BPS - 10 * MB


def test_published_bookings_cancellations_and_capacity_reach_the_gateway_without_a_snapshot(
        client: TestClient, publishing: str, make_bucket: Callable[[str, int], None],
        admin_user: dict[str, str]) -> None:
    """Booked and cancelled through the API, the capacity set by an admin: the gateway's directory has
    each change from its Redis channel, while no snapshot has been read."""
    make_bucket("published", int(admin_user["id"]))

    async def main() -> None:
        policy = ReservationPolicy(redis_url=publishing)
        policy.directory.pool = Pool(1, 1, 0.1)
        listener = asyncio.ensure_future(policy.listen(refresh=False))
        try:
            await asyncio.wait_for(policy.subscribed.wait(), 10)
            directory = policy.directory
            assert directory.refreshed_at == 0.0

            async def changed(call: Any) -> Any:
                policy.changed.clear()
                answer = await asyncio.to_thread(call)
                await asyncio.wait_for(policy.changed.wait(), 10)
                return answer

            got = await changed(lambda: client.put("/api/capacity", json={
                "read_mbps": 80, "write_mbps": 60, "unbookable_share": 0.1}))
            assert got.status_code == 200, got.text
            assert directory.pool == Pool(80 * MB, 60 * MB, 0.1)
            now = datetime.now(UTC)
            got = await changed(lambda: client.post("/api/reservations", json={
                "bucket": "published", "direction": "read", "rate_mbps": 30, "start": iso(now),
                "end": iso(now + timedelta(hours=1))}))
            assert got.status_code == 201, got.text
            rid = got.json()["id"]
            rates = directory.rates("read", time.time())
            assert rid in directory.entries and rates.contended and rates.best_effort_bps == 50 * MB
            assert (await changed(lambda: client.delete(f"/api/reservations/{rid}"))).status_code == 204
            assert directory.entries[rid].cancelled and not directory.rates("read", time.time()).contended
            assert directory.refreshed_at == 0.0
        finally:
            listener.cancel()
            await asyncio.gather(listener, return_exceptions=True)
            await policy.buckets.close()

    asyncio.run(main())


def test_a_snapshot_read_before_a_change_does_not_undo_it() -> None:
    ticks = Ticks()
    directory = Directory(clock=ticks)
    now = time.time()
    stale = Snapshot(Pool(100 * MB, 100 * MB, 0.1), {}, started=ticks())  # read began before the booking
    ticks.sleep(0.01)
    directory.apply({"kind": "reservation", "id": "rsv_new", "owner_id": 1, "bucket": "b", "direction": "read",
                     "rate_bps": 10 * MB, "start": now - 1, "end": now + 60, "cancelled": False})
    directory.install(stale)
    assert "rsv_new" in directory.entries and directory.rates("read", now).contended
    ticks.sleep(0.01)
    directory.install(Snapshot(Pool(100 * MB, 100 * MB, 0.1), {}, started=ticks()))  # read after it: it wins
    assert "rsv_new" not in directory.entries


# ---------------------------------------------------------------- draining the savings


def test_draining_keeps_debt_and_forgets_savings_in_memory() -> None:
    ticks = Ticks()
    memory = MemoryBackend(ticks)
    lease = Lease("read", BEST_EFFORT, 50 * MB, 100 * MB, MiB)
    assert memory.lease_now(lease).granted == MiB  # a fresh bucket grants one lease at once
    ticks.sleep(5)  # nothing leased for 5 s: both buckets saved up to their bursts
    memory.drain_now("read", BEST_EFFORT, 50 * MB, 100 * MB)
    denied = memory.lease_now(lease)
    assert denied.granted == 0 and denied.wait_s == pytest.approx(MiB / (100 * MB))  # the pool refills first
    memory.drain_now("read", "fresh", 50 * MB, 100 * MB)  # a bucket never seen starts empty
    assert memory.lease_now(Lease("read", "fresh", 50 * MB, 100 * MB, MiB)).granted == 0


def test_draining_in_redis_keeps_debt_and_forgets_savings(redis_url: str) -> None:
    scope = f"drain-{uuid.uuid4().hex[:8]}"
    client = redis.Redis.from_url(redis_url)
    seconds, micros = client.time()
    now_us = int(seconds) * 1_000_000 + int(micros)
    client.hset(class_key(scope, BEST_EFFORT), mapping={"tokens": 5e6, "ts": now_us})
    client.hset(pool_key(scope), mapping={"tokens": -5e6, "ts": now_us})

    async def main() -> None:
        buckets = SharedBuckets(redis_url, process_id="drain-test")
        try:
            await buckets.drain(scope, BEST_EFFORT, 1000, 1000)
            await buckets.drain(scope, "fresh", 1000, 1000)
            assert buckets.status.mode == "redis"
        finally:
            await buckets.close()

    asyncio.run(main())
    saved = float(client.hget(class_key(scope, BEST_EFFORT), "tokens") or "nan")
    debt = float(client.hget(pool_key(scope), "tokens") or "nan")
    fresh = float(client.hget(class_key(scope, "fresh"), "tokens") or "nan")
    assert saved == 0.0 and fresh == 0.0
    assert -5e6 <= debt < -4.99e6  # the debt stays (less what 1000 bytes/s refilled meanwhile)
    assert 0 < client.pttl(class_key(scope, "fresh")) <= 30_000


# ---------------------------------------------------------------- paying chunks (virtual time)


def test_waiting_chunks_are_released_one_by_one_as_each_is_paid() -> None:
    """Three streams of a class wait for 1 MiB each: they come out one lease apart, not together once the
    last is paid (which put up to two chunks' worth into one instant, in a later second than its leases)."""

    async def main() -> list[float]:
        loop = asyncio.get_running_loop()
        memory = MemoryBackend(loop.time)
        scheduler = Scheduler(memory, lambda _: 100 * MB, POOL_BURST)
        await memory.lease(Lease("read", "c", 100 * MB, 100 * MB, MiB, POOL_BURST))  # empty the fresh buckets
        done: list[float] = []

        async def one() -> None:
            await scheduler.pay("read", MiB, lambda: ("c", 100 * MB))
            done.append(loop.time())

        await asyncio.gather(one(), one(), one())
        return done

    done = run_in_virtual_time(main())
    gaps = [b - a for a, b in itertools.pairwise(done)]
    assert all(gap >= 0.9 * MiB / (100 * MB) for gap in gaps), done


def test_every_lease_decision_is_counted_in_the_slot_of_the_buckets_clock() -> None:
    """A reservation and greedy best-effort on one process for 2 s of virtual time: the recent grants add up to
    what each class's buffer was paid, per kind, and every slot's total stays within what the pool refills."""
    chunk = 256 * 1024

    async def main() -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        base = 1_800_000_000.0
        policy = ReservationPolicy(redis_url="", clock=loop.time, wall=lambda: base + loop.time())
        policy.directory.pool = Pool(40 * MB, 40 * MB, 0.1)
        now = policy.directory.wall()
        rsv = Entry("rsv_counted", 1, "b", "read", 20 * MB, now - 1, now + 3600, False)
        policy.directory.entries = {rsv.id: rsv}
        stop_at = loop.time() + 2.0

        async def stream(flow: ReservationFlow) -> None:
            while loop.time() < stop_at:
                await flow.consume(chunk)

        await asyncio.gather(*(stream(ReservationFlow(policy, "read", e, [])) for e in (rsv, rsv, None, None, None)))
        return policy.status()

    status = run_in_virtual_time(main())
    recent = status["recent_grants"]
    assert recent["columns"] == list(GRANT_COLUMNS)
    slots = list(recent["read"].values())
    assert len(slots) >= 20 and not recent["write"]
    for kind, klass in ((0, "read:rsv_counted"), (4, f"read:{BEST_EFFORT}")):
        paid = status["classes"][klass]
        assert sum(c[kind + G] for c in slots) == paid["guaranteed_bytes"]
        assert sum(c[kind + S] for c in slots) == paid["spare_bytes"]
        assert all(c[kind + STARVED] <= c[kind + REFUSED] for c in slots)
    assert sum(c[4 + REFUSED] for c in slots) > 0  # greedy best-effort waited on the limiter
    burst = Lease("read", BEST_EFFORT, 0, 40 * MB, 0, POOL_BURST)
    assert max(c[G] + c[S] + c[4 + G] + c[4 + S] for c in slots) <= \
        40 * MB * SLOT_S + burst.pool_burst + burst.pool_debt


# ---------------------------------------------------------------- end to end: two gateways, one Redis


CAPACITY = 100 * MB
RATE = 70 * MB  # not half the capacity: best-effort given more than its 30 would show, an even split not
SECONDS = 3.0
OBJECT = 32 * MiB
RANGE = 8 * MiB
WINDOW = round(1 / SLOT_S)  # slots in 1 s


@pytest.fixture(scope="module")
def two_gateways(db_url: str, data_dir: Path, redis_url: str) -> Iterator[list[Gateway]]:
    from tests.conftest import _truncate_all

    tag = uuid.uuid4().hex[:8]
    users, dirs = _setup_data(tag)
    with transaction(write=True) as s:
        service.set_capacity(s, CAPACITY, CAPACITY, 0.1)
    gateways = []
    try:
        for i in range(2):
            log = data_dir / f"gateway-first-second-{tag}-{i}.log"
            url, proc = start_gateway(db_url, log, {"TIERPILOT_REDIS_URL": redis_url})
            gateways.append(Gateway(url=url, proc=proc, log=log, users=users, tier_dirs=dirs))
        yield gateways
    finally:
        for gw in gateways:
            stop(gw.proc)
        _truncate_all()


def _read(url: str, headers: dict[str, str], stop_at: float, got: list[int], errors: list[str]) -> None:
    """8 MiB ranged GETs of one object, round and round, as fast as the gateway lets them go; ``got[0]``
    counts the bytes received."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname or "127.0.0.1", u.port, timeout=30)
    buf = memoryview(bytearray(MiB))
    offset = 0
    try:
        while time.monotonic() < stop_at:
            conn.request("GET", f"{u.path}?{u.query}", headers={**headers, "Range": f"bytes={offset}-"
                                                                f"{offset + RANGE - 1}"})
            resp = conn.getresponse()
            if resp.status != 206:
                errors.append(f"{resp.status} {resp.read()[:200]!r}")
                return
            while time.monotonic() < stop_at and (n := resp.readinto(buf)):
                got[0] += n
            if time.monotonic() >= stop_at:
                return
            offset = (offset + RANGE) % OBJECT
    except (OSError, http.client.HTTPException) as exc:
        errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        conn.close()


def _health(gw: Gateway) -> dict[str, Any]:
    reservations: dict[str, Any] = httpx.get(f"{gw.url}/_tierpilot/health").json()["reservations"]
    return reservations


def _paid(health: dict[str, Any], klass: str) -> int:
    paid = health["classes"].get(f"read:{klass}", {})
    return int(paid.get("guaranteed_bytes", 0) + paid.get("spare_bytes", 0))


def _enforcing(gw: Gateway, rid: str) -> bool:
    return _paid(_health(gw), rid) > 0


def _grants(healths: list[dict[str, Any]], first_slot: int) -> dict[int, list[int]]:
    """The read leases both gateways' limiters decided per slot of Redis' clock from ``first_slot`` on, summed
    (columns: ``GRANT_COLUMNS``)."""
    slots: dict[int, list[int]] = {}
    for health in healths:
        recent = health["recent_grants"]
        assert recent["columns"] == list(GRANT_COLUMNS) and recent["slot_s"] == SLOT_S
        for slot, counts in recent["read"].items():
            if int(slot) >= first_slot:
                slots[int(slot)] = [a + b for a, b in zip(slots.get(int(slot), [0] * len(counts)), counts,
                                                          strict=True)]
    return slots


def _start(url: str, headers: dict[str, str], stop_at: float, got: list[int], errors: list[str]
           ) -> list[threading.Thread]:
    threads = [threading.Thread(target=_read, args=(url, headers, stop_at, got, errors)) for _ in range(2)]
    for t in threads:
        t.start()
    return threads


def _windows(first: int, last: int) -> Iterator[range]:
    """Every run of ``WINDOW`` consecutive slots (1 s) within ``first..last``."""
    return (range(a, a + WINDOW) for a in range(first, last - WINDOW + 2))


def test_a_reservation_booked_now_holds_from_its_first_second_on_every_gateway(
        two_gateways: list[Gateway], redis_url: str, publishing: str) -> None:
    """Book a read reservation and at once read with it on both gateways, beside greedy best-effort readers on
    both. Judged by what the gateways' limiters decided per 0.1 s slot of Redis' clock (the one timeline of
    the shared buckets) and by the bytes each reader received and each gateway paid for: counted events, not
    bytes per wall-clock second, which also depend on when each reader thread got a core (at load 7 one second
    of 46.1 MB reserved beside 53.5 and 50.3 while the pool moved 93-100 MB)."""
    gw1, _ = two_gateways
    alice, bob = gw1.client("alice"), gw1.client("bob")
    buckets = {"alice": f"first-{uuid.uuid4().hex[:8]}", "bob": f"greedy-{uuid.uuid4().hex[:8]}"}
    for who, s3 in (("alice", alice), ("bob", bob)):
        s3.create_bucket(Bucket=buckets[who])
        s3.put_object(Bucket=buckets[who], Key="big", Body=b"z" * OBJECT)
    urls = {(who, gw.url): gw.client(who).generate_presigned_url(
        "get_object", Params={"Bucket": buckets[who], "Key": "big"}) for who in buckets for gw in two_gateways}
    wait_until(lambda: all(_health(gw)["changes"] == "subscribed" for gw in two_gateways), timeout=15)
    before = [_paid(_health(gw), BEST_EFFORT) for gw in two_gateways]
    seconds, micros = redis.Redis.from_url(redis_url).time()
    first_slot = int((seconds + micros / 1e6) / SLOT_S)  # the gateways' recent grants may hold an earlier run's
    with transaction(write=True) as s:
        owner = s.get(User, gw1.users["alice"].id)
        assert owner is not None
        start = datetime.now(UTC) - timedelta(seconds=1)
        rid = service.book(s, owner, bucket=buckets["alice"], direction="read", rate_bps=RATE, start=start,
                           end=start + timedelta(minutes=10)).id
    # at once: two reserved streams on each gateway; two greedy best-effort streams on each as soon as that
    # gateway enforces the reservation (its lookup made it contention there), so every byte moved is paid
    stop_at = time.monotonic() + SECONDS
    errors: list[str] = []
    received = {(who, gw.url): [0] for who in buckets for gw in two_gateways}
    threads = [t for gw in two_gateways
               for t in _start(urls[("alice", gw.url)], {HEADER: rid}, stop_at, received[("alice", gw.url)], errors)]
    for gw in two_gateways:
        wait_until(functools.partial(_enforcing, gw, rid), timeout=5)
        threads += _start(urls[("bob", gw.url)], {}, stop_at, received[("bob", gw.url)], errors)
    for t in threads:
        t.join(timeout=SECONDS + 30)
    assert not errors, errors
    with transaction(write=True) as s:  # the next run books the same rate: this one makes room
        owner = s.get(User, gw1.users["alice"].id)
        assert owner is not None
        service.cancel(s, owner, rid)
    healths = [_health(gw) for gw in two_gateways]
    grants = _grants(healths, first_slot)
    got = {key: n for key, (n,) in received.items()}
    shown = {s - first_slot: [round(c[G] / MB, 1), round(c[S] / MB, 1), c[REFUSED], c[STARVED],
                              round(c[4 + G] / MB, 1), round(c[4 + S] / MB, 1), c[4 + REFUSED], c[4 + STARVED]]
             for s, c in sorted(grants.items())}

    # every byte a reader received was paid by its class's leases on the gateway it read from
    for gw, health, paid_before in zip(two_gateways, healths, before, strict=True):
        assert _paid(health, rid) >= got[("alice", gw.url)] > 0, (gw.url, got)
        assert _paid(health, BEST_EFFORT) - paid_before >= got[("bob", gw.url)] > 0, (gw.url, got)

    slots = range(min(grants), max(grants) + 1)

    def total(c: list[int]) -> int:
        return c[G] + c[S] + c[4 + G] + c[4 + S]

    assert len(slots) >= 2 * WINDOW, shown
    # the pool: whatever the two gateways asked, their grants in any second stay within the capacity plus what
    # the pool bucket may hold and lend (1 MiB each here): the Lua script's invariant, on Redis' clock
    burst = Lease("read", BEST_EFFORT, 0, CAPACITY, 0, POOL_BURST)
    for w in _windows(slots.start, slots.stop - 1):
        assert sum(total(grants.get(x, [0] * 8)) for x in w) <= CAPACITY + burst.pool_burst + burst.pool_debt, \
            (w.start - first_slot, shown)
    # best-effort is never granted more than the unreserved rate as of right (guaranteed): from the first grant
    # of the run (the first chunk of a contended period drains what best-effort saved, then leases), never
    # ahead of (capacity - reserved) x time by more than one lease of each gateway; beyond that only spare,
    # what the reservation left unclaimed
    contended = min(x for x, c in grants.items() if total(c))
    granted = 0
    for x in range(contended, slots.stop):
        granted += grants.get(x, [0] * 8)[4 + G]
        assert granted <= (CAPACITY - RATE) * (x + 1 - contended) * SLOT_S + 2 * MiB, (x - first_slot, shown)
    # the reservation is granted its rate over every stretch in which it asked for at least that much: in which
    # it was refused bytes it held in every slot (the limiter, not its readers, held it back), from the slot
    # after its first
    # grant (its bucket began there) to the readers' stop. Over a stretch it is owed its rate x length, less
    # what it holds unclaimed at the stretch's end: what accrued since its last decision (at most a slot's
    # worth) and a lease per gateway. A second alone would also be owed what it carried in from the second
    # before (its bucket saves 0.5 s of its rate), so the stretch is judged whole.
    stop_slot = first_slot + int(SECONDS / SLOT_S) - 1  # the readers stop during it
    first_reserved = min(x for x, c in grants.items() if c[G] + c[S])
    stretches: list[range] = []
    for x in range(first_reserved + 1, stop_slot):
        if not grants.get(x, [0] * 8)[STARVED]:
            continue
        if stretches and stretches[-1].stop == x:
            stretches[-1] = range(stretches[-1].start, x + 1)
        else:
            stretches.append(range(x, x + 1))
    judged = [(round(len(r) * SLOT_S, 1), sum(grants[x][G] + grants[x][S] for x in r))
              for r in stretches if len(r) >= WINDOW]
    for seconds_long, reserved in judged:
        assert reserved >= RATE * seconds_long - RATE * SLOT_S - 2 * MiB, (judged, shown)
    # operators read the same decisions in /metrics (every gateway process writing to this metrics directory)
    exposition = httpx.get(f"{gw1.url}/_tierpilot/metrics").text
    exported = {(x.labels["class"], x.labels["grant"]): x.value
                for family in text_string_to_metric_families(exposition) for x in family.samples
                if x.name == "tierpilot_limiter_granted_bytes_total" and x.labels["direction"] == "read"}
    assert exported[("reserved", "guaranteed")] + exported.get(("reserved", "spare"), 0) >= _paid(healths[0], rid)
    peak = max(sum(total(grants.get(x, [0] * 8)) for x in w) for w in _windows(slots.start, slots.stop - 1))
    print(f"\nCOUNTED pool peak 1 s {peak / MB:.1f} MB; reserved in judged stretches "
          f"{[(t, round(r / MB / t, 1)) for t, r in judged]} (s, MB/s); "
          f"best-effort guaranteed {granted / MB:.1f} MB in "
          f"{(slots.stop - contended) * SLOT_S:.1f} s\nGRANTS per slot of Redis' clock (reserved: guaranteed MB, "
          f"spare MB, refused, starved; best-effort the same): {shown}")
