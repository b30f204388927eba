"""Real gateway processes (two sharing a port, so metrics must add up over processes) and a real API
process on the suite's scratch database, with the gateway tests' users and tiers."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.conftest import ROOT, _truncate_all
from tests.gateway.conftest import Gateway, _setup_data, stop
from tests.servers import free_port, wait_port
from tierpilot.auth.models import User
from tierpilot.kit.db import transaction
from tierpilot.reservations import service as reservations

MB = 1_000_000


@dataclass
class Api:
    url: str
    proc: subprocess.Popen[bytes]


def _spawn(args: list[str], db_url: str, log: Path, port: int) -> subprocess.Popen[bytes]:
    env = dict(os.environ, TIERPILOT_DATABASE_URL=db_url, TIERPILOT_DEFAULT_TIER="hot-disk",
               TIERPILOT_TRACE_SAMPLE_RATE="0")
    out = open(log, "ab")  # noqa: SIM115
    proc = subprocess.Popen([sys.executable, "-m", "tierpilot.app.cli", *args, "--port", str(port)], env=env,
                            stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
    try:
        wait_port(port, timeout=60)
    except RuntimeError:
        proc.kill()
        raise RuntimeError(f"{args[0]} did not start:\n{log.read_text()[-3000:]}") from None
    return proc


@pytest.fixture(scope="package")
def gateway(db_url: str, data_dir: Path) -> Iterator[Gateway]:
    """Two gateway processes behind one port (uvicorn workers)."""
    tag = uuid.uuid4().hex[:8]
    users, dirs = _setup_data(tag)
    log = data_dir / f"obs-gateway-{tag}.log"
    port = free_port()
    proc = _spawn(["gateway", "--workers", "2", "--log-level", "warning"], db_url, log, port)
    gw = Gateway(url=f"http://127.0.0.1:{port}", proc=proc, log=log, users=users, tier_dirs=dirs)
    yield gw
    stop(proc)
    _truncate_all()


@pytest.fixture(scope="package")
def api(db_url: str, data_dir: Path, gateway: Gateway) -> Iterator[Api]:
    """The API in its own process (Prometheus scrapes it over TCP)."""
    port = free_port()
    proc = _spawn(["api"], db_url, data_dir / "obs-api.log", port)
    yield Api(url=f"http://127.0.0.1:{port}", proc=proc)
    stop(proc)


@dataclass
class Booked:
    bucket: str
    reservation_id: str


@pytest.fixture
def read_reservation(gateway: Gateway) -> Iterator[Booked]:
    """A live read reservation of alice's on a bucket of hers (200 of 400 MB/s), cancelled after."""
    alice = gateway.users["alice"]
    bucket = f"rsv-{uuid.uuid4().hex[:10]}"
    gateway.client("alice").create_bucket(Bucket=bucket)
    with transaction(write=True) as s:
        pool = reservations.capacity(s)
        old = (pool.read_bps, pool.write_bps)
        reservations.set_capacity(s, 400 * MB, 400 * MB)
        owner = s.get(User, alice.id)
        assert owner is not None
        start = datetime.now(UTC) - timedelta(seconds=1)
        rid = reservations.book(s, owner, bucket=bucket, direction="read", rate_bps=200 * MB, start=start,
                                end=start + timedelta(minutes=10)).id
    yield Booked(bucket, rid)
    with transaction(write=True) as s:
        owner = s.get(User, alice.id)
        assert owner is not None
        reservations.cancel(s, owner, rid)
        reservations.set_capacity(s, *old)
