"""Fault tests: a real `tierpilot worker` process is SIGKILLed mid-copy and mid-delete, then restarted.

Afterwards every object is readable exactly once (one blob, the right bytes) and fsck finds the
catalog and the tiers in agreement.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.engine import make_url

from tests.conftest import ROOT
from tests.lifecycle.conftest import World, age, placement, put, read, set_rules
from tests.waiting import STEP_S, wait_until
from tierpilot.kit.db import transaction
from tierpilot.lifecycle.fsck import fsck
from tierpilot.lifecycle.models import LifecycleMove

SIZE = 3 * 1024 * 1024
RATE_MBPS = 6  # a copy takes about half a second: long enough to be killed in the middle of one


class Worker:
    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.env, self.log = env, log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        out = open(self.log, "ab")  # noqa: SIM115
        self.proc = subprocess.Popen([sys.executable, "-m", "tierpilot.app.cli", "worker", "--concurrency", "2"],
                                     env=self.env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT,
                                     start_new_session=True)

    def kill(self) -> None:
        """SIGKILL the worker and its pool processes at once (no chance to finish anything)."""
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


@pytest.fixture
def worker_env(db_url: str, redis_url: str, data_dir: Path, monkeypatch: pytest.MonkeyPatch
               ) -> Iterator[dict[str, str]]:
    # a Redis database of its own: no other test's worker may take these tasks
    url = make_url(redis_url.replace("redis://", "postgresql://", 1))
    own_redis = f"redis://{url.host}:{url.port}/12"
    import redis

    redis.Redis.from_url(own_redis).flushdb()
    env = dict(os.environ, TIERPILOT_DATABASE_URL=db_url, TIERPILOT_REDIS_URL=own_redis,
               TIERPILOT_LIFECYCLE_MOVE_RATE_MBPS=str(RATE_MBPS), TIERPILOT_LIFECYCLE_DELETE_GRACE_S="2",
               TIERPILOT_LIFECYCLE_LEASE_S="3")
    monkeypatch.setenv("TIERPILOT_REDIS_URL", own_redis)
    from tierpilot.kit.settings import get_settings

    get_settings.cache_clear()
    yield env
    get_settings.cache_clear()


def _states() -> dict[str, int]:
    with transaction() as s:
        return {st: int(n) for st, n in s.execute(select(LifecycleMove.state, func.count(LifecycleMove.id))
                                                  .group_by(LifecycleMove.state))}


def _wait(what: str, cond: Callable[[], bool], timeout: float = 120.0, step: float = STEP_S) -> None:
    wait_until(cond, timeout, step, message=lambda: f"{what}: moves {_states()}")


def _copy_in_progress(world: World) -> bool:
    tmp = world.dirs["infrequent"] / "tmp"
    running = _states().get("running", 0)
    # the copy's temp file exists from its first byte on (a blob under 4 MiB is held in one buffer and
    # written at the end, so the file may still be empty)
    return running > 0 and tmp.is_dir() and any(p.name.endswith(".tmp") for p in tmp.iterdir())


@pytest.mark.timeout(600)
def test_worker_killed_mid_copy_and_mid_delete_leaves_one_readable_copy(
        world: World, worker_env: dict[str, str], data_dir: Path) -> None:
    from tierpilot.kit.jobs import make_celery

    payloads = {f"raw/{i}": bytes([65 + i]) * SIZE for i in range(6)}
    for key, data in payloads.items():
        put(world, key, data)
    age(world, days=31)
    set_rules(world, [{"id": "to-ia", "filter": {"prefix": "raw/"},
                       "transitions": [{"days": 30, "storage_class": "STANDARD_IA"}]}])
    celery = make_celery()
    worker = Worker(worker_env, data_dir / "lifecycle-fault-worker.log")
    try:
        worker.start()
        celery.send_task("lifecycle.sweep")
        _wait("a copy in progress", lambda: _copy_in_progress(world))
        worker.kill()
        killed_copy = _states()
        assert killed_copy.get("running", 0) >= 1, killed_copy

        worker.start()
        celery.send_task("lifecycle.sweep")  # hands out the dead worker's moves at once
        _wait("a move between switch and delete", lambda: _states().get("switched", 0) > 0)
        worker.kill()
        assert _states().get("switched", 0) >= 1

        worker.start()

        def finished() -> bool:
            celery.send_task("lifecycle.sweep")
            return _states() == {"done": len(payloads)}

        _wait("every move done", finished, timeout=180, step=0.5)  # a sweep asked for at each look
    finally:
        worker.stop()
    assert set(placement(world).values()) == {("infrequent", "STANDARD_IA")}
    for key, data in payloads.items():
        assert read(world, key) == data
    report = fsck(min_age_s=0)
    assert report.clean and not report.findings, [f.line() for f in report.findings]
    assert report.objects == len(payloads) and report.blobs == len(payloads)
