"""/api/tiers with azure and gcs tiers: validation naming the field, secrets encrypted and never returned,
the archive access tier makes a tier offline, the connection test reaches the emulators."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from azure.storage.blob import BlobServiceClient
from fastapi.testclient import TestClient
from sqlalchemy import select

from tests.emulators import AZURITE_KEY, Emulator, azurite_connection_string
from tierpilot.drivers import registry
from tierpilot.drivers.azure import AzureBlobDriver
from tierpilot.drivers.base import NotArchived
from tierpilot.drivers.gcs import GCSDriver
from tierpilot.kit.db import transaction
from tierpilot.tiers.models import Tier

SA_KEY = json.dumps({"type": "service_account", "client_email": "tp@p.iam.gserviceaccount.com",
                     "private_key": "-----BEGIN PRIVATE KEY-----\nnot-a-key\n-----END PRIVATE KEY-----\n"})


def _azure(name: str, url: str, **config: object) -> dict:
    return {"name": name, "driver": "azure", "storage_classes": ["HOT", "COOL"],
            "config": {"account_url": url, "container": "cold-data", "account_key": AZURITE_KEY, **config}}


def _gcs(name: str, **config: object) -> dict:
    return {"name": name, "driver": "gcs", "storage_classes": ["COLDLINE"],
            "config": {"bucket": "cold-data", "storage_class": "COLDLINE", **config}}


def _stored(name: str) -> Tier:
    with transaction() as s:
        tier = s.scalar(select(Tier).where(Tier.name == name))
        assert tier is not None
        return tier


def test_azure_tier_keeps_its_key_encrypted_and_never_returns_it(client: TestClient) -> None:
    r = client.post("/api/tiers", json=_azure("az", "https://acct.blob.core.windows.net", prefix="t1"))
    assert r.status_code == 201, r.text
    out = r.json()
    assert out["has_secret"] is True and AZURITE_KEY not in r.text
    assert out["location"] == "https://acct.blob.core.windows.net/cold-data/t1/"
    assert out["config"]["prefix"] == "t1/" and out["offline"] is False
    assert AZURITE_KEY not in str(_stored("az").config)
    driver = registry.build_driver(_stored("az"))
    assert isinstance(driver, AzureBlobDriver) and driver._key == ("acct", AZURITE_KEY)  # noqa: SLF001
    # an update naming no secret keeps it; naming another kind of secret replaces it
    r = client.patch(f"/api/tiers/{out['id']}", json={"config": {"access_tier": "COOL"}})
    assert r.status_code == 200 and r.json()["config"]["access_tier"] == "COOL"
    assert _stored("az").config.get("account_key_enc")
    r = client.patch(f"/api/tiers/{out['id']}", json={"config": {"sas_token": "sv=2024&sig=abc%3D"}})
    assert r.status_code == 200, r.text
    assert set(_stored("az").config) & {"account_key_enc", "sas_token_enc"} == {"sas_token_enc"}


def test_azure_archive_tier_is_offline_and_a_connection_string_names_the_account(client: TestClient) -> None:
    conn = azurite_connection_string("http://127.0.0.1:9/devstoreaccount1")
    r = client.post("/api/tiers", json={"name": "azarc", "driver": "azure", "storage_classes": ["ARCHIVE"],
                                        "config": {"connection_string": conn, "container": "archive",
                                                   "access_tier": "ARCHIVE"},
                                        "price_ref": {"catalog": "azure-eastus-2026", "storage_class": "ARCHIVE"}})
    assert r.status_code == 201, r.text
    assert r.json()["offline"] is True and r.json()["restore_delays"]
    assert r.json()["location"] == "http://127.0.0.1:9/devstoreaccount1/archive/"
    assert "AccountKey" not in r.text


def test_bad_cloud_settings_are_422_naming_the_field(client: TestClient) -> None:
    cases = [
        (_azure("a1", "ftp://x"), "config.account_url"),
        (_azure("a2", "https://x", container="Bad_Name"), "config.container"),
        (_azure("a3", "https://x", access_tier="GLACIER"), "config.access_tier"),
        (_azure("a4", "https://x", block_size=1), "config.block_size"),
        (_azure("a5", "https://x", sas_token="sv=1"), "config"),
        ({"name": "a6", "driver": "azure", "config": {"container": "abc"}}, "config.account_url"),
        (_azure("a7", "https://x", rehydrate="later"), "config.rehydrate"),
        (_gcs("g1"), "config.service_account_key"),
        (_gcs("g2", service_account_key="{}"), "config.service_account_key"),
        (_gcs("g3", service_account_key=SA_KEY, storage_class="GLACIER"), "config.storage_class"),
        (_gcs("g4", endpoint_url="http://127.0.0.1:9", chunk_size=1000), "config.chunk_size"),
        (_gcs("g5", endpoint_url="http://127.0.0.1:9", bucket="A"), "config.bucket"),
        (_gcs("g6", endpoint_url="http://127.0.0.1:9", colour="red"), "config.colour"),
    ]
    for body, field in cases:
        r = client.post("/api/tiers", json=body)
        assert r.status_code == 422 and field in r.text, (body, r.text)
    assert [t["name"] for t in client.get("/api/tiers").json() if t["name"][:1] in "ag"] == []


def test_gcs_tier_keeps_its_service_account_key_encrypted(client: TestClient) -> None:
    body = {**_gcs("gc", service_account_key=SA_KEY, prefix="p"),
            "price_ref": {"catalog": "gcp-us-central1-2026", "storage_class": "COLDLINE"}}
    r = client.post("/api/tiers", json=body)
    assert r.status_code == 201, r.text
    out = r.json()
    assert out["has_secret"] and "not-a-key" not in r.text and "service_account_key" not in out["config"]
    assert out["location"] == "https://storage.googleapis.com/cold-data/p/"
    assert out["price_ref"] == {"catalog": "gcp-us-central1-2026", "storage_class": "COLDLINE"}
    assert "not-a-key" not in str(_stored("gc").config)
    assert registry.plain_secrets(_stored("gc").config)["service_account_key"] == SA_KEY


def test_connection_test_reaches_the_emulators_and_says_what_failed(client: TestClient, azurite: Emulator,
                                                                    fake_gcs: Emulator) -> None:
    container = f"chk-{uuid.uuid4().hex[:8]}"
    BlobServiceClient.from_connection_string(azurite_connection_string(azurite.url)).create_container(container)
    ok = client.post("/api/tiers/check", json={"driver": "azure", "config": {
        "account_url": azurite.url, "container": container, "account_key": AZURITE_KEY}})
    assert ok.status_code == 200 and ok.json()["ok"] is True, ok.text
    missing = client.post("/api/tiers/check", json={"driver": "azure", "config": {
        "account_url": azurite.url, "container": "no-such-container", "account_key": AZURITE_KEY}})
    assert missing.json()["ok"] is False and "ContainerNotFound" in missing.json()["message"]
    GCSDriver("g", bucket="chk-bucket", endpoint_url=fake_gcs.url).client.create_bucket("chk-bucket")
    gcs = client.post("/api/tiers/check", json={"driver": "gcs", "config": {
        "bucket": "chk-bucket", "endpoint_url": fake_gcs.url}})
    assert gcs.json()["ok"] is True, gcs.text
    nobucket = client.post("/api/tiers/check", json={"driver": "gcs", "config": {
        "bucket": "none-here", "endpoint_url": fake_gcs.url}})
    assert nobucket.json()["ok"] is False
    bad = client.post("/api/tiers/check", json={"driver": "gcs", "config": {"bucket": "x"}})
    assert bad.status_code == 422 and "config.bucket" in bad.text


def test_connection_test_of_a_saved_tier_uses_its_stored_secret(client: TestClient, azurite: Emulator) -> None:
    container = f"chk-{uuid.uuid4().hex[:8]}"
    BlobServiceClient.from_connection_string(azurite_connection_string(azurite.url)).create_container(container)
    tier = client.post("/api/tiers", json=_azure("saved", azurite.url, container=container)).json()
    r = client.post("/api/tiers/check", json={"driver": "azure", "tier_id": tier["id"], "config": {}})
    assert r.json()["ok"] is True, r.text
    r = client.post("/api/tiers/check", json={"driver": "gcs", "tier_id": tier["id"], "config": {}})
    assert r.status_code == 422 and "driver" in r.text


def test_only_admins_test_connections(member_client: TestClient) -> None:
    r = member_client.post("/api/tiers/check", json={"driver": "gcs", "config": {"bucket": "abc"}})
    assert r.status_code == 403


def test_the_documented_oracle_archive_example_works_on_the_s3_driver(client: TestClient, moto_url: str) -> None:
    """docs/tiers.md's Oracle body, its endpoint pointed at moto (path-style, a region of its own)."""
    import boto3

    from tierpilot.drivers.s3 import S3Driver

    doc = Path(__file__).resolve().parents[2] / "docs" / "tiers.md"
    text = doc.read_text()
    body = json.loads(text[text.index('{"name": "oracle-archive"'):text.index("```", text.index('"oracle-archive"'))])
    body["config"]["endpoint_url"] = moto_url
    boto3.client("s3", endpoint_url=moto_url, region_name="us-ashburn-1", aws_access_key_id="k",
                 aws_secret_access_key="s").create_bucket(
        Bucket="research-archive", CreateBucketConfiguration={"LocationConstraint": "us-ashburn-1"})
    r = client.post("/api/tiers", json=body)
    assert r.status_code == 201, r.text
    assert r.json()["offline"] is True and r.json()["price_ref"]["catalog"] == "oracle-us-ashburn-1-2026"
    assert client.post("/api/tiers/check", json={"driver": "s3", "tier_id": r.json()["id"], "config": {}}).json()[
        "ok"] is True
    driver = registry.build_driver(_stored("oracle-archive"))
    assert isinstance(driver, S3Driver) and driver.region == "us-ashburn-1" and driver.offline
    sent: list[tuple[str, str]] = []
    driver.client.meta.events.register(
        "before-send.s3", lambda request, **_: sent.append((request.url, request.headers["Authorization"].decode())))
    driver.put("b/k~1", iter([b"archived"]))
    assert driver.head("b/k~1").storage_class == "STANDARD"
    # path-style addressing (the bucket in the path, not the host) and SigV4 scoped to the endpoint's region
    assert all(url.startswith(f"{moto_url}/research-archive/tierpilot/") for url, _ in sent), sent
    assert all("/us-ashburn-1/s3/aws4_request" in auth for _, auth in sent)
    # restore semantics: S3's RestoreObject, then HeadObject's x-amz-restore polled. An object the service
    # reports in an archive class is restored that way; one it reports readable (STANDARD) is refused as
    # not archived (a batch item fails so) and its status is readable
    driver.put("b/cold~1", iter([b"archived"]), storage_class="GLACIER")
    assert driver.restore("b/cold~1", 2, "bulk").accepted
    status = driver.restore_status("b/cold~1")  # moto completes a restore at once
    assert status.restored and status.expiry is not None
    assert b"".join(driver.open("b/cold~1")) == b"archived"
    with pytest.raises(NotArchived):
        driver.restore("b/k~1", 2, "bulk")
    assert driver.restore_status("b/k~1").restored
