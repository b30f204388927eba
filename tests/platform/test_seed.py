from __future__ import annotations

from fastapi.testclient import TestClient

from tests.conftest import login
from tierpilot.app.bootstrap import DEMO_USER, seed_demo


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


def test_demo_objects_carry_the_sha256_of_their_bytes(db: str, app_client: TestClient) -> None:
    import base64
    import hashlib

    assert seed_demo() is True
    login(app_client, *DEMO_USER)
    key = "run-2026-11/detector-0000.root"
    detail = app_client.get("/api/buckets/belle2-raw/object", params={"key": key}).json()
    assert detail["checksum_algorithm"] == "SHA256"
    body = app_client.get("/api/buckets/belle2-raw/object/content", params={"key": key}).content
    assert detail["checksum_value"] == base64.b64encode(hashlib.sha256(body).digest()).decode()
