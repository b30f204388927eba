"""Faults under write load, on SQLite and on PostgreSQL: does any acknowledged write get lost?

Four faults, each in a fresh installation (data dir, database, Redis, one `tierpilot gateway` process), each
``--rounds`` times while writers PUT and overwrite keys through the gateway with retries off (a quarter of them
under a write reservation, so the limiter's Redis is in the path):

1. ``commit_cut`` – the gateway's PostgreSQL connection cut at a COMMIT of the objects table, before it reaches the
   server or after the server answered (alternately; tests/pgfault.py's CommitCutter). PostgreSQL only.
2. ``sigkill`` – the gateway process SIGKILLed mid-burst and started again on the same port.
3. ``disk_full`` – the data dir (tier, SQLite database) is a tmpfs this script mounts and removes; a round fills
   what is left of it with a ballast file, waits for writes to fail, removes the ballast and waits for writes to
   be acknowledged again.
4. ``redis_restart`` – the Redis server SIGKILLed under load and started again on the same port.

Every write's answer goes into a ledger: per key the last acknowledged body and the bodies tried since (any of
them may have committed unanswered). After the rounds a fresh gateway reads every acknowledged key back: a key
missing or holding bytes of no write acknowledged or tried since is lost. Then `tierpilot fsck --json --min-age 0`
reports what the tiers and the catalog disagree on (missing blobs are losses; orphans are bytes nobody points at).
The table prints acknowledged, failed, lost and fsck's findings per fault and database; its rows are recorded
through bench/figures.py as ``faults.<fault>.<database>`` (value: writes lost).

Run (root, for the tmpfs): .venv/bin/python bench/faults.py [--rounds 5] [--db sqlite,postgresql]
         [--faults commit_cut,sigkill,disk_full,redis_restart]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
from botocore.client import BaseClient
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.figures import Run, record  # noqa: E402
from tests.pgfault import CommitCutter  # noqa: E402
from tests.servers import Server, create_database, free_port, start_postgres, wait_port  # noqa: E402
from tests.waiting import wait_until  # noqa: E402

FAULTS = ("commit_cut", "sigkill", "disk_full", "redis_restart")
WRITERS = 4
BODY = 16 * 1024
TMPFS_SIZE = "256m"
ROUND_TIMEOUT_S = 120.0
MB = 1_000_000


class Ledger:
    """Per key: the last acknowledged body (None: acknowledged deleted) and the bodies tried after it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.acked: dict[str, bytes | None] = {}
        self.since: dict[str, list[bytes | None]] = {}
        self.acks = 0
        self.failures = 0
        self.attempts = 0

    def tried(self, key: str, body: bytes | None) -> None:
        with self.lock:
            self.attempts += 1
            self.since.setdefault(key, []).append(body)

    def answered(self, key: str, body: bytes | None, ok: bool) -> None:
        with self.lock:
            if ok:
                self.acked[key] = body
                self.since[key] = []
                self.acks += 1
            else:
                self.failures += 1

    def allowed(self, key: str) -> list[bytes | None]:
        return [self.acked[key], *self.since.get(key, [])]

    def progressed(self, acks: int, by: int = WRITERS) -> Callable[[], bool]:
        return lambda: self.acks >= acks + by


@dataclass
class Installation:
    """A data dir, a database and a Redis; a gateway on a fixed port (started again after a kill)."""


    db: str
    data_dir: Path
    db_url: str
    redis_port: int
    redis_dir: Path
    metrics_dir: Path
    port: int = field(default_factory=free_port)
    gateway_db_url: str = ""
    gateway: subprocess.Popen[bytes] | None = None
    redis: subprocess.Popen[bytes] | None = None
    keys: dict[str, str] = field(default_factory=dict)
    reservation: str = ""

    @property
    def redis_url(self) -> str:
        return f"redis://127.0.0.1:{self.redis_port}/0"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.metrics_dir.parent / "gateway.log"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TIERPILOT_", "PROMETHEUS_"))}
        env.update(TIERPILOT_DATA_DIR=str(self.data_dir), TIERPILOT_DATABASE_URL=self.db_url,
                   TIERPILOT_REDIS_URL=self.redis_url, TIERPILOT_SECRET_KEY="faults-secret-key",
                   TIERPILOT_DEFAULT_TIER="faults-hot", TIERPILOT_SEED_DEMO="false",
                   PROMETHEUS_MULTIPROC_DIR=str(self.metrics_dir))  # not on the tmpfs a fault fills
        return env

    def start_redis(self) -> None:
        self.redis = subprocess.Popen(["redis-server", "--bind", "127.0.0.1", "--port", str(self.redis_port),
                                       "--save", "", "--appendonly", "no", "--dir", str(self.redis_dir)],
                                      stdout=subprocess.DEVNULL)
        wait_port(self.redis_port, timeout=60, proc=self.redis)

    def kill_redis(self) -> None:
        assert self.redis is not None
        self.redis.send_signal(signal.SIGKILL)
        self.redis.wait()

    def start_gateway(self) -> None:
        env = {**self.env(), "TIERPILOT_DATABASE_URL": self.gateway_db_url or self.db_url}
        with open(self.log, "ab") as out:
            self.gateway = subprocess.Popen([sys.executable, "-m", "tierpilot.app.cli", "gateway", "--port",
                                             str(self.port), "--log-level", "warning"], env=env, stdout=out,
                                            stderr=subprocess.STDOUT, cwd=ROOT)
        try:
            wait_port(self.port, timeout=180, proc=self.gateway)
        except RuntimeError:
            raise RuntimeError(f"gateway did not start:\n{self.log.read_text()[-3000:]}") from None

    def kill_gateway(self, sig: int = signal.SIGKILL) -> None:
        assert self.gateway is not None
        self.gateway.send_signal(sig)
        try:
            self.gateway.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.gateway.kill()
            self.gateway.wait()

    def stop(self) -> None:
        if self.gateway is not None and self.gateway.poll() is None:
            self.kill_gateway(signal.SIGTERM)
        if self.redis is not None and self.redis.poll() is None:
            self.kill_redis()

    def client(self, reservation: bool = False) -> BaseClient:
        s3 = boto3.client("s3", endpoint_url=self.url, aws_access_key_id=self.keys["access_key_id"],
                          aws_secret_access_key=self.keys["secret_access_key"], region_name="us-east-1",
                          config=Config(retries={"max_attempts": 1}, connect_timeout=5, read_timeout=30))
        if reservation:
            def add_header(params: dict[str, Any], **_: Any) -> None:
                params["headers"]["X-Tierpilot-Reservation"] = self.reservation

            s3.meta.events.register("before-call.s3", add_header)
        return s3

    def fsck(self) -> dict[str, Any]:
        done = subprocess.run([sys.executable, "-m", "tierpilot.app.cli", "fsck", "--json", "--min-age", "0"],
                              env=self.env(), capture_output=True, text=True, timeout=600, cwd=ROOT)
        try:
            return dict(json.loads(done.stdout.strip().splitlines()[-1]))
        except (IndexError, json.JSONDecodeError):
            return {"counts": {"error": 1}, "stderr": done.stderr[-2000:]}


def _seed(inst: Installation) -> None:
    """A user with an S3 key, the posix tier and a write reservation, through the services."""
    from tierpilot.app import wiring
    from tierpilot.auth import service as auth
    from tierpilot.kit import db as kitdb
    from tierpilot.kit.migrate import upgrade
    from tierpilot.kit.settings import get_settings
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.schemas import TierCreate

    os.environ.update({k: v for k, v in inst.env().items() if k.startswith(("TIERPILOT_", "PROMETHEUS_"))})
    get_settings.cache_clear()
    upgrade(inst.db_url)
    engine = kitdb.make_engine(inst.db_url)
    kitdb.set_engine(engine)
    wiring.install()
    try:
        with kitdb.transaction(write=True) as s:
            _, key = auth.create_user(s, "writer", "writer-password-1")
            inst.keys = {"access_key_id": key.access_key_id, "secret_access_key": key.secret_access_key}
            tiers.create(s, TierCreate(name="faults-hot", driver="posix", config={"path": "faults/hot"},
                                       storage_classes=["STANDARD"]))
    finally:
        kitdb.set_engine(None)
        engine.dispose()


def _book(inst: Installation, bucket: str) -> None:
    from tierpilot.auth.models import User
    from tierpilot.kit import db as kitdb
    from tierpilot.reservations import service

    engine = kitdb.make_engine(inst.db_url)
    kitdb.set_engine(engine)
    try:
        with kitdb.transaction(write=True) as s:
            service.set_capacity(s, 400 * MB, 400 * MB, 0.1)
            owner = s.query(User).filter_by(username="writer").one()
            start = datetime.now(UTC) - timedelta(seconds=1)
            inst.reservation = service.book(s, owner, bucket=bucket, direction="write", rate_bps=50 * MB,
                                            start=start, end=start + timedelta(hours=2)).id
    finally:
        kitdb.set_engine(None)
        engine.dispose()


@contextmanager
def installation(db: str, postgres: Server | None, on_tmpfs: bool) -> Iterator[Installation]:
    with ExitStack() as stack:
        base = Path(tempfile.mkdtemp(prefix="tierpilot-faults-"))
        stack.callback(shutil.rmtree, base, ignore_errors=True)
        data_dir = base / "data"
        data_dir.mkdir()
        if on_tmpfs:
            subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE}", "tmpfs", str(data_dir)], check=True)
            stack.callback(subprocess.run, ["umount", "-l", str(data_dir)], check=False)
        if db == "postgresql":
            assert postgres is not None
            db_url, drop = create_database(postgres.url, "tierpilot_faults")
            stack.callback(drop)
        else:
            db_url = f"sqlite:///{data_dir / 'tierpilot.db'}"
        (base / "metrics").mkdir()
        (base / "redis").mkdir()
        inst = Installation(db=db, data_dir=data_dir, db_url=db_url, redis_port=free_port(),
                            redis_dir=base / "redis", metrics_dir=base / "metrics")
        _seed(inst)
        inst.start_redis()
        stack.callback(inst.stop)
        yield inst


class Writers:
    """``WRITERS`` threads PUTting (each key twice: a new key, then an overwrite) until stopped."""

    def __init__(self, inst: Installation, bucket: str, body: int) -> None:
        self.inst, self.bucket, self.body = inst, bucket, body
        self.ledger = Ledger()
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._write, args=(w,), daemon=True) for w in range(WRITERS)]

    def __enter__(self) -> Writers:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(60)

    def _write(self, w: int) -> None:
        s3 = self.inst.client(reservation=w == 0)
        i = 0
        while not self.stop.is_set():
            key = f"w{w}/k{i // 2:06d}"
            body = uuid.uuid4().bytes * (self.body // 16)
            self.ledger.tried(key, body)
            try:
                s3.put_object(Bucket=self.bucket, Key=key, Body=body)
                self.ledger.answered(key, body, True)
            except (BotoCoreError, ClientError):
                self.ledger.answered(key, body, False)
                time.sleep(0.05)  # a refused connection answers at once: do not spin
            i += 1


def _round(ledger: Ledger, fault: Callable[[], None], recover: Callable[[], None] | None = None) -> None:
    """Wait for writes to flow, make the fault, recover, and wait for acknowledged writes after it."""
    wait_until(ledger.progressed(ledger.acks), timeout=ROUND_TIMEOUT_S, message="no writes before the fault")
    fault()
    if recover is not None:
        recover()
    wait_until(ledger.progressed(ledger.acks), timeout=ROUND_TIMEOUT_S, message="no writes after the fault")


def _commit_cut(inst: Installation, writers: Writers, rounds: int) -> None:
    from sqlalchemy.engine import make_url

    upstream = make_url(inst.db_url)
    assert upstream.port is not None
    cutter = CommitCutter(upstream.port, upstream.host or "127.0.0.1")
    cutter.start()
    try:
        inst.gateway_db_url = upstream.set(host="127.0.0.1", port=cutter.port).render_as_string(hide_password=False)
        inst.kill_gateway(signal.SIGTERM)
        inst.start_gateway()
        with writers:
            for n in range(rounds):
                def cut(mode: str = "before" if n % 2 else "after") -> None:
                    cutter.arm(mode)  # type: ignore[arg-type]
                    wait_until(lambda: not cutter.armed, timeout=ROUND_TIMEOUT_S, message="no COMMIT was cut")

                _round(writers.ledger, cut)
    finally:
        inst.kill_gateway(signal.SIGTERM)
        inst.gateway_db_url = ""
        cutter.stop()


def _sigkill(inst: Installation, writers: Writers, rounds: int) -> None:
    with writers:
        for _ in range(rounds):
            _round(writers.ledger, inst.kill_gateway, inst.start_gateway)


def _fill(path: Path) -> None:
    """Write zeros to ``path`` until its file system is full."""
    block = bytes(1 << 20)
    with open(path, "wb", buffering=0) as f:
        try:
            while True:
                f.write(block)
        except OSError:
            pass


def _disk_full(inst: Installation, writers: Writers, rounds: int) -> None:
    ballast = inst.data_dir / "ballast"
    ledger = writers.ledger

    def full() -> None:
        failed = ledger.failures
        _fill(ballast)
        wait_until(lambda: ledger.failures >= failed + WRITERS, timeout=ROUND_TIMEOUT_S,
                   message="no write failed on the full data dir")

    with writers:
        for _ in range(rounds):
            _round(ledger, full, ballast.unlink)


def _redis_restart(inst: Installation, writers: Writers, rounds: int) -> None:
    def outage() -> None:
        inst.kill_redis()
        attempts = writers.ledger.attempts
        wait_until(lambda: writers.ledger.attempts >= attempts + WRITERS, timeout=ROUND_TIMEOUT_S,
                   message="no write tried while Redis was down")

    with writers:
        for _ in range(rounds):
            _round(writers.ledger, outage, inst.start_redis)


RUNNERS: dict[str, Callable[[Installation, Writers, int], None]] = {
    "commit_cut": _commit_cut, "sigkill": _sigkill, "disk_full": _disk_full, "redis_restart": _redis_restart}


@dataclass
class Outcome:
    fault: str
    db: str
    rounds: int
    acknowledged: int = 0
    failed: int = 0
    lost: list[str] = field(default_factory=list)
    fsck: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    note: str = ""


def _check(inst: Installation, bucket: str, ledger: Ledger) -> list[str]:
    """Keys whose acknowledged write is gone, read through a fresh gateway on the database itself."""
    if inst.redis is None or inst.redis.poll() is not None:
        inst.start_redis()
    if inst.gateway is None or inst.gateway.poll() is not None:
        inst.start_gateway()
    s3 = boto3.client("s3", endpoint_url=inst.url, aws_access_key_id=inst.keys["access_key_id"],
                      aws_secret_access_key=inst.keys["secret_access_key"], region_name="us-east-1",
                      config=Config(retries={"max_attempts": 5, "mode": "standard"}))
    lost = []
    for key in sorted(ledger.acked):
        allowed = ledger.allowed(key)
        try:
            body: bytes | None = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "NoSuchKey":
                lost.append(f"{key}: {exc.response['Error']['Code']}")
                continue
            body = None
        if body not in allowed:
            lost.append(f"{key}: {'missing' if body is None else 'bytes of no write acknowledged or tried since'}")
    return lost


def run_fault(fault: str, db: str, rounds: int, postgres: Server | None) -> Outcome:
    out = Outcome(fault, db, rounds)
    if fault == "commit_cut" and db != "postgresql":
        out.note = "n/a: SQLite has no connection to cut"
        return out
    started = time.monotonic()
    with installation(db, postgres, on_tmpfs=fault == "disk_full") as inst:
        inst.start_gateway()
        bucket = f"faults-{uuid.uuid4().hex[:8]}"
        inst.client().create_bucket(Bucket=bucket)
        _book(inst, bucket)
        writers = Writers(inst, bucket, BODY)
        try:
            RUNNERS[fault](inst, writers, rounds)
        except AssertionError as exc:
            out.note = f"stopped: {exc}"
        (inst.data_dir / "ballast").unlink(missing_ok=True)
        out.acknowledged, out.failed = writers.ledger.acks, writers.ledger.failures
        out.lost = _check(inst, bucket, writers.ledger)
        inst.kill_gateway(signal.SIGTERM)
        report = inst.fsck()
        out.fsck = dict(report.get("counts", {}))
    out.seconds = time.monotonic() - started
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="faults per fault kind and database")
    parser.add_argument("--db", default="sqlite,postgresql", help="databases, comma-separated")
    parser.add_argument("--faults", default=",".join(FAULTS), help=f"of {', '.join(FAULTS)}")
    args = parser.parse_args()
    faults = [f for f in args.faults.split(",") if f]
    unknown = set(faults) - set(FAULTS)
    if unknown:
        parser.error(f"unknown faults: {sorted(unknown)}")
    if "disk_full" in faults and os.geteuid() != 0:
        parser.error("disk_full mounts a tmpfs: run as root, or leave it out with --faults")
    run = Run()
    outcomes: list[Outcome] = []
    with ExitStack() as stack:
        postgres = None
        if "postgresql" in args.db.split(","):
            postgres = start_postgres()
            stack.callback(postgres.stop)
        for db in args.db.split(","):
            for fault in faults:
                print(f"== {fault} on {db}: {args.rounds} rounds", flush=True)
                outcome = run_fault(fault, db, args.rounds, postgres)
                outcomes.append(outcome)
                for line in outcome.lost[:10]:
                    print(f"   lost {line}")

    print(f"\n{'fault':<14} {'database':<11} {'rounds':>6} {'acked':>7} {'failed':>7} {'lost':>5}  fsck findings")
    for o in outcomes:
        findings = ", ".join(f"{n} {k}" for k, n in sorted(o.fsck.items())) or ("none" if not o.note else "")
        print(f"{o.fault:<14} {o.db:<11} {o.rounds:>6} {o.acknowledged:>7} {o.failed:>7} {len(o.lost):>5}  "
              f"{findings}{'  ' + o.note if o.note else ''}")
    rows = []
    for o in outcomes:
        if o.note.startswith("n/a"):
            continue
        missing = o.fsck.get("missing", 0)
        rows.append(run.row(
            f"faults.{o.fault}.{o.db}",
            f"{o.fault.replace('_', ' ')} on {o.db}, {o.rounds} rounds: acknowledged writes lost (of {o.acknowledged} "
            f"acknowledged, {o.failed} failed; fsck: {missing} missing blobs"
            f"{', ' + ', '.join(f'{n} {k}' for k, n in sorted(o.fsck.items()) if k != 'missing') if o.fsck else ''})"
            f"{'; ' + o.note if o.note else ''}",
            len(o.lost), "writes", baseline="acknowledged", baseline_value=o.acknowledged or None))
    record(rows)
    if any(o.lost or o.fsck.get("missing") for o in outcomes):
        sys.exit(1)


if __name__ == "__main__":
    main()
