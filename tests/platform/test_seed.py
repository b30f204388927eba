from __future__ import annotations

from fastapi.testclient import TestClient

from tests.conftest import login
from tierpilot.bootstrap import DEMO_USER, seed_demo


def test_demo_seed_fills_tiers_and_buckets_once(db: str, app_client: TestClient) -> None:
    assert seed_demo() is True
    assert seed_demo() is False  # only on an empty database
    login(app_client, *DEMO_USER)
    overview = app_client.get("/api/overview").json()
    tiers = {t["name"]: t for t in overview["tiers"]}
    assert set(tiers) == {"hot-disk", "infrequent", "archive"}
    assert tiers["archive"]["offline"] is True
    assert all(t["used_bytes"] > 0 and t["object_count"] > 0 for t in tiers.values())
    assert {b["name"] for b in overview["buckets"]} == {"belle2-raw", "belle2-processed", "telescope-archive"}
    assert overview["totals"]["objects"] == 30
