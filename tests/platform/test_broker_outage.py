"""Redis dies (SIGKILL, its queues lost) and comes back on the same port twice while a real `tierpilot worker`
and `tierpilot beat` work on a restore batch and lifecycle moves: the worker rides out both outages (the process
started stays up), every restore item becomes ready and every move done, within a bounded time, and nothing is
done twice (restore counters equal the rows, each transition metered once, fsck clean)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from sqlalchemy import func, select

from tests.conftest import ROOT
from tests.lifecycle.conftest import World, age, placement, put, set_rules, world  # noqa: F401  (fixture)
from tests.servers import free_port, wait_port
from tests.waiting import wait_until
from tierpilot.kit.db import transaction

RAW = 16  # lifecycle moves (hot -> infrequent), copied at a throttled rate so that they span the outages
RAW_SIZE = 2 * 1024 * 1024
RATE_MBPS = 2  # ~17 s of copying in all
ARCHIVED = 100  # restore items per batch (one batch in flight at each outage), swept 20 at a time every half second
RECALL_S = 6  # the archive tier's restore delay: submitted items are in flight this long
OUTAGES = 2
# generous: on 2 busy cores the whole run takes ~30 s; a worker that waited for a lease or the next lifecycle sweep
# (300 s each, the defaults kept here) would not make it
FINISH_S = 120.0
LOST = "Connection to broker lost"  # Celery's warning when its consumer loses the broker


@dataclass
class Redis:
    """A throwaway redis-server without persistence: a kill loses every queued message, the worst outage."""

    port: int = field(default_factory=free_port)
    dir: str = field(default_factory=lambda: tempfile.mkdtemp(prefix="tierpilot-outage-redis-"))
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server not found: run `make setup` (installs Debian's redis-server)")
        self.proc = subprocess.Popen([binary, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
                                      "--appendonly", "no", "--dir", self.dir], stdout=subprocess.DEVNULL)
        wait_port(self.port, timeout=60, proc=self.proc)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def close(self) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


class Process:
    """A `tierpilot` command in a session of its own (its whole group is stopped), output to a log file."""

    def __init__(self, args: list[str], env: dict[str, str], log: Path) -> None:
        self.log = log
        self._out = open(log, "ab")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen([sys.executable, "-m", "tierpilot.app.cli", *args], env=env, stdout=self._out,
                                     stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(30)
        # what the group left behind (pool processes of a worker that died) goes too
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        if self.proc.poll() is None:
            self.proc.wait(10)
        self._out.close()


def _move_states() -> dict[str, int]:
    from tierpilot.lifecycle.models import LifecycleMove

    with transaction() as s:
        return {st: int(n) for st, n in s.execute(select(LifecycleMove.state, func.count(LifecycleMove.id))
                                                  .group_by(LifecycleMove.state))}


def _batch_state(batch_id: int) -> str | None:
    from tierpilot.restores.models import RestoreBatch

    with transaction() as s:
        return s.scalar(select(RestoreBatch.state).where(RestoreBatch.id == batch_id))


def _restore_items(batch_id: int) -> dict[str, int]:
    from tierpilot.restores.models import RestoreItem

    with transaction() as s:
        return {st: int(n) for st, n in s.execute(select(RestoreItem.state, func.count())
                                                  .where(RestoreItem.batch_id == batch_id)
                                                  .group_by(RestoreItem.state))}


@pytest.fixture
def redis_server() -> Iterator[Redis]:
    server = Redis()
    server.start()
    yield server
    server.close()


@pytest.fixture
def processes() -> Iterator[list[Process]]:
    started: list[Process] = []
    yield started
    for p in started:
        p.stop()


def _new_batch(place: World, keys: list[str]) -> int:
    """A restore batch of ``keys`` made through the restores service (its kick goes to the test process's own
    broker, not this test's: the beat's sweeps find the items in the database)."""
    from tierpilot.auth.models import User
    from tierpilot.restores import service

    with transaction(write=True) as s:
        owner = s.get(User, place.owner_id)
        assert owner is not None
        return service.create_batch(s, owner, service.Selection(place.bucket, keys), "expedited", 1).id


@pytest.mark.timeout(360)
def test_worker_rides_out_two_redis_outages_and_finishes_restores_and_moves_once(
        world: World, redis_server: Redis, processes: list[Process], tmp_path: Path) -> None:  # noqa: F811
    from celery import Celery

    from tierpilot.drivers import registry
    from tierpilot.lifecycle.fsck import fsck
    from tierpilot.lifecycle.models import LifecycleMeter
    from tierpilot.restores import repository as restores_repository
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.schemas import RestoreDelays, TierUpdate

    with transaction(write=True) as s:  # a recall outlasts an outage: the items wait on the tier meanwhile
        tiers.update(s, world.tiers["archive"], TierUpdate(restore_delays=RestoreDelays(
            expedited=RECALL_S, standard=RECALL_S, bulk=RECALL_S)))
    registry.tiers.invalidate()
    raw = {f"raw/{i:02d}": bytes([65 + i]) * RAW_SIZE for i in range(RAW)}
    for key, data in raw.items():
        put(world, key, data)
    age(world, days=31)
    archived = [[f"arch{n}/{i:04d}" for i in range(ARCHIVED)] for n in range(OUTAGES)]
    for key in (k for keys in archived for k in keys):
        put(world, key, key.encode() * 8, storage_class="GLACIER")
    set_rules(world, [{"id": "to-ia", "filter": {"prefix": "raw/"},
                       "transitions": [{"days": 30, "storage_class": "STANDARD_IA"}]}])

    env = dict(os.environ, TIERPILOT_DATABASE_URL=os.environ["TIERPILOT_DATABASE_URL"],
               TIERPILOT_REDIS_URL=redis_server.url, TIERPILOT_LOG_LEVEL="info",
               TIERPILOT_LIFECYCLE_MOVE_RATE_MBPS=str(RATE_MBPS), TIERPILOT_LIFECYCLE_DELETE_GRACE_S="1",
               TIERPILOT_RESTORE_SWEEP_S="0.5", TIERPILOT_RESTORE_CHUNK="20", TIERPILOT_RESTORE_CONCURRENCY="2")
    worker = Process(["worker", "--concurrency", "2"], env, tmp_path / "worker.log")
    processes.append(worker)
    # beat runs on its own as in every deployment, with a schedule file of its own
    beat = Process(["beat"], dict(env, TIERPILOT_DATA_DIR=str(tmp_path / "beat")), tmp_path / "beat.log")
    processes.append(beat)
    batches: list[int] = []

    client = Celery("outage-test", broker=redis_server.url)
    client.conf.broker_connection_timeout = 1

    def log_tail() -> str:
        return (f"moves {_move_states()}, restores {[_restore_items(b) for b in batches]}\n--- worker log ---\n"
                f"{worker.text()[-4000:]}\n--- beat log ---\n{beat.text()[-1500:]}")

    def worker_answers() -> bool:
        if not worker.alive():
            raise AssertionError(f"the worker exited ({worker.proc.returncode}):\n{log_tail()}")
        try:
            return bool(client.control.ping(timeout=1.0))
        except Exception:  # noqa: BLE001 - the broker still starting
            return False

    wait_until(worker_answers, timeout=120, step=0.2, message=log_tail)
    # the beat's lifecycle sweep comes every 300 s: the test asks for one now (an admin's "run now" does the same)
    client.send_task("lifecycle.sweep", kwargs={"scheduled": False})
    wait_until(lambda: _move_states().get("running", 0) > 0, timeout=120, step=0.05, message=log_tail)

    for keys in archived:
        # work in flight: a fresh restore batch submitted to the tier (and, at least at the first outage, moves copying)
        batches.append(_new_batch(world, keys))
        wait_until(lambda: _restore_items(batches[-1]).get("ongoing", 0) > 0, timeout=120, step=0.05,
                   message=log_tail)
        lost = worker.text().count(LOST)
        redis_server.kill()

        def noticed(before: int = lost) -> bool:  # or died: the next wait says so
            return worker.text().count(LOST) > before or not worker.alive()

        wait_until(noticed, timeout=60, step=0.05, message=log_tail)
        redis_server.start()
        wait_until(worker_answers, timeout=120, step=0.2, message=log_tail)

    started = time.monotonic()

    def finished() -> bool:
        if not worker.alive():
            raise AssertionError(f"the worker exited ({worker.proc.returncode}):\n{log_tail()}")
        return _move_states() == {"done": RAW} and all(_batch_state(b) == "ready" for b in batches)

    wait_until(finished, timeout=FINISH_S, step=0.2, message=log_tail)
    took = time.monotonic() - started
    assert worker.alive() and beat.alive(), log_tail()

    # nothing done twice: the restore counters equal the rows, each transition metered once, one copy per object
    with transaction() as s:
        totals = restores_repository.batch_totals(s, batches)
        metered = s.execute(select(func.sum(LifecycleMeter.objects), func.sum(LifecycleMeter.bytes))
                            .where(LifecycleMeter.action == "transition")).one()
    for b in batches:
        assert _restore_items(b) == {"ready": ARCHIVED}
        assert totals[b]["ready"] == totals[b]["objects"] == ARCHIVED, totals[b]
        assert totals[b]["pending"] == totals[b]["ongoing"] == totals[b]["failed"] == 0, totals[b]
    assert (int(metered[0]), int(metered[1])) == (RAW, RAW * RAW_SIZE)
    assert {k: v for k, v in placement(world).items() if k.startswith("raw/")} == {
        k: ("infrequent", "STANDARD_IA") for k in raw}
    report = fsck(min_age_s=0, tier_names=[f"hot-{world.tag}", f"infrequent-{world.tag}"])
    assert report.clean and not report.findings, [f.line() for f in report.findings]
    assert took < FINISH_S, took
