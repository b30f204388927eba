"""What the azure and gcs drivers do beyond the shared contract: access tiers and classes, Azure rehydration
(to a copy, in place) against Azurite's real answers, the registry with encrypted secrets.

Azurite completes a rehydration at once (no pending state, no priority): the pending and upgrade paths of the
driver are tested in tests/cloudtiers/test_rehydration.py, behind a proxy that adds Azure's delay (docs/tiers.md)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from tests.clocks import WallClock
from tests.emulators import AZURITE_KEY, Emulator, azurite_connection_string
from tierpilot.drivers.azure import AzureBlobDriver
from tierpilot.drivers.base import BlobNotFound, NotArchived, NotRestored, TierError
from tierpilot.drivers.gcs import GCSDriver
from tierpilot.drivers.registry import build_driver
from tierpilot.kit.crypto import encrypt
from tierpilot.tiers.models import Tier


def _read(driver: AzureBlobDriver | GCSDriver, locator: str) -> bytes:
    return b"".join(driver.open(locator))


@pytest.fixture
def clock() -> WallClock:
    return WallClock(datetime.now(UTC))


@pytest.fixture
def archive(azure_driver: AzureBlobDriver, clock: WallClock) -> AzureBlobDriver:
    """The fixture's container as an offline tier whose new blobs go to Archive."""
    return AzureBlobDriver("cold", container=azure_driver.container, prefix="arc/", access_tier="ARCHIVE",
                           connection_string=azurite_connection_string(azure_driver.account_url), clock=clock)


def test_access_tiers_per_put_and_tier_default(azure_driver: AzureBlobDriver) -> None:
    azure_driver.put("b/hot~1", iter([b"h"]))
    azure_driver.put("b/cool~1", iter([b"c"]), storage_class="COOL")
    azure_driver.put("b/ia~1", iter([b"i"]), storage_class="STANDARD_IA")
    assert [azure_driver.head(f"b/{n}~1").storage_class for n in ("hot", "cool", "ia")] == ["HOT", "COOL", "COOL"]
    assert {b.locator: b.storage_class for b in azure_driver.list("b/")}["b/cool~1"] == "COOL"


def test_gcs_classes_per_put_copy_and_join(gcs_driver: GCSDriver) -> None:
    gcs_driver.put("b/std~1", iter([b"s"]))
    gcs_driver.put("b/cold~1", iter([b"c"]), storage_class="COLDLINE")
    assert gcs_driver.head("b/cold~1").storage_class == "COLDLINE"
    # fake-gcs-server ignores the class of a rewrite's or compose's destination (docs/tiers.md): bytes only
    assert gcs_driver.copy_from(gcs_driver, "b/cold~1", "b/copy~1", storage_class="NEARLINE").size == 1
    assert _read(gcs_driver, "b/copy~1") == b"c"
    parts = [gcs_driver.put_part("up", n, iter([bytes([n])]))[0] for n in range(1, 36)]  # > 32: chained
    assert gcs_driver.complete_multipart("up", "b/many~1", parts, storage_class="ARCHIVE") == 35
    assert _read(gcs_driver, "b/many~1") == bytes(range(1, 36))
    assert gcs_driver.restore_status("b/many~1").restored  # GCS classes are all online


def test_azurite_refuses_a_rehydration_into_a_copy_and_the_driver_says_so(archive: AzureBlobDriver) -> None:
    archive.put("b/k~1", iter([b"frozen"]))
    with pytest.raises(TierError, match="in_place"):
        archive.restore("b/k~1", 1, "standard")
    with pytest.raises(NotRestored):
        _read(archive, "b/k~1")


def test_copy_out_of_the_archive_needs_a_rehydration(azure_driver: AzureBlobDriver) -> None:
    archive = AzureBlobDriver("cold", container=azure_driver.container, prefix="arc/", access_tier="ARCHIVE",
                              rehydrate="in_place",
                              connection_string=azurite_connection_string(azure_driver.account_url))
    archive.put("b/k~1", iter([b"frozen"]))
    with pytest.raises(NotRestored):
        azure_driver.copy_from(archive, "b/k~1", "b/out~1")
    archive.restore("b/k~1", 1, "standard")
    assert azure_driver.copy_from(archive, "b/k~1", "b/out~1", storage_class="COOL").size == 6
    assert (_read(azure_driver, "b/out~1"), azure_driver.head("b/out~1").storage_class) == (b"frozen", "COOL")
    archive.delete("b/k~1")
    with pytest.raises(BlobNotFound):
        archive.restore_status("b/k~1")
    assert [p.name for p in archive.container_client.list_blobs(name_starts_with="arc/")] == []


def test_restore_of_an_online_blob_is_refused(azure_driver: AzureBlobDriver) -> None:
    azure_driver.put("b/hot~1", iter([b"h"]))
    with pytest.raises(NotArchived):
        azure_driver.restore("b/hot~1", 1, "standard")
    with pytest.raises(BlobNotFound):
        azure_driver.restore("b/none~1", 1, "standard")
    with pytest.raises(ValueError):
        azure_driver.restore("b/hot~1", 0, "standard")


def test_in_place_rehydration_brings_the_blob_online_for_good(azure_driver: AzureBlobDriver) -> None:
    tier = AzureBlobDriver("inplace", container=azure_driver.container, prefix="ip/", access_tier="ARCHIVE",
                           rehydrate="in_place", rehydrate_tier="COOL",
                           connection_string=azurite_connection_string(azure_driver.account_url))
    tier.put("b/k~1", iter([b"frozen"]))
    with pytest.raises(NotRestored):
        _read(tier, "b/k~1")
    status = tier.restore("b/k~1", 1, "standard")
    assert (status.accepted, status.restored, status.expiry) == (True, True, None)
    assert (tier.head("b/k~1").storage_class, _read(tier, "b/k~1")) == ("COOL", b"frozen")
    assert tier.restore("b/k~1", 1, "standard").accepted is False


def test_shared_key_and_sas_credentials_reach_the_account(azurite: Emulator) -> None:
    from azure.storage.blob import ContainerSasPermissions, generate_container_sas

    container = f"tier-{uuid.uuid4().hex[:12]}"
    keyed = AzureBlobDriver("k", account_url=azurite.url, container=container, account_key=AZURITE_KEY)
    keyed.container_client.create_container()
    keyed.put("b/k~1", iter([b"shared key"]))
    sas = generate_container_sas("devstoreaccount1", container, account_key=AZURITE_KEY,
                                 permission=ContainerSasPermissions(read=True, write=True, list=True),
                                 expiry=datetime.now(UTC).replace(year=datetime.now(UTC).year + 1))
    signed = AzureBlobDriver("s", account_url=azurite.url, container=container, sas_token=sas)
    assert _read(signed, "b/k~1") == b"shared key"
    anonymous = AzureBlobDriver("a", account_url=azurite.url, container=container)
    with pytest.raises(TierError):
        anonymous.check()
    missing = AzureBlobDriver("m", account_url=azurite.url, container="nothere", account_key=AZURITE_KEY)
    with pytest.raises(TierError):
        missing.check()
    keyed.check()


def test_registry_builds_cloud_drivers_with_decrypted_secrets(azurite: Emulator, fake_gcs: Emulator) -> None:
    azure = build_driver(Tier(id=1, name="az", driver="azure", offline=True, restore_delays={},
                              storage_classes=["ARCHIVE"],
                              config={"account_url": azurite.url, "container": "c1", "prefix": "p/",
                                      "account_key_enc": encrypt(AZURITE_KEY), "access_tier": "ARCHIVE",
                                      "block_size": 4 << 20}))
    assert isinstance(azure, AzureBlobDriver)
    assert (azure.offline, azure.prefix, azure.block_size, azure.account_url) == (True, "p/", 4 << 20, azurite.url)
    gcs = build_driver(Tier(id=2, name="g", driver="gcs", offline=False, restore_delays={},
                            storage_classes=["COLDLINE"],
                            config={"bucket": "b1", "endpoint_url": fake_gcs.url, "storage_class": "COLDLINE"}))
    assert isinstance(gcs, GCSDriver)
    assert (gcs.storage_class, gcs.endpoint_url) == ("COLDLINE", fake_gcs.url)
    with pytest.raises(ValueError, match="service_account_key"):
        GCSDriver("prod", bucket="b1")
