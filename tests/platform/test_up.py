"""`tierpilot up` starts the whole product on a fresh data dir and stops every child on SIGTERM."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.servers import free_port

ROOT = Path(__file__).resolve().parents[2]


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-eo", "pid=,ppid="], capture_output=True, text=True).stdout
    return [int(p) for p, pp in (line.split() for line in out.splitlines()) if int(pp) == pid]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_up_serves_api_and_gateway_then_stops_all_children(tmp_path: Path, sig: signal.Signals) -> None:
    api_port, gw_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIERPILOT_")}
    env.update(TIERPILOT_DATA_DIR=str(tmp_path / "data"), TIERPILOT_API_PORT=str(api_port),
               TIERPILOT_GATEWAY_PORT=str(gw_port), TIERPILOT_BOOTSTRAP_ADMIN="boss:boss-password-1")
    log = open(tmp_path / "up.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen([sys.executable, "-m", "tierpilot.cli", "up"], env=env, cwd=ROOT, stdout=log,
                            stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        health = None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                health = httpx.get(f"http://127.0.0.1:{api_port}/api/health", timeout=2)
                if health.status_code == 200 and _listening(gw_port):
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        assert health is not None and health.json()["status"] == "ok", (tmp_path / "up.log").read_text()
        with httpx.Client(base_url=f"http://127.0.0.1:{api_port}") as c:
            r = c.post("/api/auth/login", json={"username": "boss", "password": "boss-password-1"})
            assert r.status_code == 200, (tmp_path / "up.log").read_text()[-5000:]
            names = {t["name"] for t in c.get("/api/overview").json()["tiers"]}
            assert names == {"hot-disk", "infrequent", "archive"}  # the demo seed
        # the gateway answers S3 (an anonymous request is refused with an S3 XML error)
        r = httpx.get(f"http://127.0.0.1:{gw_port}/", timeout=5)
        assert r.status_code == 403 and b"<Error>" in r.content
        children = _children(proc.pid)
        assert len(children) >= 4  # api, gateway, worker, beat (+ redis)

        proc.send_signal(sig)
        assert proc.wait(timeout=30) == 0
        time.sleep(0.5)
        alive = [c for c in children if Path(f"/proc/{c}").exists()
                 and "Z" not in Path(f"/proc/{c}/stat").read_text().split()[2]]
        assert alive == []
        assert not _listening(api_port) and not _listening(gw_port)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
