"""A real worker (with its beat) is SIGKILLed in the middle of a batch and started again: the rows it held
stay untouched until their lease ends, polling resumes from the database, nothing is lost, and no
transition is counted twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

import pytest
from sqlalchemy import func, select

from tests.conftest import ROOT
from tests.restores.conftest import Archive
from tests.waiting import holds_for, wait_until
from tierpilot.kit.db import transaction, utcnow
from tierpilot.restores import repository, service
from tierpilot.restores.models import RestoreBatch, RestoreItem

OBJECTS = 1500
LEASE_S = 4


@pytest.fixture
def worker_env(db_url: str, redis_url: str, data_dir: Path) -> dict[str, str]:
    # a Redis database of its own: the suite's shared worker must not take these tasks
    broker = redis_url.rsplit("/", 1)[0] + "/12"
    import redis

    redis.Redis.from_url(broker).flushdb()
    return dict(os.environ, TIERPILOT_DATABASE_URL=db_url, TIERPILOT_REDIS_URL=broker,
                TIERPILOT_RESTORE_SWEEP_S="0.5", TIERPILOT_RESTORE_LEASE_S=str(LEASE_S),
                TIERPILOT_RESTORE_CHUNK="40", TIERPILOT_RESTORE_CONCURRENCY="2",
                TIERPILOT_LOG_LEVEL="info")  # the log names the tasks it ran (the default shows warnings only)


class Worker:
    def __init__(self, env: dict[str, str], log: Path, schedule: Path) -> None:
        self.log = log
        out = open(log, "ab")  # noqa: SIM115 - closed in stop()
        self._out = out
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tierpilot.app.cli", "worker", "--concurrency", "2", "-B", "-s", str(schedule)],
            env=env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True)

    def kill(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)  # the worker, its pool children and the embedded beat
        self.proc.wait(10)
        self._out.close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self._out.close()


@pytest.fixture
def workers(worker_env: dict[str, str], data_dir: Path) -> Iterator[list[Worker]]:
    started: list[Worker] = []
    yield started
    for w in started:
        w.stop()


def _claims() -> list[tuple[int, str, datetime]]:
    with transaction() as s:
        rows = s.execute(select(RestoreItem.id, RestoreItem.claim_token, RestoreItem.next_poll_at)
                         .where(RestoreItem.claim_token.is_not(None))).all()
    return [(r[0], r[1], r[2]) for r in rows]


def test_a_killed_worker_loses_nothing_and_its_rows_wait_for_their_lease(
        archive: Archive, workers: list[Worker], worker_env: dict[str, str], data_dir: Path) -> None:
    keys = [f"sim/{i:05d}.root" for i in range(OBJECTS)]
    chunks = [keys[i::8] for i in range(8)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda part: archive.put(archive.buckets["member"], part, size=64), chunks))
    with transaction(write=True) as s:
        batch_id = service.create_batch(s, archive.user("member"), service.Selection(archive.buckets["member"], keys),
                                        "expedited", 2).id

    first_log, second_log = (data_dir / f"restore-worker-{archive.tag}-{n}.log" for n in (1, 2))
    schedule = data_dir / f"beat-{archive.tag}"
    workers.append(Worker(worker_env, first_log, schedule))
    wait_until(lambda: bool(_claims()), timeout=60, step=0.01)  # a sweep is working on a chunk
    workers[0].kill()
    killed_at = utcnow()
    held = _claims()
    assert held, "the worker was killed while it held rows"
    with transaction() as s:
        states = {k: v for k, v in s.execute(select(RestoreItem.state, func.count())
                                             .where(RestoreItem.batch_id == batch_id).group_by(RestoreItem.state))}
    assert states.get("pending", 0) > 0  # killed mid-batch
    dead = {item_id: (token, until) for item_id, token, until in held}

    workers.append(Worker(worker_env, second_log, schedule))
    # until a held row's lease ends, nobody touches it: its claim stays the dead worker's
    def leased_rows_untouched() -> bool:
        now = utcnow()
        with transaction() as s:
            tokens = {i: t for i, t in s.execute(select(RestoreItem.id, RestoreItem.claim_token)
                                                 .where(RestoreItem.id.in_(list(dead))))}
        return all(tokens[item_id] == token for item_id, (token, until) in dead.items() if until > now)

    holds_for(leased_rows_untouched, LEASE_S - 1 - (utcnow() - killed_at).total_seconds())

    def done() -> bool:
        with transaction() as s:
            return s.scalar(select(RestoreBatch.state).where(RestoreBatch.id == batch_id)) == "ready"

    wait_until(done, timeout=120)
    with transaction() as s:
        totals = repository.batch_totals(s, [batch_id])[batch_id]
        items = s.execute(select(RestoreItem.state, RestoreItem.claim_token, RestoreItem.poll_count)
                          .where(RestoreItem.batch_id == batch_id)).all()
    assert len(items) == OBJECTS
    assert {state for state, _, _ in items} == {"ready"} and {token for _, token, _ in items} == {None}
    # every transition counted once: counters equal the rows, none ran past the total
    assert totals == {"objects": OBJECTS, "bytes": OBJECTS * 64, "pending": 0, "ongoing": 0, "ready": OBJECTS,
                      "ready_bytes": OBJECTS * 64, "failed": 0, "expired": 0}
    text = second_log.read_text(errors="replace")
    assert "restores.poll_due" in text and "Traceback" not in text
