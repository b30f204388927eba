"""Real PostgreSQL and Redis servers for the suite: the ones named by environment variables,
otherwise throwaway servers started from the Debian binaries (and stopped at the end)."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[1]

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, timeout: float = 30.0, proc: subprocess.Popen[bytes] | None = None) -> None:
    """Wait until something listens on the port; with ``proc`` (the process that will listen), fail as soon as it
    exits instead of at the deadline."""
    def listening() -> bool:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            if proc is not None and proc.poll() is not None:
                raise RuntimeError(f"the process meant to listen on 127.0.0.1:{port} exited ({proc.returncode})"
                                   ) from None
            return False

    try:
        wait_until(listening, timeout)
    except AssertionError:
        raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout}s") from None


# a gateway still importing on a machine at load 20 can take 30 s and more to listen; one that died fails at once
GATEWAY_START_S = 180.0


def start_gateway(db_url: str, log: Path, extra_env: dict[str, str] | None = None
                  ) -> tuple[str, subprocess.Popen[bytes]]:
    """A ``tierpilot gateway`` process on a free port against ``db_url`` (default tier hot-disk): (URL, process)."""
    port = free_port()
    env = {**os.environ, "TIERPILOT_DATABASE_URL": db_url, "TIERPILOT_DEFAULT_TIER": "hot-disk", **(extra_env or {})}
    with open(log, "ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "tierpilot.app.cli", "gateway", "--port", str(port),
                                 "--log-level", "warning"], env=env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
    try:
        wait_port(port, timeout=GATEWAY_START_S, proc=proc)
    except RuntimeError:
        proc.kill()
        raise RuntimeError(f"gateway did not start:\n{log.read_text()[-3000:]}") from None
    return f"http://127.0.0.1:{port}", proc


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Terminate a process started here, killing it when it does not end within 15 s."""
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@dataclass
class Server:
    url: str
    stop_cmds: list[list[str]] = field(default_factory=list)
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    tmpdir: str | None = None

    def stop(self) -> None:
        for cmd in self.stop_cmds:
            subprocess.run(cmd, capture_output=True, timeout=60)
        for proc in self.procs:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        if self.tmpdir:
            shutil.rmtree(self.tmpdir, ignore_errors=True)


def _pg_bin(name: str) -> str:
    found = shutil.which(name) if name != "initdb" else None
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)
    if candidates:
        return candidates[0]
    if found:
        return found
    raise RuntimeError(f"PostgreSQL binary {name} not found: run `make setup` (installs Debian's postgresql)")


def start_postgres() -> Server:
    """A throwaway cluster in a temp dir; initdb refuses root, so it runs as the postgres user."""
    url = os.environ.get("TIERPILOT_TEST_POSTGRES_URL")
    if url:
        return Server(url=url)
    tmp = tempfile.mkdtemp(prefix="tierpilot-pg-")
    datadir = Path(tmp) / "data"
    port = free_port()
    as_user: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(tmp, "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    subprocess.run(as_user + [_pg_bin("initdb"), "-D", str(datadir), "-A", "trust", "-U", "postgres",
                              "--no-sync", "-E", "UTF8"], check=True, capture_output=True)
    subprocess.run(as_user + [_pg_bin("pg_ctl"), "-D", str(datadir), "-l", str(Path(tmp) / "log"), "-w",
                              "-o", f"-p {port} -k {tmp} -c listen_addresses=127.0.0.1 -c fsync=off "
                              "-c max_connections=200", "start"], check=True, capture_output=True)
    stop = [as_user + [_pg_bin("pg_ctl"), "-D", str(datadir), "-m", "immediate", "stop"]]
    return Server(url=f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres", stop_cmds=stop, tmpdir=tmp)


def create_database(server_url: str, prefix: str) -> tuple[str, Callable[[], None]]:
    """A new, empty database on a PostgreSQL server: (its URL, a function that drops it)."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    name = f"{prefix}_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    admin = create_engine(server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))

    def drop() -> None:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    return make_url(server_url).set(database=name).render_as_string(hide_password=False), drop


def start_redis() -> Server:
    url = os.environ.get("TIERPILOT_TEST_REDIS_URL")
    if url:
        return Server(url=url)
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server not found: run `make setup` (installs Debian's redis-server)")
    tmp = tempfile.mkdtemp(prefix="tierpilot-redis-")
    port = free_port()
    proc = subprocess.Popen([binary, "--bind", "127.0.0.1", "--port", str(port), "--save", "",
                             "--appendonly", "no", "--dir", tmp], stdout=subprocess.DEVNULL)
    wait_port(port, timeout=60, proc=proc)
    return Server(url=f"redis://127.0.0.1:{port}/0", procs=[proc], tmpdir=tmp)
