"""`tierpilot gateway calibrate` and `tierpilot health tiers` against Azure and GCS tiers on Azurite and
fake-gcs-server: calibration measures both kinds (blocks staged in parallel, resumable chunks), leaves no blob
behind and skips an Azure Archive tier; the health check reaches every tier with its stored credentials and
names the one whose container is gone."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from azure.storage.blob import BlobServiceClient
from typer.testing import CliRunner

from tests.emulators import AZURITE_KEY, Emulator, azurite_connection_string
from tierpilot.app.cli import app
from tierpilot.drivers.azure import AzureBlobDriver
from tierpilot.drivers.gcs import GCSDriver
from tierpilot.kit.db import transaction
from tierpilot.reservations import service as reservations
from tierpilot.tiers import service as tiers
from tierpilot.tiers.schemas import TierCreate, TierUpdate


@dataclass
class CloudTiers:
    azure: str
    gcs: str
    archive: str
    container: str
    bucket: str


@pytest.fixture
def cloud_tiers(db: str, azurite: Emulator, fake_gcs: Emulator) -> Iterator[CloudTiers]:
    """An Azure COOL tier (1 MiB blocks), a GCS COLDLINE tier (256 KiB chunks) and an Azure ARCHIVE tier."""
    tag = uuid.uuid4().hex[:8]
    container = bucket = f"cal-{tag}"
    BlobServiceClient.from_connection_string(azurite_connection_string(azurite.url)).create_container(container)
    GCSDriver("setup", bucket=bucket, endpoint_url=fake_gcs.url).client.create_bucket(bucket)
    azure = {"account_url": azurite.url, "container": container, "account_key": AZURITE_KEY}
    names = CloudTiers(f"az-{tag}", f"gcs-{tag}", f"arc-{tag}", container, bucket)
    with transaction(write=True) as s:
        tiers.create(s, TierCreate(name=names.azure, driver="azure", storage_classes=["COOL"],
                                   config={**azure, "prefix": "cool", "access_tier": "COOL", "block_size": 1 << 20}))
        tiers.create(s, TierCreate(name=names.gcs, driver="gcs", storage_classes=["COLDLINE"],
                                   config={"bucket": bucket, "endpoint_url": fake_gcs.url, "prefix": "cold",
                                           "storage_class": "COLDLINE", "chunk_size": 256 << 10}))
        tiers.create(s, TierCreate(name=names.archive, driver="azure", storage_classes=["ARCHIVE"],
                                   config={**azure, "prefix": "arc", "access_tier": "ARCHIVE",
                                           "rehydrate": "in_place"}))
    yield names


def test_calibrate_measures_azure_and_gcs_tiers_and_leaves_nothing_behind(
        cloud_tiers: CloudTiers, azurite: Emulator, fake_gcs: Emulator) -> None:
    args = ["gateway", "calibrate", "--seconds", "1", "--streams", "2", "--blob-mib", "2", "--json"]
    # the archive tier is offline: a calibration would write blobs it cannot read back
    refused = CliRunner().invoke(app, [*args, "--tier", cloud_tiers.archive])
    assert refused.exit_code == 2 and f"no online tier named {cloud_tiers.archive}" in refused.output
    result = CliRunner().invoke(app, [*args, "--tier", cloud_tiers.azure, "--tier", cloud_tiers.gcs])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    measured = {t["tier"]: t for t in out["tiers"]}
    assert set(measured) == {cloud_tiers.azure, cloud_tiers.gcs}
    for figures in measured.values():
        assert figures["bytes_written"] >= 2 << 20 and figures["bytes_read"] > 0
        assert figures["write_bps"] > 0 and figures["read_bps"] > 0
    assert 0 < out["proposed_read_mbps"] <= min(f["read_bps"] for f in measured.values()) / 1e6
    with transaction() as s:
        assert reservations.capacity(s).calibrated_write_bps == int(out["proposed_write_mbps"] * 1e6)
    # every test blob deleted, on the services themselves (not only through the drivers' listing)
    container = AzureBlobDriver("look", container=cloud_tiers.container,
                                connection_string=azurite_connection_string(azurite.url)).container_client
    assert [b.name for b in container.list_blobs()] == []
    gcs = GCSDriver("look", bucket=cloud_tiers.bucket, endpoint_url=fake_gcs.url)
    assert [b.name for b in gcs.client.list_blobs(cloud_tiers.bucket)] == []


def test_health_reaches_every_cloud_tier_and_names_the_one_that_fails(cloud_tiers: CloudTiers) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["health", "tiers"])
    assert result.exit_code == 0, result.output
    lines = {line.split(" ", 1)[0]: line for line in result.output.splitlines()}
    for name in (cloud_tiers.azure, cloud_tiers.gcs, cloud_tiers.archive):
        assert ": ok in " in lines[name], result.output
    assert lines["tiers:"] == "tiers: ok"

    with transaction(write=True) as s:  # the GCS tier now points at a bucket that does not exist
        tier = next(t for t in tiers.list_tiers(s) if t.name == cloud_tiers.gcs)
        tiers.update(s, tier.id, TierUpdate(config={"bucket": f"gone-{uuid.uuid4().hex[:8]}"}))
    result = runner.invoke(app, ["health", "tiers"])
    assert result.exit_code == 1
    assert f"{cloud_tiers.gcs} (gcs): FAILED" in result.output and "not found" in result.output
    assert f"{cloud_tiers.azure} (azure): ok" in result.output
    assert f" failed: {cloud_tiers.gcs}\n" in result.output  # the summary names only the failing tier


def test_a_tier_that_never_answers_fails_the_health_check_in_time() -> None:
    import socket
    import time

    from tierpilot.tiers.models import Tier

    with socket.socket() as silent:  # accepts connections (the kernel's backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        tier = Tier(id=1, name="silent", driver="s3", offline=False, restore_delays={}, storage_classes=["STANDARD"],
                    config={"endpoint_url": f"http://127.0.0.1:{port}", "bucket": "b", "access_key_id": "k",
                            "secret_access_key": "s"})
        started = time.monotonic()
        [result] = tiers.health([tier], timeout_s=1.0)
        assert time.monotonic() - started < 5
    assert (result.name, result.ok, result.message) == ("silent", False, "no answer within 1 s")
