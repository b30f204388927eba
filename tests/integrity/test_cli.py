"""`tierpilot fixity run` and `report` as a person runs them, on real processes: objects uploaded through a
gateway process, blobs damaged behind tierpilot's back, the audit a subprocess on the test database."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from botocore.client import BaseClient

from tests.conftest import ROOT
from tests.gateway.conftest import Gateway
from tests.integrity.conftest import blob_file, flip_byte


def _cli(db_url: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = dict(os.environ, TIERPILOT_DATABASE_URL=db_url, TIERPILOT_DEFAULT_TIER="hot-disk", **env)
    full.pop("TIERPILOT_REDIS_URL", None)
    return subprocess.run([sys.executable, "-m", "tierpilot.app.cli", *args], env=full, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_flipped_and_deleted_blobs_are_found_and_reported_again_without_repair(
        gateway: Gateway, s3: BaseClient, bucket: str, db_url: str) -> None:
    data = {f"k{i}": os.urandom(1000 + i) for i in range(5)}
    for key, body in data.items():
        s3.put_object(Bucket=bucket, Key=key, Body=body)
    clean = _cli(db_url, "fixity", "run", "--bucket", bucket, "--json")
    assert clean.returncode == 0, clean.stderr
    assert json.loads(clean.stdout)["ok"] == 5
    flipped = blob_file(gateway, data["k1"])
    flip_byte(flipped, 100)
    blob_file(gateway, data["k3"]).unlink()
    damaged = flipped.read_bytes()
    for _ in range(2):  # a second run finds the same: nothing was repaired or touched
        found = _cli(db_url, "fixity", "run", "--bucket", bucket)
        assert found.returncode == 1, found.stderr
        assert "3 ok, 1 mismatch, 1 missing" in found.stdout
        assert f"MISMATCH {bucket}/k1" in found.stdout and f"MISSING  {bucket}/k3" in found.stdout
        assert flipped.read_bytes() == damaged
    report = _cli(db_url, "fixity", "report", "--json")
    mine = next(r for r in json.loads(report.stdout) if r["bucket"] == bucket)
    assert mine["failures"] == 2 and mine["checked_objects"] == 5 and mine["checks"] == 15
    assert {(f["key"], f["result"]) for f in mine["failing"]} == {("k1", "mismatch"), ("k3", "missing")}
    assert _cli(db_url, "fixity", "run", "--bucket", "no-such-bucket").returncode == 2


def test_a_killed_audit_keeps_the_checks_it_logged(gateway: Gateway, s3: BaseClient, bucket: str,
                                                   db_url: str) -> None:
    from sqlalchemy import func, select

    from tierpilot.integrity.models import FixityCheck
    from tierpilot.kit.db import transaction

    for i in range(40):
        s3.put_object(Bucket=bucket, Key=f"o{i:02}", Body=os.urandom(100))
    full = dict(os.environ, TIERPILOT_DATABASE_URL=db_url, TIERPILOT_FIXITY_OBJECTS_PER_S="10")
    full.pop("TIERPILOT_REDIS_URL", None)
    proc = subprocess.Popen([sys.executable, "-m", "tierpilot.app.cli", "fixity", "run", "--bucket", bucket],
                            env=full, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = 30.0
        start = time.monotonic()
        logged = 0
        while time.monotonic() - start < deadline and logged < 5:
            time.sleep(0.2)
            with transaction() as s:
                logged = s.scalar(select(func.count(FixityCheck.id)).where(FixityCheck.key.like("o%"))) or 0
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
    with transaction() as s:
        kept = s.scalar(select(func.count(FixityCheck.id)).where(FixityCheck.key.like("o%"))) or 0
    assert 5 <= kept < 40  # logged as it went (1 s batches at 10 objects/s), not at the end
