"""`tierpilot worker`'s keeper on a stand-in child process: a child that ends unasked (Celery exits 0 after an
unrecoverable error) is started again, one that stopped beating while the broker answers is replaced, one that
stopped beating while the broker is down is left alone, and SIGTERM stops the child warmly and the keeper with it."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.waiting import holds_for, wait_until

# the stand-in: records its pid; the first one exits at once with 0 when told to, later ones run until SIGTERM
CHILD = """
import signal, sys, time
from pathlib import Path
pids = Path(sys.argv[1])
first = not pids.exists()
with pids.open("a") as f:
    f.write(f"{__import__('os').getpid()}\\n")
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
if first and sys.argv[2] == "exit-first":
    sys.exit(0)
while True:
    time.sleep(0.1)
"""

KEEPER = """
import sys
from pathlib import Path
from worker.keeper import Keeper
child, pids, mode, heartbeat, answers, stale_s = sys.argv[1:]
keeper = Keeper([sys.executable, child, pids, mode], Path(heartbeat), broker_answers=lambda: answers == "up",
                stale_s=float(stale_s))
sys.exit(keeper.run())
"""


class Run:
    def __init__(self, tmp: Path, mode: str, broker: str = "up", stale_s: float = 3600.0) -> None:
        (tmp / "child.py").write_text(CHILD)
        self.pids = tmp / "pids"
        env = dict(os.environ, TIERPILOT_SUPERVISOR_BACKOFF_S="0.1")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", KEEPER, str(tmp / "child.py"), str(self.pids), mode, str(tmp / "heartbeat"),
             broker, str(stale_s)], env=env, cwd=ROOT, stderr=subprocess.PIPE)

    def children(self) -> list[int]:
        return [int(p) for p in self.pids.read_text().split()] if self.pids.exists() else []

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(60)


@pytest.fixture
def runs() -> Iterator[list[Run]]:
    started: list[Run] = []
    yield started
    for run in started:
        if run.proc.poll() is None:
            run.proc.kill()
            run.proc.wait()
        for pid in run.children():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat", "rb") as f:
        return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"


def test_a_child_that_ends_unasked_is_started_again_and_sigterm_stops_both(tmp_path: Path, runs: list[Run]) -> None:
    run = Run(tmp_path, "exit-first")
    runs.append(run)
    wait_until(lambda: len(run.children()) == 2, timeout=60)
    second = run.children()[1]
    wait_until(lambda: _alive(second), timeout=10)
    assert run.stop() == 0
    assert not _alive(second)
    assert b"died (exit code 0)" in (run.proc.stderr.read() if run.proc.stderr else b"")


def test_a_child_without_heartbeat_is_replaced_only_while_the_broker_answers(
        tmp_path: Path, runs: list[Run]) -> None:
    for name in ("down", "up"):
        (tmp_path / name).mkdir()
    down = Run(tmp_path / "down", "run", broker="down", stale_s=0.5)
    up = Run(tmp_path / "up", "run", broker="up", stale_s=0.5)
    runs.extend([down, up])
    wait_until(lambda: len(up.children()) >= 2, timeout=60)  # replaced: no heartbeat, broker up
    wait_until(lambda: len(down.children()) == 1, timeout=60)
    holds_for(lambda: len(down.children()) == 1, 2.0)  # a broker outage is no reason to restart
    assert down.stop() == 0 and up.stop() == 0
