"""`tierpilot lifecycle run-now` and `tierpilot fsck` as a person runs them (a subprocess on the test database)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import ROOT
from tests.lifecycle.conftest import World, age, placement, put, set_rules

BIG = b"c" * (256 * 1024)


def _cli(db_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TIERPILOT_DATABASE_URL=db_url, TIERPILOT_LIFECYCLE_DELETE_GRACE_S="0")
    env.pop("TIERPILOT_REDIS_URL", None)
    return subprocess.run([sys.executable, "-m", "tierpilot.app.cli", *args], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_run_now_moves_what_is_due_and_prints_a_summary(world: World, db_url: str) -> None:
    put(world, "raw/a", BIG)
    put(world, "raw/b", BIG)
    put(world, "tmp/c", b"x")
    age(world, days=31)
    set_rules(world, [{"id": "ia", "filter": {"prefix": "raw/"},
                       "transitions": [{"days": 30, "storage_class": "STANDARD_IA"}]},
                      {"id": "tmp", "filter": {"prefix": "tmp/"}, "expiration": {"days": 1}}])
    done = _cli(db_url, "lifecycle", "run-now", "--bucket", world.bucket)
    assert done.returncode == 0, done.stderr
    assert "queued 1 expiration, 2 transition" in done.stdout
    assert "executed" in done.stdout and "1 expiration, 2 transition" in done.stdout
    assert placement(world) == {"raw/a": ("infrequent", "STANDARD_IA"), "raw/b": ("infrequent", "STANDARD_IA")}
    again = _cli(db_url, "lifecycle", "run-now", "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["queued"] == {}
    assert _cli(db_url, "lifecycle", "run-now", "--bucket", "no-such-bucket").returncode == 2


def test_fsck_reports_and_repairs(world: World, db_url: str) -> None:
    from tierpilot.drivers.posix import PosixDriver

    put(world, "raw/a", BIG)
    clean = _cli(db_url, "fsck", "--min-age", "0")
    assert clean.returncode == 0 and "clean" in clean.stdout
    PosixDriver(world.dirs["hot"]).put(f"{world.bucket}/lost~feed", iter([b"orphan"]))
    found = _cli(db_url, "fsck", "--min-age", "0", "--json")
    assert found.returncode == 1
    assert json.loads(found.stdout)["counts"] == {"orphan": 1}
    repaired = _cli(db_url, "fsck", "--min-age", "0", "--repair")
    assert repaired.returncode == 0 and "repaired orphan" in repaired.stdout
    assert _cli(db_url, "fsck", "--min-age", "0").returncode == 0
