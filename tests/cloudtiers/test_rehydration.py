"""The azure driver's pending rehydrations, against Azurite behind tests/emulators.py's RehydrationDelay.

Azurite rehydrates at once and refuses to copy an archived blob; Azure takes hours for both and shows the
wait in the blob's properties. The proxy holds the rehydration the way Azure documents it and otherwise
answers with Azurite's real responses (docs/tiers.md says what is emulated): the driver must see the pending
state, refuse a second request that does not upgrade, upgrade Standard to High, read nothing before the end,
and afterwards read the blob (in place) or its expiring copy. A restore batch polls such a tier until ready.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from tests.clocks import WallClock
from tests.emulators import AZURITE_KEY, RehydrationDelay, rehydration  # noqa: F401 (fixture)
from tierpilot.drivers.azure import AzureBlobDriver
from tierpilot.drivers.base import NotRestored, RestoreInProgress
from tierpilot.drivers.offline import restore_expiry


def _tier(shim: RehydrationDelay, container: str, prefix: str, **kw: object) -> AzureBlobDriver:
    return AzureBlobDriver(prefix, account_url=shim.url, account_key=AZURITE_KEY, container=container,
                           prefix=f"{prefix}/", access_tier="ARCHIVE", **kw)  # type: ignore[arg-type]


def _read(driver: AzureBlobDriver, locator: str) -> bytes:
    return b"".join(driver.open(locator))


def test_in_place_rehydration_waits_and_a_high_priority_request_upgrades_it(
        rehydration: RehydrationDelay, azure_driver: AzureBlobDriver) -> None:  # noqa: F811
    tier = _tier(rehydration, azure_driver.container, "ip", rehydrate="in_place")
    tier.put("b/k~1", iter([b"frozen"]))
    status = tier.restore("b/k~1", 1, "standard")
    assert (status.accepted, status.ongoing, status.restored) == (True, True, False)
    assert tier.restore_status("b/k~1").ongoing
    with pytest.raises(NotRestored):
        _read(tier, "b/k~1")
    with pytest.raises(RestoreInProgress):  # same or slower speed: Azure's rehydration goes on as it is
        tier.restore("b/k~1", 1, "bulk")
    assert tier.restore("b/k~1", 1, "expedited").accepted  # Set Blob Tier again with High priority
    with pytest.raises(RestoreInProgress):
        tier.restore("b/k~1", 1, "expedited")
    assert rehydration.complete("Standard") == 0  # it is a High-priority rehydration now
    assert tier.head("b/k~1").storage_class == "ARCHIVE"
    assert rehydration.complete("High") == 1
    status = tier.restore_status("b/k~1")
    assert (status.ongoing, status.restored, status.expiry) == (False, True, None)  # online for good
    assert (_read(tier, "b/k~1"), tier.head("b/k~1").storage_class) == (b"frozen", "HOT")


def test_rehydration_into_a_copy_waits_then_reads_the_copy_until_it_expires(
        rehydration: RehydrationDelay, azure_driver: AzureBlobDriver) -> None:  # noqa: F811
    clock = WallClock(datetime.now(UTC))
    tier = _tier(rehydration, azure_driver.container, "cp", clock=clock, rehydrate_tier="COOL")
    tier.put("b/k~1", iter([b"frozen"]))
    status = tier.restore("b/k~1", 2, "standard")
    assert (status.accepted, status.ongoing) == (True, True)
    pending = tier.restore_status("b/k~1")
    assert (pending.ongoing, pending.speed) == (True, "standard")
    with pytest.raises(NotRestored):
        _read(tier, "b/k~1")
    assert tier.restore("b/k~1", 2, "expedited").accepted  # upgrades the copy's rehydration
    with pytest.raises(RestoreInProgress):
        tier.restore("b/k~1", 2, "standard")
    assert rehydration.complete("High") == 1

    ready = tier.restore_status("b/k~1")
    copy = tier.container_client.get_blob_client("cp/%r/b/k~1").get_blob_properties()
    assert str(copy.blob_tier) == "Cool" and copy.copy.status == "success"
    assert (ready.restored, ready.expiry) == (True, restore_expiry(copy.copy.completion_time, 2))
    assert _read(tier, "b/k~1") == b"frozen"
    assert tier.head("b/k~1").storage_class == "ARCHIVE"  # the original stays archived
    # asked again while readable: the expiry moves (S3's 200), nothing is rehydrated
    again = tier.restore("b/k~1", 5, "standard")
    assert (again.accepted, again.restored, again.expiry) == (False, True, restore_expiry(clock(), 5))
    clock.advance(days=6)
    assert tier.restore_status("b/k~1").restored is False  # expired: the copy is deleted
    assert [b.name for b in tier.container_client.list_blobs(name_starts_with="cp/")] == ["cp/b/k~1"]
    with pytest.raises(NotRestored):
        _read(tier, "b/k~1")


def test_a_restore_batch_polls_a_pending_azure_rehydration_until_ready(
        db: str, rehydration: RehydrationDelay, azure_driver: AzureBlobDriver) -> None:  # noqa: F811
    from tierpilot.auth import service as auth
    from tierpilot.auth.models import User
    from tierpilot.catalog import repository as catalog_repository
    from tierpilot.catalog import service as catalog
    from tierpilot.catalog import store
    from tierpilot.catalog.store import NewObject
    from tierpilot.kit.db import transaction
    from tierpilot.restores import service, sweep
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.schemas import TierCreate

    name = f"arc-{uuid.uuid4().hex[:6]}"
    with transaction(write=True) as s:
        user, _ = auth.create_user(s, f"u-{name}", "cloud-password-1")
        tiers.create(s, TierCreate(name=name, driver="azure", storage_classes=["ARCHIVE"],
                                   config={"account_url": rehydration.url, "account_key": AZURITE_KEY,
                                           "container": azure_driver.container, "prefix": "batch",
                                           "access_tier": "ARCHIVE"}))
        catalog.create_bucket(s, owner_id=user.id, name=name, tier_name=name)
        user_id = user.id
    with transaction() as s:
        bucket = catalog_repository.get_bucket_by_name(s, name)
        tier = next(t for t in tiers.list_tiers(s) if t.name == name)
        s.expunge_all()
    assert bucket is not None and tier.offline
    for key in ("raw/a", "raw/b"):
        store.put_object(bucket, key, iter([key.encode()]), NewObject(tier=tier, storage_class="ARCHIVE"))
    with transaction(write=True) as s:
        batch = service.create_batch(s, s.get(User, user_id), service.Selection(name, (), ["raw/"]), "standard", 1)
        batch_id = batch.id
    now = datetime.now(UTC)
    assert sweep.poll_due(clock=lambda: now).outcomes == {"accepted": 2}
    later = now + timedelta(hours=1)
    assert sweep.poll_due(clock=lambda: later).outcomes == {"ongoing": 2}  # Azure still rehydrating
    assert rehydration.complete() == 2
    done = now + timedelta(hours=20)
    assert sweep.poll_due(clock=lambda: done).outcomes.get("ready") == 2
    with transaction() as s:
        assert service.get_batch(s, s.get(User, user_id), batch_id).batch.state == "ready"
