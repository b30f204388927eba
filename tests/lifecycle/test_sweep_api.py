"""Run now: an admin queues a lifecycle sweep on the broker the workers read; everyone sees the period,
when beat's last sweep started and when the next one starts."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import redis
from fastapi.testclient import TestClient

from tests.lifecycle.conftest import World
from tierpilot.kit.jobs import celery_app
from tierpilot.kit.settings import get_settings
from tierpilot.lifecycle import sweep_clock, tasks


def _queued_sweeps() -> list[tuple[str, dict[str, object]]]:
    """(task id, kwargs) of the lifecycle.sweep messages waiting on the default queue, taken off it."""
    found: list[tuple[str, dict[str, object]]] = []
    with celery_app.connection_for_read() as conn:
        queue = conn.SimpleQueue(celery_app.conf.task_default_queue)
        try:
            while True:
                try:
                    message = queue.get(block=True, timeout=1)
                except queue.Empty:
                    break
                message.ack()
                if message.headers.get("task") == "lifecycle.sweep":
                    _args, kwargs, _embed = message.decode()
                    found.append((str(message.headers["id"]), dict(kwargs)))
        finally:
            queue.close()
    return found


def test_admins_queue_a_sweep_now_members_may_not(client: TestClient, member_client: TestClient,
                                                  world: World) -> None:
    assert member_client.get("/api/lifecycle/sweep").json()["period_s"] == get_settings().lifecycle_sweep_s
    _queued_sweeps()  # whatever an earlier test left
    assert member_client.post("/api/lifecycle/sweep").status_code == 403
    assert client.post("/api/lifecycle/sweep", params={"bucket": "no-such-bucket"}).status_code == 404
    assert _queued_sweeps() == []

    r = client.post("/api/lifecycle/sweep", params={"bucket": world.bucket})
    assert r.status_code == 202
    everything = client.post("/api/lifecycle/sweep")
    assert everything.status_code == 202
    # an admin's sweep does not move beat's schedule, so the worker is told it is not beat's
    assert _queued_sweeps() == [(r.json()["task_id"], {"bucket_id": world.bucket_id, "scheduled": False}),
                                (everything.json()["task_id"], {"bucket_id": None, "scheduled": False})]


@pytest.fixture(params=["data-dir", "redis"])
def sweep_store(request: pytest.FixtureRequest, db: str) -> Iterator[str]:
    """Where the last start is kept: the data directory (no Redis configured) or Redis; emptied first."""
    with pytest.MonkeyPatch.context() as mp:
        if request.param == "redis":
            mp.setenv("TIERPILOT_REDIS_URL", request.getfixturevalue("redis_url"))
        else:
            mp.delenv("TIERPILOT_REDIS_URL", raising=False)
        get_settings.cache_clear()
        settings = get_settings()
        if settings.redis_url:
            redis.Redis.from_url(settings.redis_url).delete(sweep_clock.KEY)
        else:
            (settings.data_dir / sweep_clock.FILE).unlink(missing_ok=True)
        yield request.param
    get_settings.cache_clear()


def test_the_schedule_gives_beats_last_sweep_and_the_next_one(client: TestClient, sweep_store: str) -> None:
    period = timedelta(seconds=get_settings().lifecycle_sweep_s)
    body = client.get("/api/lifecycle/sweep").json()
    assert (body["last_run_at"], body["next_run_at"]) == (None, None)  # beat has not swept yet

    tasks.sweep(bucket_id=None, scheduled=False)  # what an admin's "sweep now" runs: beat's schedule stays
    assert client.get("/api/lifecycle/sweep").json()["last_run_at"] is None

    before = datetime.now(UTC)
    tasks.sweep()  # as beat sends it: no arguments
    after = datetime.now(UTC)
    body = client.get("/api/lifecycle/sweep").json()
    last, upcoming = datetime.fromisoformat(body["last_run_at"]), datetime.fromisoformat(body["next_run_at"])
    assert before <= last <= after and upcoming - last == period
