"""Periodic reservation tasks: state transitions along the clock, and the metering roll-up run
by a real Celery worker from the counters a gateway left in Redis."""

from __future__ import annotations

import asyncio
import subprocess
from datetime import UTC, datetime, timedelta

import pytest
import redis
import redis.asyncio as aioredis

from tierpilot.kit.db import transaction
from tierpilot.reservations import achieved, service
from tierpilot.reservations.models import Reservation, ReservationSample
from tierpilot.reservations.tasks import advance_states

MB = 1_000_000


def insert(owner_id: int, start: datetime, end: datetime, state: str = "booked") -> str:
    with transaction(write=True) as s:
        r = Reservation(id=service.new_reservation_id(), owner_id=owner_id, bucket="bench", direction="read",
                        rate_bps=10 * MB, start_at=start, end_at=end, state=state)
        s.add(r)
        return r.id


def states(*ids: str) -> list[str]:
    with transaction() as s:
        return [s.get(Reservation, i).state for i in ids]  # type: ignore[union-attr]


def test_advance_states_moves_along_the_clock_and_records_achieved(admin_user):
    owner = int(admin_user["id"])
    now = datetime.now(UTC).replace(microsecond=0)
    future = insert(owner, now + timedelta(hours=1), now + timedelta(hours=2))
    started = insert(owner, now - timedelta(minutes=1), now + timedelta(hours=1))
    over = insert(owner, now - timedelta(hours=2), now - timedelta(minutes=1))
    over_active = insert(owner, now - timedelta(hours=2), now - timedelta(seconds=30), state="active")
    cancelled = insert(owner, now - timedelta(hours=2), now - timedelta(hours=1), state="cancelled")
    first = int((now - timedelta(hours=2)).timestamp())
    with transaction(write=True) as s:
        # ten seconds of traffic: 8 full ones at 10 MB/s between two partial ones
        service.record_samples(s, [(over, first + 1, 2 * MB)] + [(over, first + i, 10 * MB) for i in range(2, 10)]
                               + [(over, first + 10, 1 * MB)])
    assert advance_states() == {"active": 1, "finished": 2}
    assert states(future, started, over, over_active, cancelled) == [
        "booked", "active", "finished", "finished", "cancelled"]
    with transaction() as s:
        r = s.get(Reservation, over)
        assert r is not None
        assert r.achieved_bytes == 83 * MB and r.active_seconds == 10
        assert r.achieved_mean_bps == 10 * MB and r.achieved_p5_bps == 10 * MB  # the full seconds
    assert advance_states() == {"active": 0, "finished": 0}  # a second sweep changes nothing


def test_achieved_figures_skip_partial_edges_only_with_enough_seconds():
    assert service.achieved({}) == service.Achieved(0, 0, None, None)
    assert service.achieved({1: 5, 2: 0, 3: 7}) == service.Achieved(12, 2, 6, 5)
    per_second = {s: 100 for s in range(100)} | {0: 1, 99: 2, 50: 10}
    a = service.achieved(per_second)
    assert a.p5_bps == 100 and a.active_seconds == 100 and a.mean_bps == (98 * 100 - 90) // 98


def test_rollup_through_a_worker_moves_gateway_counters_into_the_database(
        db: str, redis_url: str, admin_user, celery_worker_process: subprocess.Popen[bytes],
        monkeypatch: pytest.MonkeyPatch):
    now = datetime.now(UTC)
    rid = insert(int(admin_user["id"]), now - timedelta(minutes=5), now + timedelta(minutes=5))
    second = int(now.timestamp()) - 10

    async def gateway_flushes() -> None:
        client = aioredis.Redis.from_url(redis_url)
        await achieved.push_to_redis(client, [(rid, second, 5 * MB), (rid, second + 1, 7 * MB),
                                              ("rsv_deleted_meanwhile", second, 1)])
        await achieved.push_to_redis(client, [(rid, second + 1, 1 * MB)])
        await client.aclose()

    asyncio.run(gateway_flushes())
    monkeypatch.setenv("TIERPILOT_REDIS_URL", redis_url)
    from tierpilot.kit.settings import get_settings

    get_settings.cache_clear()
    try:
        from tierpilot.kit.jobs import make_celery

        stored = make_celery().send_task("reservations.rollup_metering").get(timeout=60)
    finally:
        get_settings.cache_clear()
    assert stored == 2  # two seconds of ours; the one of an id the database does not know is dropped
    with transaction() as s:
        rows = {x.second: x.nbytes for x in s.query(ReservationSample).filter_by(reservation_id=rid)}
        assert rows == {second: 5 * MB, second + 1: 8 * MB}
        r = s.get(Reservation, rid)
        assert r is not None and r.achieved_bytes == 13 * MB
    client = redis.Redis.from_url(redis_url)
    assert not client.exists(achieved.counter_key(rid))
    assert not client.sismember(achieved.PENDING_KEY, rid)
    # a second roll-up finds nothing and changes nothing
    assert achieved.rollup(client) == 0
    with transaction() as s:
        assert s.query(ReservationSample).filter_by(reservation_id=rid).count() == 2


def test_rollup_puts_counters_back_when_the_database_fails(db: str, redis_url: str, admin_user,
                                                           monkeypatch: pytest.MonkeyPatch):
    now = datetime.now(UTC)
    rid = insert(int(admin_user["id"]), now - timedelta(minutes=5), now + timedelta(minutes=5))
    client = redis.Redis.from_url(redis_url)
    client.hincrby(achieved.counter_key(rid), "1000", 42)
    client.sadd(achieved.PENDING_KEY, rid)

    def broken(rows: object) -> int:
        raise RuntimeError("database down")

    monkeypatch.setattr(achieved, "write_to_database", broken)
    with pytest.raises(RuntimeError):
        achieved.rollup(client)
    assert client.hget(achieved.counter_key(rid), "1000") == b"42"
    assert client.sismember(achieved.PENDING_KEY, rid)
    monkeypatch.undo()
    assert achieved.rollup(client) == 1
