"""`tierpilot plan SCENARIO.yaml --json` as a user runs it: a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.pricing.helpers import CASE_STUDY_MEASURED

MINIMAL = """\
catalog: aws-ap-northeast-1-2018     # catalog id
tiers: [STANDARD, STANDARD_IA, GLACIER]
volume_gib: 633
objects: 1000
reads_per_month: 1                   # full reads of the data set per month
restore_speed: standard              # for tiers that need a restore
egress: same-region                  # or internet, research-network
"""


def plan(tmp_path: Path, text: str, *args: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    return subprocess.run([sys.executable, "-m", "tierpilot.app.cli", "plan", str(path), *args], capture_output=True,
                          text=True, timeout=60, cwd=tmp_path)


def _break_even(report: dict[str, Any], below: str, above: str) -> float:
    return next(b["reads_per_month"] for b in report["break_even"]
                if b["cheaper_below"] == below and b["cheaper_above"] == above)


def test_minimal_scenario_prints_the_report_as_json(tmp_path: Path) -> None:
    done = plan(tmp_path, MINIMAL, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [t["tier"] for t in report["tiers"]] == ["STANDARD", "STANDARD_IA", "GLACIER"]
    storage = [round(t["monthly"]["storage"], 1) for t in report["tiers"]]
    assert storage == [15.8, 12.0, 3.2]
    for t in report["tiers"]:
        m = t["monthly"]
        assert {"storage", "requests", "retrieval", "restore", "egress", "early_deletion", "fixed", "total"} <= set(m)
        assert all(isinstance(v, float) for v in m.values())
    assert abs(_break_even(report, "STANDARD_IA", "STANDARD") - 0.60) <= 0.02


def test_measured_charges_in_the_scenario_file_give_the_case_study_break_evens(tmp_path: Path) -> None:
    text = MINIMAL.replace("[STANDARD, STANDARD_IA, GLACIER]", "[STANDARD, STANDARD_IA, GLACIER, GLACIER@bulk]")
    text += yaml.safe_dump({"measured": CASE_STUDY_MEASURED})
    report = json.loads(plan(tmp_path, text, "--json").stdout)
    assert abs(_break_even(report, "STANDARD_IA", "STANDARD") - 0.54) <= 0.01
    assert abs(_break_even(report, "GLACIER", "STANDARD_IA") - 6.6) <= 0.1
    assert {"cheaper": "GLACIER@bulk", "costlier": "STANDARD_IA", "equal": False} in report["dominance"]


def test_table_and_csv_outputs(tmp_path: Path) -> None:
    table = plan(tmp_path, MINIMAL)
    assert table.returncode == 0 and "STANDARD_IA is cheaper than STANDARD below 0.5999" in table.stdout
    csv_out = plan(tmp_path, MINIMAL, "--csv")
    assert csv_out.returncode == 0 and csv_out.stdout.startswith("tierpilot cost report")


def test_bad_scenarios_exit_2_with_a_message(tmp_path: Path) -> None:
    done = plan(tmp_path, MINIMAL.replace("objects: 1000", "objects: -5"), "--json")
    assert done.returncode == 2 and "objects" in done.stderr and not done.stdout
    done = plan(tmp_path, MINIMAL.replace("aws-ap-northeast-1-2018", "aws-mars-1-2018"), "--json")
    assert done.returncode == 2 and "no price catalog 'aws-mars-1-2018'" in done.stderr
    done = plan(tmp_path, "tiers: [", "--json")
    assert done.returncode == 2 and "not valid YAML" in done.stderr


def test_extra_catalog_files_can_be_given(tmp_path: Path) -> None:
    from tierpilot.pricing.catalogs import CATALOG_DIR

    data = yaml.safe_load((CATALOG_DIR / "aws-ap-northeast-1-2018.yaml").read_text())
    data["id"] = "site-tokyo-2019"
    extra = tmp_path / "site-tokyo-2019.yaml"
    extra.write_text(yaml.safe_dump(data))
    done = plan(tmp_path, MINIMAL.replace("aws-ap-northeast-1-2018", "site-tokyo-2019"), "--json",
                "--catalog", str(extra))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["catalogs"][0]["id"] == "site-tokyo-2019"
