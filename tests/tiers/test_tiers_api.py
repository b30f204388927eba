"""/api/tiers: usage from the catalog, admin-only management, config validation, secrets kept in."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from tierpilot.catalog.models import Bucket, Object
from tierpilot.drivers import registry
from tierpilot.drivers.offline import OfflinePosixDriver
from tierpilot.kit.db import transaction
from tierpilot.kit.settings import get_settings
from tierpilot.tiers.models import Tier


def _posix(client: TestClient, name: str, path: str, **extra: object) -> dict:
    r = client.post("/api/tiers", json={"name": name, "driver": "posix", "config": {"path": path}, **extra})
    assert r.status_code == 201, r.text
    return r.json()


def _s3_body(name: str, **config: object) -> dict:
    return {"name": name, "driver": "s3", "storage_classes": ["STANDARD_IA"],
            "config": {"endpoint_url": "http://127.0.0.1:9", "bucket": "cold-data", "access_key_id": "AK",
                       "secret_access_key": "very-secret-value", **config}}


def _store_objects(tier_id: int, owner_id: int, sizes: list[int]) -> None:
    with transaction(write=True) as s:
        bucket = Bucket(name=f"b-{tier_id}", owner_id=owner_id, tier_id=tier_id)
        s.add(bucket)
        s.flush()
        for i, size in enumerate(sizes):
            s.add(Object(bucket_id=bucket.id, key=f"k{i}", size=size, etag="e", tier_id=tier_id,
                         locator=f"b/k{i}~{i}"))


def test_member_lists_tiers_with_usage_from_catalog_without_config_or_location(
    client: TestClient, member_client: TestClient, admin_user: dict[str, str]
) -> None:
    hot = _posix(client, "hot", "hot", capacity_bytes=10**12)
    cold = _posix(client, "cold", "cold", offline=True, storage_classes=["GLACIER"])
    _store_objects(hot["id"], int(admin_user["id"]), [100, 250, 1])
    cloud = client.post("/api/tiers", json=_s3_body("cloud", prefix="tier1"))
    assert cloud.status_code == 201, cloud.text

    listed = member_client.get("/api/tiers")
    tiers = {t["name"]: t for t in listed.json()}
    assert (tiers["hot"]["used_bytes"], tiers["hot"]["object_count"], tiers["hot"]["bucket_count"]) == (351, 3, 1)
    assert (tiers["cold"]["used_bytes"], tiers["cold"]["object_count"]) == (0, 0)
    assert tiers["hot"]["config"] is None and tiers["hot"]["capacity_bytes"] == 10**12
    assert tiers["cold"]["storage_classes"] == ["GLACIER"] and tiers["cloud"]["storage_classes"] == ["STANDARD_IA"]
    # no server path or endpoint reaches a member, in the list or one by one
    assert all(t["location"] is None for t in tiers.values())
    data_dir = str(get_settings().data_dir.resolve())
    assert data_dir not in listed.text and "127.0.0.1:9" not in listed.text
    one = member_client.get(f"/api/tiers/{hot['id']}")
    assert one.json()["location"] is None and data_dir not in one.text
    assert client.get(f"/api/tiers/{hot['id']}").json()["location"] == str(get_settings().tiers_dir / "hot")
    # an offline tier gets the demo delays unless given
    assert tiers["cold"]["offline"] is True
    assert tiers["cold"]["restore_delays"] == {"expedited": 5, "standard": 30, "bulk": 60}
    admin_view = client.get(f"/api/tiers/{cold['id']}").json()
    assert admin_view["config"] == {"path": str(get_settings().tiers_dir / "cold")}


def test_only_admins_manage_tiers(member_client: TestClient, client: TestClient) -> None:
    r = member_client.post("/api/tiers", json={"name": "x", "driver": "posix", "config": {"path": "x"}})
    assert r.status_code == 403
    tier = _posix(client, "mine", "mine")
    assert member_client.patch(f"/api/tiers/{tier['id']}", json={"capacity_bytes": 5}).status_code == 403
    assert member_client.delete(f"/api/tiers/{tier['id']}").status_code == 403
    assert client.get(f"/api/tiers/{tier['id']}").json()["capacity_bytes"] is None


def test_posix_paths_must_be_absolute_or_inside_data_dir_and_not_overlap(client: TestClient, tmp_path: Path) -> None:
    r = client.post("/api/tiers", json={"name": "esc", "driver": "posix", "config": {"path": "../../../etc"}})
    assert r.status_code == 422 and "inside the data directory" in r.json()["detail"]
    outside = _posix(client, "abs", str(tmp_path / "tier"))
    assert outside["location"] == str(tmp_path / "tier") and (tmp_path / "tier").is_dir()
    r = client.post("/api/tiers", json={"name": "nested", "driver": "posix",
                                        "config": {"path": str(tmp_path / "tier" / "inner")}})
    assert r.status_code == 422 and "overlaps" in r.json()["detail"]
    r = client.post("/api/tiers", json={"name": "dup", "driver": "posix", "config": {"path": "/"}})
    assert r.status_code == 422
    r = client.post("/api/tiers", json={"name": "abs", "driver": "posix", "config": {"path": "other"}})
    assert r.status_code == 409
    r = client.post("/api/tiers", json={"name": "bad", "driver": "posix", "config": {"dir": "x"}})
    assert r.status_code == 422 and "config.path" in r.json()["detail"]


def test_s3_tier_needs_endpoint_and_bucket_and_never_returns_its_secret(client: TestClient) -> None:
    body = _s3_body("cloud")
    del body["config"]["bucket"]
    r = client.post("/api/tiers", json=body)
    assert r.status_code == 422 and "config.bucket" in r.json()["detail"]
    body = _s3_body("cloud", endpoint_url="ftp://x")
    assert client.post("/api/tiers", json=body).status_code == 422

    r = client.post("/api/tiers", json=_s3_body("cloud", prefix="tier1"))
    assert r.status_code == 201, r.text
    out = r.json()
    assert out["has_secret"] is True and "very-secret-value" not in r.text
    assert out["config"]["prefix"] == "tier1/" and "secret_access_key" not in out["config"]
    assert out["location"] == "http://127.0.0.1:9/cold-data/tier1/"
    with transaction() as s:
        stored = s.scalar(select(Tier).where(Tier.name == "cloud"))
        assert stored is not None
        assert "very-secret-value" not in str(stored.config)
        assert registry.secret_of(stored.config) == "very-secret-value"

    # an update that does not mention the secret keeps it; one that changes it re-encrypts
    r = client.patch(f"/api/tiers/{out['id']}", json={"config": {"storage_class": "STANDARD_IA"}})
    assert r.status_code == 200 and r.json()["config"]["storage_class"] == "STANDARD_IA"
    with transaction() as s:
        stored = s.get(Tier, out["id"])
        assert stored is not None and registry.secret_of(stored.config) == "very-secret-value"


def test_s3_archive_storage_class_makes_the_tier_offline(client: TestClient) -> None:
    r = client.post("/api/tiers", json=_s3_body("glacier", storage_class="DEEP_ARCHIVE"))
    assert r.status_code == 201 and r.json()["offline"] is True


def test_delete_refuses_a_tier_holding_objects_or_buckets(client: TestClient, admin_user: dict[str, str]) -> None:
    full = _posix(client, "full", "full")
    empty = _posix(client, "empty", "empty")
    _store_objects(full["id"], int(admin_user["id"]), [10])
    r = client.delete(f"/api/tiers/{full['id']}")
    assert r.status_code == 409 and r.json()["objects"] == 1 and r.json()["buckets"] == 1
    assert client.delete(f"/api/tiers/{empty['id']}").status_code == 204
    assert client.get(f"/api/tiers/{empty['id']}").status_code == 404
    assert client.delete(f"/api/tiers/{empty['id']}").status_code == 404


def test_location_and_archive_mode_are_fixed_while_objects_are_stored(
    client: TestClient, admin_user: dict[str, str]
) -> None:
    tier = _posix(client, "busy", "busy")
    _store_objects(tier["id"], int(admin_user["id"]), [1])
    r = client.patch(f"/api/tiers/{tier['id']}", json={"config": {"path": "elsewhere"}})
    assert r.status_code == 409
    assert client.patch(f"/api/tiers/{tier['id']}", json={"offline": True}).status_code == 409
    ref = {"catalog": "aws-us-east-1-2026", "storage_class": "STANDARD_IA"}
    r = client.patch(f"/api/tiers/{tier['id']}", json={"price_ref": ref, "min_storage_days": 30, "name": "busy2"})
    assert r.status_code == 200
    assert (r.json()["name"], r.json()["min_storage_days"], r.json()["price_ref"]) == ("busy2", 30, ref)


def test_price_reference_must_name_a_catalog_class(client: TestClient) -> None:
    tier = _posix(client, "priced", "priced")
    for ref, message in (({"catalog": "nope", "storage_class": "STANDARD"}, "no price catalog"),
                         ({"catalog": "aws-us-east-1-2026", "storage_class": "PLATINUM"}, "has no class"),
                         ({"catalog": "aws-us-east-1-2026"}, "both")):
        r = client.patch(f"/api/tiers/{tier['id']}", json={"price_ref": ref})
        assert r.status_code == 422 and message in r.json()["detail"], r.text
    assert client.get(f"/api/tiers/{tier['id']}").json()["price_ref"] == {}


def test_registry_builds_one_cached_driver_per_tier_config(client: TestClient) -> None:
    created = _posix(client, "arch", "arch", offline=True, restore_delays={"expedited": 1, "standard": 2, "bulk": 3})
    with transaction() as s:
        tier = s.get(Tier, created["id"])
        assert tier is not None
        driver = registry.driver_for(tier)
        assert isinstance(driver, OfflinePosixDriver) and driver.restore_delays["bulk"] == 3
        assert registry.driver_for(tier) is driver
    client.patch(f"/api/tiers/{created['id']}", json={"restore_delays": {"expedited": 1, "standard": 2, "bulk": 9}})
    with transaction() as s:
        tier = s.get(Tier, created["id"])
        assert tier is not None
        rebuilt = registry.driver_for(tier)
        assert rebuilt is not driver and isinstance(rebuilt, OfflinePosixDriver)
        assert rebuilt.restore_delays["bulk"] == 9


def test_registry_answers_the_spec_it_knows_without_fingerprinting_and_rebuilds_for_a_changed_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prints: list[str] = []
    fingerprint = registry._fingerprint
    monkeypatch.setattr(registry, "_fingerprint", lambda tier: prints.append(tier.name) or fingerprint(tier))
    spec = registry.TierSpec(id=990_001, name="spec", driver="posix", config={"path": str(tmp_path / "a")})
    moved = registry.TierSpec(id=990_001, name="spec", driver="posix", config={"path": str(tmp_path / "b")})
    registry.claim_location(spec)
    registry.claim_location(moved)
    try:
        driver = registry.driver_for(spec)
        assert [registry.driver_for(spec) for _ in range(3)] == [driver] * 3
        assert prints == ["spec"]
        same = registry.TierSpec(id=990_001, name="spec", driver="posix", config={"path": str(tmp_path / "a")})
        assert registry.driver_for(same) is driver and registry.driver_for(same) is driver
        assert prints == ["spec", "spec"]
        assert registry.driver_for(moved) is not driver
    finally:
        registry.forget(990_001)


def test_a_tier_cannot_live_in_the_data_directorys_own_folders(client: TestClient, tmp_path: Path) -> None:
    settings = get_settings()
    data = settings.data_dir.resolve()
    refused = {
        str(data): "data directory",                      # the data dir itself
        str(data.parent): "data directory",               # a folder that holds it (and the database)
        str(data / "redis"): "folder of",                 # the embedded redis' files
        str(data / "celery"): "folder of",
        str(settings.tiers_dir): "folder of",             # the folder of every tier's directory
        "..": "data directory",                           # relative: the data dir again
        "../redis": "folder of",
    }
    for path, message in refused.items():
        r = client.post("/api/tiers", json={"name": "bad", "driver": "posix", "config": {"path": path}})
        assert r.status_code == 422 and "config.path" in r.json()["detail"] and message in r.json()["detail"], (
            path, r.text)
    assert not (data / "celery").exists()  # a refused tier creates nothing
    assert client.get("/api/tiers").json() == []

    tier = _posix(client, "fine", "fine")
    r = client.patch(f"/api/tiers/{tier['id']}", json={"config": {"path": str(data / "redis")}})
    assert r.status_code == 422 and client.get(f"/api/tiers/{tier['id']}").json()["location"].endswith("/fine")
    assert _posix(client, "elsewhere", str(tmp_path / "t"))["location"] == str(tmp_path / "t")


def test_a_tier_cannot_hold_the_folder_of_a_sqlite_database_outside_the_data_dir(
    client: TestClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tierpilot.tiers import service

    monkeypatch.setattr(service, "_sqlite_folder", lambda: tmp_path / "db")
    r = client.post("/api/tiers", json={"name": "bad", "driver": "posix", "config": {"path": str(tmp_path)}})
    assert r.status_code == 422 and "SQLite database" in r.json()["detail"]
    assert _posix(client, "beside", str(tmp_path / "tier"))["location"] == str(tmp_path / "tier")


@pytest.fixture
def tier_roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """TIERPILOT_TIER_ROOTS naming one folder of the test's own (and the data dir's tiers)."""
    root = tmp_path / "allowed"
    root.mkdir()
    monkeypatch.setenv("TIERPILOT_TIER_ROOTS", f"{get_settings().tiers_dir}, {root}")
    get_settings.cache_clear()
    yield root
    monkeypatch.undo()
    get_settings.cache_clear()


def test_posix_tier_paths_are_confined_to_the_configured_roots(client: TestClient, tmp_path: Path,
                                                                tier_roots: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tier_roots / "link").symlink_to(elsewhere)
    # an existing directory outside the roots (what /etc was) is refused before anything is written into it
    for path in (str(elsewhere), str(elsewhere / "new"), str(tier_roots / ".." / "elsewhere"),
                 str(tier_roots / "link"), str(tier_roots / "link" / "deeper")):
        for method, url, body in (("POST", "/api/tiers/check", {"driver": "posix", "config": {"path": path}}),
                                  ("POST", "/api/tiers", {"name": "out", "driver": "posix", "config": {"path": path}})):
            r = client.request(method, url, json=body)
            assert r.status_code == 422, (path, r.text)
            assert "config.path" in r.json()["detail"] and "TIERPILOT_TIER_ROOTS" in r.json()["detail"]
    assert list(elsewhere.iterdir()) == []  # nothing written outside the roots
    ok = client.post("/api/tiers/check", json={"driver": "posix", "config": {"path": str(tier_roots / "disk")}})
    assert ok.status_code == 200 and ok.json()["ok"] is True, ok.text
    assert _posix(client, "inside", str(tier_roots / "disk2"))["location"] == str(tier_roots / "disk2")
    assert _posix(client, "relative", "rel")["location"] == str(get_settings().tiers_dir / "rel")
    # a saved tier cannot be moved out either
    tier = _posix(client, "mover", str(tier_roots / "disk3"))
    r = client.patch(f"/api/tiers/{tier['id']}", json={"config": {"path": str(elsewhere)}})
    assert r.status_code == 422 and "config.path" in r.json()["detail"]
