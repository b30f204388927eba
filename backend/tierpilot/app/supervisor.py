"""`tierpilot up`: run api, gateway, worker and beat (and an embedded redis-server) as child processes,
restart a child that dies (with backoff, a bound per minute), and stop them all on SIGTERM/SIGINT."""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tierpilot.app.bootstrap import DEMO_USER, bootstrap_admin, has_users, seed_demo
from tierpilot.kit.migrate import upgrade
from tierpilot.kit.settings import get_settings
from tierpilot.kit.supervision import write_status

WINDOW_S = 60.0  # the bound on restarts counts them in any window this long


@dataclass(frozen=True)
class RestartPolicy:
    backoff_s: float
    backoff_max_s: float
    per_minute: int
    # a child that ran this long before it died was healthy: its backoff starts over
    stable_s: float = WINDOW_S


@dataclass
class Restarts:
    """When a child that died may start again: the backoff doubles per death in a row, and no more than
    `per_minute` restarts fall in any 60 s (further ones wait until the oldest leaves the window)."""

    policy: RestartPolicy
    in_a_row: int = 0
    history: deque[float] = field(default_factory=deque)

    def due(self, died_at: float, started_at: float) -> float:
        """The monotonic time to restart a child that started at `started_at` and died at `died_at`."""
        if died_at - started_at >= self.policy.stable_s:
            self.in_a_row = 0
        delay = min(self.policy.backoff_max_s, self.policy.backoff_s * 2 ** min(self.in_a_row, 32))
        self.in_a_row += 1
        at = died_at + delay
        recent = [t for t in self.history if t > at - WINDOW_S]
        if len(recent) >= self.policy.per_minute:
            at = max(at, recent[-self.policy.per_minute] + WINDOW_S)
        return at

    def record(self, at: float) -> None:
        self.history.append(at)
        while self.history and self.history[0] <= at - WINDOW_S:
            self.history.popleft()


def _utc(ts: float | None = None) -> str:
    return datetime.fromtimestamp(time.time() if ts is None else ts, UTC).isoformat(timespec="seconds")


def _describe_exit(code: int) -> str:
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
    return f"exit code {code}"


_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)  # loaded before any fork: the child only calls it


def _die_with(parent: int) -> Callable[[], None]:
    """A child's first step after the fork: SIGTERM when the supervisor dies (a SIGKILLed supervisor left its
    children serving on their own sessions, holding the ports the next supervisor's children then could not
    bind); and exit at once if it died before that was set."""

    def arrange() -> None:
        _libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return arrange


@dataclass
class Child:
    name: str
    argv: list[str]
    restarts_policy: Restarts
    proc: subprocess.Popen[bytes] | None = None
    state: str = "starting"  # starting (its port not answering yet) | running | backoff | stopped
    port: int | None = None  # a child that serves a port is running once the port accepts a connection
    started_at: float = 0.0
    since: str = ""
    restarts: int = 0
    last_exit: int | None = None
    last_exit_at: str | None = None
    restart_at: float | None = None

    def start(self, env: dict[str, str], now: float) -> None:
        # a session of its own: the child's whole process group can be signalled (uvicorn and Celery fork)
        self.proc = subprocess.Popen(self.argv, env=env, start_new_session=True, preexec_fn=_die_with(os.getpid()))
        self.state = "starting" if self.port is not None else "running"
        self.started_at, self.since, self.restart_at = now, _utc(), None

    @property
    def alive(self) -> bool:
        return self.state in ("starting", "running") and self.proc is not None

    def answering(self) -> bool:
        """Whether the child's port accepts a connection now."""
        assert self.port is not None
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.1):
                return True
        except OSError:
            return False

    def view(self) -> dict[str, Any]:
        return {"state": self.state, "pid": self.proc.pid if self.proc and self.alive else None,
                "restarts": self.restarts, "last_exit": self.last_exit, "last_exit_at": self.last_exit_at,
                "since": self.since}


def _log(message: str) -> None:
    print(f"{_utc()} supervisor: {message}", file=sys.stderr, flush=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _redis_argv(data_dir: Path) -> tuple[list[str], int] | None:
    """A private redis-server for this data dir when none is configured and the binary exists."""
    binary = shutil.which("redis-server")
    if binary is None:
        return None
    port = _free_port()
    rdir = data_dir / "redis"
    rdir.mkdir(parents=True, exist_ok=True)
    return [binary, "--bind", "127.0.0.1", "--port", str(port), "--dir", str(rdir), "--save", "60 1",
            "--appendonly", "yes", "--logfile", str(rdir / "redis.log")], port


def _wait_listening(port: int, child: Child, log: Path) -> None:
    for _ in range(100):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    if child.proc is not None:
        child.proc.kill()
    raise SystemExit(f"embedded redis-server did not start; see {log}")


class Supervisor:
    """Runs the children, restarts the ones that die, records their states in the status file."""

    def __init__(self, children: list[Child], env: dict[str, str], status_path: Path, extra: dict[str, Any],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.children, self.env, self.status_path, self.extra, self.clock = children, env, status_path, extra, clock
        self.stopping = False

    def write_status(self) -> None:
        write_status(self.status_path, {"pid": os.getpid(), "updated_at": _utc(), **self.extra,
                                        "children": {c.name: c.view() for c in self.children}})

    def check(self) -> float | None:
        """Reap dead children, restart the due ones; the monotonic time of the next due restart."""
        now, changed = self.clock(), False
        for c in self.children:
            if c.state == "starting" and c.proc is not None and c.proc.poll() is None and c.answering():
                c.state, changed = "running", True
            if c.alive and c.proc is not None and c.proc.poll() is not None:
                code = c.proc.returncode
                _kill_group(c.proc.pid, signal.SIGKILL)  # what the dead child forked (uvicorn, Celery pool)
                ran = now - c.started_at
                c.state, c.last_exit, c.last_exit_at = "backoff", code, _utc()
                c.restart_at = c.restarts_policy.due(now, c.started_at)
                _log(f"{c.name} died ({_describe_exit(code)}) after {ran:.1f} s; restart {c.restarts + 1} "
                     f"in {c.restart_at - now:.1f} s")
                changed = True
            if c.state == "backoff" and c.restart_at is not None and now >= c.restart_at:
                c.restarts_policy.record(now)
                c.restarts += 1
                c.start(self.env, now)
                assert c.proc is not None
                _log(f"{c.name} restarted (restart {c.restarts}, pid {c.proc.pid})")
                changed = True
        if changed:
            self.write_status()
        due = [c.restart_at for c in self.children if c.state == "backoff" and c.restart_at is not None]
        return min(due) if due else None

    def stop_on_signals(self) -> None:
        """SIGTERM and SIGINT (Ctrl-C) end `run`, or keep it from starting when they come earlier."""

        def _stop(_signum: int, _frame: object) -> None:
            self.stopping = True

        signal.signal(signal.SIGTERM, _stop)
        signal.signal(signal.SIGINT, _stop)

    def run(self) -> None:
        """Until SIGTERM/SIGINT: wake on a child's death (SIGCHLD), a signal or the next due restart."""
        rfd, wfd = os.pipe()
        os.set_blocking(rfd, False)
        os.set_blocking(wfd, False)
        # a signal between `check` and `select` still wakes it: the byte waits in the pipe
        previous_fd = signal.set_wakeup_fd(wfd)
        signal.signal(signal.SIGCHLD, lambda _s, _f: None)  # its wake-up byte is what matters
        try:
            while not self.stopping:
                due = self.check()
                timeout = 5.0 if due is None else min(5.0, max(0.0, due - self.clock()))
                if any(c.state == "starting" for c in self.children):
                    timeout = min(timeout, 0.1)  # a starting child's port is looked at until it answers
                if self.stopping:
                    break
                select.select([rfd], [], [], timeout)
                with contextlib.suppress(BlockingIOError):
                    while os.read(rfd, 512):
                        pass
        finally:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            signal.set_wakeup_fd(previous_fd)
            os.close(rfd)
            os.close(wfd)

    def stop(self) -> None:
        """SIGTERM every running child's process group (redis last), then SIGKILL what is left after 10 s."""
        ordered = [c for c in self.children if c.name != "redis"] + [c for c in self.children if c.name == "redis"]
        running = [c for c in ordered if c.alive]
        for c in running:
            assert c.proc is not None
            if c.proc.poll() is None:
                _kill_group(c.proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for c in running:
            assert c.proc is not None
            try:
                c.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _kill_group(c.proc.pid, signal.SIGKILL)
                c.proc.wait()
            _kill_group(c.proc.pid, signal.SIGKILL)  # leftovers of a group whose leader already left
            c.state = "stopped"


def _kill_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def run_all() -> int:
    settings = get_settings()
    data_dir = settings.data_dir.resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    status_path = data_dir / "supervisor.json"
    env = dict(os.environ, TIERPILOT_DATA_DIR=str(data_dir), PYTHONUNBUFFERED="1",
               TIERPILOT_SUPERVISOR_STATUS_FILE=str(status_path))
    policy = RestartPolicy(settings.supervisor_backoff_s, settings.supervisor_backoff_max_s,
                           settings.supervisor_restarts_per_minute)

    def child(name: str, argv: list[str]) -> Child:
        return Child(name, argv, Restarts(policy))

    children: list[Child] = []
    extra: dict[str, Any] = {"started_at": _utc(), "redis_url": None}
    if not settings.redis_url:
        redis = _redis_argv(data_dir)
        if redis is not None:
            argv, port = redis
            c = child("redis", argv)
            c.start(env, time.monotonic())
            children.append(c)
            _wait_listening(port, c, data_dir / "redis" / "redis.log")
            env["TIERPILOT_REDIS_URL"] = extra["redis_url"] = f"redis://127.0.0.1:{port}/0"
        else:
            print("no redis-server on PATH: Celery uses the single-node SQLite transport under", data_dir)

    supervisor = Supervisor(children, env, status_path, extra)
    supervisor.stop_on_signals()
    try:
        upgrade()
        admin = bootstrap_admin()
        seeded = settings.seed_demo and seed_demo()
        users = has_users()

        exe = [sys.executable, "-m", "tierpilot.app.cli"]
        # the gateway's own --log-level; the others read TIERPILOT_LOG_LEVEL (warnings and errors by default)
        extra_args = {"gateway": ["--log-level", settings.log_level]}
        ports = {"api": settings.api_port, "gateway": settings.gateway_port}
        for name in ("api", "gateway", "worker", "beat"):
            c = child(name, [*exe, name, *extra_args.get(name, [])])
            c.port = ports.get(name)
            c.start(env, time.monotonic())
            children.append(c)
        supervisor.write_status()

        url = f"http://{settings.api_host}:{settings.api_port}"
        print(f"\ntierpilot is starting: dashboard and API at {url} , S3 gateway at {settings.gateway_url}")
        if seeded:
            print(f"demo sign-in: {DEMO_USER[0]} / {DEMO_USER[1]}")
        if admin:
            print(f"bootstrap admin: {admin}")
        if not users:
            print("no users yet: create an admin with `tierpilot users create NAME --admin` "
                  "(or set TIERPILOT_BOOTSTRAP_ADMIN=name:password)")
        print("Ctrl-C stops everything.\n", flush=True)
        supervisor.run()
    finally:
        supervisor.stop()
        with contextlib.suppress(FileNotFoundError):
            status_path.unlink()
    return 0
