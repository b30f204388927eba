"""Temp files a crashed writer left on a posix tier: removed at the next start, never a live writer's,
and reported by `tierpilot fsck` (a subprocess on the test database, as a person runs it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import ROOT
from tests.drivers.crash_writer import HALT_AT
from tests.drivers.test_posix import _kill_when_halted, _writer
from tierpilot.drivers import registry
from tierpilot.drivers.posix import PosixDriver
from tierpilot.kit.db import transaction
from tierpilot.lifecycle.fsck import fsck
from tierpilot.tiers import repository as tiers_repository
from tierpilot.tiers import service as tiers
from tierpilot.tiers.schemas import TierCreate


def _tier(name: str, root: Path) -> None:
    with transaction(write=True) as s:
        tiers.create(s, TierCreate(name=name, driver="posix", config={"path": str(root)}))


def _crash_a_writer(root: Path) -> list[Path]:
    """A writer process killed in the middle of a blob: what it left in tmp/."""
    assert _kill_when_halted(_writer(root, "put")) == list(range(HALT_AT))
    left = list((root / "tmp").iterdir())
    assert len(left) == 1 and left[0].stat().st_size > 0
    return left


def _cli_fsck(db_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TIERPILOT_DATABASE_URL=db_url)
    env.pop("TIERPILOT_REDIS_URL", None)
    return subprocess.run([sys.executable, "-m", "tierpilot.app.cli", "fsck", "--json", *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_the_next_start_removes_a_crashed_writers_temp_file_and_fsck_reports_it(db: str, tmp_path: Path) -> None:
    root = tmp_path / "hot"
    _tier("crashy", root)
    [left] = _crash_a_writer(root)
    size = left.stat().st_size

    done = _cli_fsck(db)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["counts"] == {"tmp_leftover (repaired)": 1}
    [finding] = report["findings"]
    assert (finding["locator"], finding["blob_size"]) == (f"tmp/{left.name}", size)
    assert "removed at start-up" in finding["note"]
    assert not list((root / "tmp").iterdir()) and not list((root / "sessions").iterdir())
    assert json.loads(_cli_fsck(db).stdout)["findings"] == []


def test_fsck_finds_what_died_after_this_process_opened_the_tier_and_repair_removes_it(
    db: str, tmp_path: Path
) -> None:
    root = tmp_path / "warm"
    _tier("warm", root)
    registry.clear()
    with transaction() as s:
        tier = tiers_repository.get_by_name(s, "warm")
        assert tier is not None
        driver = registry.driver_for(tier)
    assert isinstance(driver, PosixDriver) and driver.swept_at_start == []
    [left] = _crash_a_writer(root)
    size = left.stat().st_size

    report = fsck()
    assert [(f.kind, f.locator, f.blob_size, f.repaired) for f in report.findings] == [
        ("tmp_leftover", f"tmp/{left.name}", size, False)]
    assert not report.clean and left.exists()
    repaired = fsck(repair=True)
    assert [(f.kind, f.repaired) for f in repaired.findings] == [("tmp_leftover", True)] and repaired.clean
    assert not left.exists()


def test_a_live_writers_temp_file_is_never_swept_whatever_its_age(db: str, tmp_path: Path) -> None:
    root = tmp_path / "live"
    writer = PosixDriver(root)
    stuck = writer.tmp / "placeholder"

    def slow_body() -> Iterator[bytes]:  # a client that sent a little and then went quiet for two days
        yield b"a" * 1000
        nonlocal stuck
        [stuck] = list(writer.tmp.iterdir())
        two_days_ago = os.stat(stuck).st_mtime - 2 * 86400
        os.utime(stuck, (two_days_ago, two_days_ago))
        assert PosixDriver(root).swept_at_start == []  # another process (or tier reload) starting meanwhile
        assert writer.sweep_tmp(max_age_s=0) == 0 and writer.tmp_leftovers() == []
        yield b"b" * 1000

    writer.put("b/k~1", slow_body())
    assert not stuck.exists() and b"".join(writer.open("b/k~1")) == b"a" * 1000 + b"b" * 1000
