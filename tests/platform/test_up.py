"""`tierpilot up` starts the whole product on a fresh data dir, restarts a child that dies, and stops every child
on SIGTERM/SIGINT."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from celery import Celery

from tests.servers import free_port
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT_S = 120


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-eo", "pid=,ppid="], capture_output=True, text=True).stdout
    return [int(p) for p, pp in (line.split() for line in out.splitlines()) if int(pp) == pid]


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting to be reaped."""
    with contextlib.suppress(OSError):
        return "Z" not in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    return False


def _group_members(pgid: int) -> list[str]:
    out = subprocess.run(["ps", "-eo", "pgid=,pid=,stat=,args="], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line.split()[0] == str(pgid) and "Z" not in line.split()[2]]


def _group_gone(pgid: int) -> list[str]:
    """The live processes left in a process group after a short while (SIGKILL is delivered asynchronously)."""
    left: list[str] = []

    def empty() -> bool:
        left[:] = _group_members(pgid)
        return not left

    with contextlib.suppress(AssertionError):
        wait_until(empty)
    return left


@dataclass
class Up:
    proc: subprocess.Popen[bytes]
    api: str
    gateway_port: int
    data_dir: Path
    log: Path
    env: dict[str, str]

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-6000:]

    def status(self) -> dict:
        return json.loads((self.data_dir / "supervisor.json").read_text())

    def health(self) -> dict:
        return httpx.get(f"{self.api}/api/health", timeout=5).json()


@contextlib.contextmanager
def _up(tmp_path: Path, **extra_env: str) -> Iterator[Up]:
    """`tierpilot up` on a scratch data dir and free ports, healthy; killed (whole group) if a test leaves it."""
    api_port, gw_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIERPILOT_")}
    env.update(TIERPILOT_DATA_DIR=str(tmp_path / "data"), TIERPILOT_API_PORT=str(api_port),
               TIERPILOT_GATEWAY_PORT=str(gw_port), TIERPILOT_BOOTSTRAP_ADMIN="boss:boss-password-1", **extra_env)
    log_path = tmp_path / "up.log"
    log = open(log_path, "wb")  # noqa: SIM115
    proc = subprocess.Popen([sys.executable, "-m", "tierpilot.app.cli", "up"], env=env, cwd=ROOT, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    up = Up(proc, f"http://127.0.0.1:{api_port}", gw_port, tmp_path / "data", log_path, env)
    try:
        def serving() -> httpx.Response | None:
            assert proc.poll() is None, up.tail()
            try:
                health = httpx.get(f"{up.api}/api/health", timeout=10)
            except httpx.HTTPError:
                return None
            return health if health.status_code == 200 and _listening(gw_port) else None

        health = wait_until(serving, STARTUP_TIMEOUT_S, step=0.3, message=up.tail)
        assert health.json()["status"] == "ok", up.tail()
        yield up
    finally:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_up_serves_api_and_gateway_then_stops_all_children(tmp_path: Path, sig: signal.Signals) -> None:
    with _up(tmp_path) as up:
        with httpx.Client(base_url=up.api) as c:
            r = c.post("/api/auth/login", json={"username": "boss", "password": "boss-password-1"})
            assert r.status_code == 200, up.tail()
            names = {t["name"] for t in c.get("/api/overview").json()["tiers"]}
            assert names == {"hot-disk", "infrequent", "archive"}  # the demo seed
        # the gateway answers S3 (an anonymous request is refused with an S3 XML error)
        r = httpx.get(f"http://127.0.0.1:{up.gateway_port}/", timeout=5)
        assert r.status_code == 403 and b"<Error>" in r.content
        children = _children(up.proc.pid)
        assert len(children) >= 4  # api, gateway, worker, beat (+ redis)

        up.proc.send_signal(sig)
        assert up.proc.wait(timeout=30) == 0
        assert [c for c in children if _alive(c)] == []
        assert not _listening(int(up.api.rsplit(":", 1)[1])) and not _listening(up.gateway_port)


def test_children_of_a_killed_supervisor_stop_and_free_their_ports(tmp_path: Path) -> None:
    """SIGKILL leaves the supervisor no time to stop its children, which run in sessions of their own: each was
    told at its start to take a SIGTERM when its parent dies, so none is left serving (nor holding the ports the
    next `tierpilot up` binds)."""
    with _up(tmp_path) as up:
        children = _children(up.proc.pid)
        assert len(children) >= 4  # api, gateway, worker, beat (+ redis)
        up.proc.kill()
        up.proc.wait(timeout=10)
        wait_until(lambda: not [c for c in children if _alive(c)],  # a bound for their graceful stop
                   message=lambda: str([c for c in children if _alive(c)]))
        assert not _listening(int(up.api.rsplit(":", 1)[1])) and not _listening(up.gateway_port)


def _wait_restarted(up: Up, name: str, old_pid: int, restarts: int) -> dict:
    """Poll the status file until the supervisor reports `name` running again under a new pid."""
    def restarted() -> dict | None:
        assert up.proc.poll() is None, f"`tierpilot up` exited after {name} died:\n{up.tail()}"
        child = up.status()["children"][name]
        running_again = child["state"] == "running" and child["pid"] != old_pid and child["restarts"] >= restarts
        return dict(child) if running_again else None

    return wait_until(restarted, message=lambda: f"{name} was not restarted:\n{up.tail()}")


def _gateway_serves(up: Up) -> None:
    def answered() -> httpx.Response | None:
        try:
            return httpx.get(f"http://127.0.0.1:{up.gateway_port}/", timeout=10)
        except httpx.TransportError:
            return None

    r = wait_until(answered, message=up.tail)
    assert r.status_code == 403 and b"<Error>" in r.content


def _health_checks(up: Up, redis_url: str) -> dict[str, int]:
    """The exit codes of the container health checks (`tierpilot health X`) run against this product."""
    env = dict(up.env, TIERPILOT_REDIS_URL=redis_url)
    return {name: subprocess.run([sys.executable, "-m", "tierpilot.app.cli", "health", name], env=env, cwd=ROOT,
                                 capture_output=True, timeout=60).returncode
            for name in ("api", "gateway", "worker", "beat")}


def _worker_serves(broker: Celery) -> None:
    """A real task round trip through the restarted worker (the task is idempotent)."""
    result = broker.send_task("reservations.advance_states")
    result.get(timeout=60)


def test_up_restarts_a_killed_gateway_and_worker_and_shows_it_in_health(tmp_path: Path) -> None:
    kills = 3
    with _up(tmp_path, TIERPILOT_SUPERVISOR_BACKOFF_S="0.2") as up:
        redis_url = up.status()["redis_url"]
        assert redis_url, "this test needs redis-server on PATH (the embedded broker)"
        broker = Celery("probe", broker=redis_url, backend=redis_url)
        try:
            for round_ in range(1, kills + 1):
                for name in ("gateway", "worker"):
                    old = up.status()["children"][name]["pid"]
                    os.kill(old, signal.SIGKILL)
                    child = _wait_restarted(up, name, old, round_)
                    assert child["restarts"] == round_ and child["last_exit"] == -signal.SIGKILL
                    assert _group_gone(old) == []  # the dead worker's pool processes went with it
                _gateway_serves(up)
                _worker_serves(broker)
            health = up.health()
            children = health["supervisor"]["children"]
            assert children["gateway"]["restarts"] == kills and children["worker"]["restarts"] == kills
            assert children["api"]["restarts"] == 0 and children["gateway"]["state"] == "running"
            log = up.log.read_text(errors="replace")
            assert log.count("supervisor: gateway died (killed by SIGKILL)") == kills
            assert log.count("supervisor: worker died (killed by SIGKILL)") == kills

            assert _health_checks(up, redis_url) == {"api": 0, "gateway": 0, "worker": 0, "beat": 0}

            current = [c["pid"] for c in up.status()["children"].values()]
            up.proc.send_signal(signal.SIGTERM)
            assert up.proc.wait(timeout=30) == 0
            assert [p for p in current if _alive(p)] == []
            assert not _listening(up.gateway_port)
            stopped = _health_checks(up, redis_url)
            assert stopped["api"] == stopped["gateway"] == stopped["worker"] == 1, stopped
        finally:
            broker.close()
