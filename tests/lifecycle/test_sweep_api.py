"""Run now: an admin queues a lifecycle sweep on the broker the workers read; everyone sees the period."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.lifecycle.conftest import World
from tierpilot.kit.jobs import celery_app
from tierpilot.kit.settings import get_settings


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
    assert member_client.get("/api/lifecycle/sweep").json() == {"period_s": get_settings().lifecycle_sweep_s}
    _queued_sweeps()  # whatever an earlier test left
    assert member_client.post("/api/lifecycle/sweep").status_code == 403
    assert client.post("/api/lifecycle/sweep", params={"bucket": "no-such-bucket"}).status_code == 404
    assert _queued_sweeps() == []

    r = client.post("/api/lifecycle/sweep", params={"bucket": world.bucket})
    assert r.status_code == 202
    everything = client.post("/api/lifecycle/sweep")
    assert everything.status_code == 202
    assert _queued_sweeps() == [(r.json()["task_id"], {"bucket_id": world.bucket_id}),
                                (everything.json()["task_id"], {"bucket_id": None})]
