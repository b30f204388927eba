"""`tierpilot worker` keeps its Celery worker running in every deployment (bare, under `tierpilot up`, in a
container): Celery runs as a child process that is started again, with backoff, whenever it ends without being asked
to, and stopped and started again when it has stopped consuming (no heartbeat from its consumer, ``worker/steps.py``)
while the broker answers. Celery retries a lost broker by itself, but kombu's clean-up of the lost connection can
raise past that (``Unrecoverable error: AttributeError("'NoneType' object has no attribute 'hostname'")`` when Redis
dies while tasks finish): Celery then finishes its running tasks and exits, with code 0. SIGTERM and SIGINT stop the
child warmly; this process then exits with its code."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tierpilot.app.supervisor import RestartPolicy, Restarts, _describe_exit, _die_with
from tierpilot.kit.settings import get_settings
from worker.steps import HEARTBEAT_ENV

# a consumer that has not beaten this long while the broker answers is stuck: longer than Celery's start on a loaded
# machine and than its longest wait between reconnection attempts (30 s)
STALE_S = 120.0
STOP_S = 60.0  # a stuck child's warm stop may finish its running tasks this long, then it is killed
CHECK_S = 1.0  # how often the child's exit, a signal and the heartbeat are looked at


def _log(message: str) -> None:
    print(f"{time.strftime('%Y-%m-%dT%H:%M:%S%z')} worker keeper: {message}", file=sys.stderr, flush=True)


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


def _broker_answers() -> bool:
    from tierpilot.kit.jobs import broker_reachable

    return broker_reachable() == "ok"


class Keeper:
    """Runs ``argv`` until told to stop; ``broker_answers`` and ``clock`` are injectable for tests."""

    def __init__(self, argv: list[str], heartbeat: Path, broker_answers: Callable[[], bool] = _broker_answers,
                 stale_s: float = STALE_S, clock: Callable[[], float] = time.time) -> None:
        s = get_settings()
        self.argv, self.heartbeat, self.broker_answers, self.stale_s, self.clock = (
            argv, heartbeat, broker_answers, stale_s, clock)
        self.restarts = Restarts(RestartPolicy(s.supervisor_backoff_s, s.supervisor_backoff_max_s,
                                               s.supervisor_restarts_per_minute))
        self.proc: subprocess.Popen[bytes] | None = None
        self.started_at = 0.0
        self.stopping = False
        self.broker_down_at = 0.0

    def start(self) -> None:
        self.heartbeat.touch()
        # in this process's group, so that a signal to the group (`tierpilot up`, a terminal, a test) reaches Celery
        # and its pool as before; the child stops when this process dies alone
        self.proc = subprocess.Popen(self.argv, env=dict(os.environ, **{HEARTBEAT_ENV: str(self.heartbeat)}),
                                     preexec_fn=_die_with(os.getpid()))
        self.started_at = time.monotonic()

    def stop(self, _signum: int = 0, _frame: object = None) -> None:
        """SIGTERM/SIGINT: Celery's warm shutdown. Forwarded as SIGTERM, which Celery takes as warm however often it
        comes: a Ctrl-C reaches the child too, and a second SIGINT would turn its shutdown cold."""
        self.stopping = True
        if self.proc is not None and self.proc.poll() is None:
            _signal(self.proc.pid, signal.SIGTERM)

    def stale(self) -> bool:
        """No heartbeat for ``stale_s``, counted from when the broker last did not answer: after an outage the
        child has that long to reconnect by itself."""
        try:
            last = max(self.heartbeat.stat().st_mtime, self.broker_down_at)
        except FileNotFoundError:
            last = self.broker_down_at
        if self.clock() - last <= self.stale_s:
            return False
        if self.broker_answers():
            return True
        self.broker_down_at = self.clock()
        return False

    def run(self) -> int:
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)
        self.start()
        while True:
            assert self.proc is not None
            try:
                code = self.proc.wait(timeout=CHECK_S)
            except subprocess.TimeoutExpired:
                if self.stopping or not self.stale():
                    continue
                _log(f"the Celery worker (pid {self.proc.pid}) has not consumed for {self.stale_s:.0f} s while the "
                     "broker answers: stopping it")
                _signal(self.proc.pid, signal.SIGTERM)
                try:
                    code = self.proc.wait(timeout=STOP_S)
                except subprocess.TimeoutExpired:
                    _signal(self.proc.pid, signal.SIGKILL)  # its pool processes end after their tasks
                    code = self.proc.wait()
            if self.stopping:
                return code if code >= 0 else 128 - code
            # any other end was not asked for, an exit code of 0 too: Celery exits with 0 after an unrecoverable error
            died = time.monotonic()
            at = self.restarts.due(died, self.started_at)
            _log(f"the Celery worker (pid {self.proc.pid}) died ({_describe_exit(code)}) after "
                 f"{died - self.started_at:.1f} s; starting it again in {at - died:.1f} s")
            while not self.stopping and time.monotonic() < at:
                time.sleep(min(CHECK_S, max(0.0, at - time.monotonic())))
            if self.stopping:
                return 0
            self.restarts.record(time.monotonic())
            self.start()


def keep(argv: list[str]) -> int:
    """Run the Celery worker command ``argv`` under a ``Keeper``; its exit code once stopped."""
    fd, path = tempfile.mkstemp(prefix="tierpilot-worker-", suffix=".heartbeat")
    os.close(fd)
    try:
        return Keeper(argv, Path(path)).run()
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
