"""tiers.housekeep: the backstop sweep over every tier."""

from __future__ import annotations

import os
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path

from tierpilot.drivers import registry
from tierpilot.drivers.offline import OfflinePosixDriver
from tierpilot.drivers.posix import PosixDriver
from tierpilot.drivers.s3 import S3Driver
from tierpilot.kit.db import transaction
from tierpilot.tiers import service as tiers
from tierpilot.tiers.schemas import RestoreDelays, TierCreate
from tierpilot.tiers.tasks import housekeep


def test_housekeeping_cleans_every_tier_and_survives_a_broken_one(db: str, tmp_path: Path,
                                                                  s3_driver: S3Driver) -> None:
    with transaction(write=True) as s:
        hot = tiers.create(s, TierCreate(name="hk-hot", driver="posix", config={"path": str(tmp_path / "hot")}))
        archive = tiers.create(s, TierCreate(
            name="hk-archive", driver="posix", config={"path": str(tmp_path / "archive")}, offline=True,
            storage_classes=["GLACIER"], restore_delays=RestoreDelays(expedited=0, standard=0, bulk=0)))
        tiers.create(s, TierCreate(name="hk-broken", driver="posix", config={"path": str(tmp_path / "broken")}))
        tiers.create(s, TierCreate(name="hk-cloud", driver="s3", config={
            "endpoint_url": s3_driver.endpoint_url, "bucket": s3_driver.bucket, "prefix": "tp/",
            "access_key_id": "AKIDTEST", "secret_access_key": "secret"}))
    registry.clear()
    hot_driver = registry.driver_for(hot)
    assert isinstance(hot_driver, PosixDriver)
    stale = hot_driver.tmp / "crashed.tmp"
    stale.write_bytes(b"half a blob")
    fresh = hot_driver.tmp / "writing.tmp"
    fresh.write_bytes(b"in progress")
    two_days_ago = time.time() - 2 * 86400
    os.utime(stale, (two_days_ago, two_days_ago))

    archive_driver = registry.driver_for(archive)
    assert isinstance(archive_driver, OfflinePosixDriver)
    archive_driver.put("b/cold~1", iter([b"x"]))
    assert archive_driver.restore("b/cold~1", 1, "bulk").restored
    archive_driver.clock = lambda: datetime(2100, 1, 1, tzinfo=UTC)  # long past the copy's expiry

    shutil.rmtree(tmp_path / "broken")
    (tmp_path / "broken").write_bytes(b"not a directory any more")
    s3_driver.client.create_multipart_upload(Bucket=s3_driver.bucket, Key="tp/b/crashed~1")

    stats = housekeep()
    assert stats == {"tiers": 4, "tmp_files_removed": 1, "restored_copies_purged": 1, "stale_uploads_aborted": 1,
                     "errors": 1}
    assert not stale.exists() and fresh.exists()
    assert not list(archive_driver.blobs.rglob("c_*")) and archive_driver.exists("b/cold~1")
