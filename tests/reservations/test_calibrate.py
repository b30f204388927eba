"""`tierpilot gateway calibrate` against a real posix tier: bounded, leaves nothing behind, records
(or with --apply sets) the proposed capacities."""

from __future__ import annotations

import json
import time
import uuid

from typer.testing import CliRunner

from tierpilot.app.cli import app
from tierpilot.drivers.registry import build_driver
from tierpilot.kit.db import transaction
from tierpilot.reservations import service
from tierpilot.tiers import service as tiers
from tierpilot.tiers.models import Tier
from tierpilot.tiers.schemas import TierCreate

ARGS = ["gateway", "calibrate", "--seconds", "1", "--streams", "2", "--blob-mib", "2"]


def make_tier(offline: bool = False) -> str:
    name = f"cal-{uuid.uuid4().hex[:6]}"
    with transaction(write=True) as s:
        tiers.create(s, TierCreate(name=name, driver="posix", config={"path": name}, storage_classes=["STANDARD"],
                                   offline=offline))
    return name


def test_calibrate_measures_records_and_cleans_up(db: str):
    name = make_tier()
    make_tier(offline=True)  # archive tiers are not measured
    started = time.monotonic()
    result = CliRunner().invoke(app, [*ARGS, "--json"])
    assert result.exit_code == 0, result.output
    assert time.monotonic() - started < 300  # a calibration ends by itself (its test is bounded in time)
    out = json.loads(result.output)
    assert [t["tier"] for t in out["tiers"]] == [name]
    figures = out["tiers"][0]
    assert figures["write_bps"] > 0 and figures["read_bps"] > 0 and figures["bytes_written"] >= 2 << 20
    assert 0 < out["proposed_read_mbps"] <= figures["read_bps"] / 1e6
    assert 0 < out["proposed_write_mbps"] <= figures["write_bps"] / 1e6
    with transaction() as s:
        pool = service.capacity(s)
        assert pool.calibrated_read_bps == int(out["proposed_read_mbps"] * 1e6)
        assert pool.calibrated_at is not None
        assert pool.read_bps == service.DEFAULT_READ_BPS  # recorded, not applied
        tier = s.query(Tier).filter_by(name=name).one()
        assert list(build_driver(tier).list("_calibrate")) == []


def test_apply_sets_the_capacity_and_unknown_tiers_are_refused(db: str):
    name = make_tier()
    result = CliRunner().invoke(app, [*ARGS, "--tier", name, "--apply"])
    assert result.exit_code == 0, result.output
    assert "proposed capacity" in result.output and "(applied)" in result.output
    with transaction() as s:
        pool = service.capacity(s)
        assert pool.read_bps == pool.calibrated_read_bps and pool.write_bps == pool.calibrated_write_bps
    result = CliRunner().invoke(app, [*ARGS, "--tier", "no-such-tier"])
    assert result.exit_code == 2 and "no online tier named no-such-tier" in result.output
