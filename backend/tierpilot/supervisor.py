"""`tierpilot up`: run api, gateway, worker and beat (and an embedded redis-server) as child processes."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from tierpilot.bootstrap import DEMO_USER, bootstrap_admin, seed_demo
from tierpilot.kit.migrate import upgrade
from tierpilot.kit.settings import get_settings


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_redis(data_dir: Path) -> tuple[subprocess.Popen[bytes], str] | None:
    """A private redis-server for this data dir when none is configured and the binary exists."""
    binary = shutil.which("redis-server")
    if binary is None:
        return None
    port = _free_port()
    rdir = data_dir / "redis"
    rdir.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [binary, "--bind", "127.0.0.1", "--port", str(port), "--dir", str(rdir), "--save", "60 1",
         "--appendonly", "yes", "--logfile", str(rdir / "redis.log")],
        start_new_session=True,
    )
    for _ in range(100):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, f"redis://127.0.0.1:{port}/0"
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("embedded redis-server did not start; see " + str(rdir / "redis.log"))


def run_all() -> int:
    settings = get_settings()
    data_dir = settings.data_dir.resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, TIERPILOT_DATA_DIR=str(data_dir), PYTHONUNBUFFERED="1")

    children: list[tuple[str, subprocess.Popen[bytes]]] = []
    if not settings.redis_url:
        started = _start_redis(data_dir)
        if started is not None:
            children.append(("redis", started[0]))
            env["TIERPILOT_REDIS_URL"] = started[1]
        else:
            print("no redis-server on PATH: Celery uses the single-node SQLite transport under", data_dir)

    upgrade()
    admin = bootstrap_admin()
    seeded = settings.seed_demo and seed_demo()

    exe = [sys.executable, "-m", "tierpilot.cli"]
    for name, args in (("api", ["api"]), ("gateway", ["gateway"]), ("worker", ["worker"]), ("beat", ["beat"])):
        children.append((name, subprocess.Popen(exe + args, env=env, start_new_session=True)))

    stopping = False

    def _stop(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)

    url = f"http://{settings.api_host}:{settings.api_port}"
    print(f"\ntierpilot is starting: dashboard and API at {url} , S3 gateway at {settings.gateway_url}")
    if seeded or admin is None:
        print(f"demo sign-in: {DEMO_USER[0]} / {DEMO_USER[1]}")
    if admin:
        print(f"bootstrap admin: {admin}")
    print("Ctrl-C stops everything.\n", flush=True)

    code = 0
    while not stopping:
        for name, proc in children:
            if proc.poll() is not None:
                print(f"{name} exited with code {proc.returncode}; stopping the others", file=sys.stderr)
                stopping, code = True, 1
                break
        time.sleep(0.2)

    _terminate(children)
    return code


def _terminate(children: list[tuple[str, subprocess.Popen[bytes]]]) -> None:
    """SIGTERM every child's process group (redis last), then SIGKILL what is left after 10 s."""
    ordered = [c for c in children if c[0] != "redis"] + [c for c in children if c[0] == "redis"]
    for _name, proc in ordered:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    for _name, proc in ordered:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
