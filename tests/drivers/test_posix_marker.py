"""A posix tier whose directory vanishes (volume unmounted, directory removed) refuses writes instead of
re-creating the directory on the root file system: the ``.tierpilot-tier`` marker and the root's identity."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from tests.conftest import make_user
from tests.gateway.conftest import start_gateway, stop
from tierpilot.drivers.base import TierUnavailable
from tierpilot.drivers.offline import OfflinePosixDriver
from tierpilot.drivers.posix import MARKER, PosixDriver, claim_root


def _put(driver: PosixDriver, locator: str, data: bytes = b"payload") -> None:
    driver.put(locator, iter([data]))


def _unmount(root: Path) -> Path:
    """What an unmount leaves at the path: an empty directory (a new inode); the volume is kept aside."""
    away = root.with_name(root.name + ".volume")
    root.rename(away)
    root.mkdir()
    return away


def test_a_claimed_root_is_written_and_a_removed_one_is_refused_not_recreated(tmp_path: Path) -> None:
    root = tmp_path / "tier"
    claim_root(root, 7)
    assert (root / MARKER).read_text() == "7\n"
    driver = PosixDriver(root, name="t", tier_id=7)
    _put(driver, "b/one")
    shutil.rmtree(root)
    with pytest.raises(TierUnavailable, match="missing"):
        _put(driver, "b/two")
    with pytest.raises(TierUnavailable, match="missing"):
        b"".join(driver.open("b/one"))
    with pytest.raises(TierUnavailable):
        driver.check()
    with pytest.raises(TierUnavailable):  # a driver built afresh (a restart, a health probe) neither
        PosixDriver(root, name="t", tier_id=7)
    assert not root.exists()


def test_an_unmounted_volume_refuses_writes_until_it_is_back(tmp_path: Path) -> None:
    root = tmp_path / "mnt"
    claim_root(root, 3)
    driver = OfflinePosixDriver(root, name="archive", tier_id=3)
    _put(driver, "b/kept")
    volume = _unmount(root)
    with pytest.raises(TierUnavailable, match="no .tierpilot-tier"):
        _put(driver, "b/lost")
    assert list(root.iterdir()) == []  # nothing landed on the mount point
    root.rmdir()
    volume.rename(root)  # mounted again: the marker is there, writes go on
    _put(driver, "b/after")
    assert {b.locator for b in driver.list("b/")} == {"b/kept", "b/after"}


def test_an_older_tier_directory_is_adopted_an_empty_or_foreign_one_is_not(tmp_path: Path) -> None:
    used = tmp_path / "used"
    _put(PosixDriver(used), "b/old")  # an older version's layout: blobs/ and no marker
    assert not (used / MARKER).exists()
    adopted = PosixDriver(used, tier_id=5)
    assert (used / MARKER).read_text() == "5\n"
    assert b"".join(adopted.open("b/old")) == b"payload"
    empty = tmp_path / "empty-mount-point"
    empty.mkdir()
    with pytest.raises(TierUnavailable, match="is its volume mounted"):
        PosixDriver(empty, tier_id=6)
    assert list(empty.iterdir()) == []
    with pytest.raises(TierUnavailable, match="belongs to tier id 5"):
        PosixDriver(used, tier_id=6)


@pytest.fixture
def vanishing_tier(db: str) -> Iterator[tuple[str, Path]]:
    """A posix tier made by the tiers service (which marks its directory): (name, directory)."""
    from tierpilot.kit.db import transaction
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.schemas import TierCreate

    name = f"vanish-{uuid.uuid4().hex[:8]}"
    with transaction(write=True) as s:
        tier = tiers.create(s, TierCreate(name=name, driver="posix", config={"path": name},
                                          storage_classes=["STANDARD"]))
        root = Path(tier.config["path"])
    assert (root / MARKER).is_file()
    yield name, root


def test_the_gateway_answers_503_for_a_removed_tier_directory_and_health_names_it(
        db: str, vanishing_tier: tuple[str, Path], data_dir: Path) -> None:
    from tierpilot.kit.db import transaction
    from tierpilot.tiers import service as tiers

    name, root = vanishing_tier
    from tierpilot.catalog import service as catalog

    user = make_user(f"u-{uuid.uuid4().hex[:6]}", "user-password-1")
    with transaction(write=True) as s:
        catalog.create_bucket(s, owner_id=int(user["id"]), name=name, tier_name=name)
    url, proc = start_gateway(db, data_dir / f"gateway-{name}.log")
    try:
        s3 = boto3.client("s3", endpoint_url=url, aws_access_key_id=user["access_key_id"],
                          aws_secret_access_key=user["secret_access_key"], region_name="us-east-1",
                          config=Config(retries={"max_attempts": 1, "mode": "standard"}))
        s3.put_object(Bucket=name, Key="before", Body=b"x" * 100)
        shutil.rmtree(root)
        for call in (lambda: s3.put_object(Bucket=name, Key="after", Body=b"y" * 100),
                     lambda: s3.get_object(Bucket=name, Key="before")["Body"].read()):
            with pytest.raises(ClientError) as refused:
                call()
            assert refused.value.response["Error"]["Code"] == "ServiceUnavailable"
            assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 503
        assert not root.exists()
    finally:
        stop(proc)
    with transaction() as s:
        [health] = tiers.health([t for t in tiers.list_tiers(s) if t.name == name], timeout_s=10)
    assert not health.ok and "missing" in health.message, health
    assert not root.exists()  # the probe did not re-create it either

