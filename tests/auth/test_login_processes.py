"""Login limits against real API processes (``tierpilot api``, uvicorn) sharing one Redis: a forged
X-Forwarded-For does not make an address new, and every process counts the same failures."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import ROOT
from tests.servers import free_port, wait_port


@pytest.fixture
def two_api_processes(db: str, redis_url: str, data_dir: Path) -> Iterator[list[str]]:
    import redis

    shared = redis_url.rsplit("/", 1)[0] + "/13"
    redis.Redis.from_url(shared).flushdb()
    env = dict(os.environ, TIERPILOT_DATABASE_URL=db, TIERPILOT_REDIS_URL=shared, TIERPILOT_LOGIN_ADDRESS_FAILURES="10")
    procs, urls = [], []
    log = open(data_dir / "api-login.log", "ab")  # noqa: SIM115
    try:
        for _ in range(2):
            port = free_port()
            procs.append(subprocess.Popen([sys.executable, "-m", "tierpilot.app.cli", "api", "--port", str(port)],
                                          env=env, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT))
            urls.append(f"http://127.0.0.1:{port}")
        for url in urls:
            wait_port(int(url.rsplit(":", 1)[1]))
        yield urls
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
        log.close()
        redis.Redis.from_url(shared).flushdb()


def test_a_new_forwarded_for_per_request_does_not_escape_the_address_limit_of_any_process(
        two_api_processes: list[str]) -> None:
    codes = []
    for i in range(13):
        url = two_api_processes[i % 2]  # the processes take turns: only shared counts add up
        r = httpx.post(f"{url}/api/auth/login", json={"username": f"nobody-{i}", "password": "wrong-password"},
                       headers={"X-Forwarded-For": f"203.0.113.{i}"}, timeout=30)
        codes.append(r.status_code)
    assert codes[:10] == [401] * 10, codes
    assert codes[10:] == [429] * 3, codes
    r = httpx.post(f"{two_api_processes[0]}/api/auth/login", json={"username": "x", "password": "y"}, timeout=30)
    assert r.status_code == 429 and int(r.headers["retry-after"]) > 0
