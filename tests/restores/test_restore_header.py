"""HeadObject's x-amz-restore as S3 words it, from the catalog row of an archived object."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tierpilot.catalog.models import Object
from tierpilot.gateway.common import restore_header
from tierpilot.tiers.models import Tier

ARCHIVE = Tier(name="archive", driver="posix", offline=True)
HOT = Tier(name="hot", driver="posix", offline=False)


def _obj(state: str | None, expiry: datetime | None = None) -> Object:
    return Object(key="k", storage_class="GLACIER", restore_state=state, restore_expiry=expiry)


def test_ongoing_and_restored_copies_are_announced_exactly_as_s3_does() -> None:
    assert restore_header(_obj("ongoing"), ARCHIVE) == [(b"x-amz-restore", b'ongoing-request="true"')]
    expiry = datetime(2099, 12, 21, tzinfo=UTC)
    assert restore_header(_obj("restored", expiry), ARCHIVE) == [
        (b"x-amz-restore", b'ongoing-request="false", expiry-date="Mon, 21 Dec 2099 00:00:00 GMT"')]


def test_no_header_without_a_restore_an_expired_copy_or_an_archive_tier() -> None:
    assert restore_header(_obj(None), ARCHIVE) == []
    assert restore_header(_obj("restored", datetime.now(UTC) - timedelta(seconds=1)), ARCHIVE) == []
    assert restore_header(_obj("failed"), ARCHIVE) == []
    assert restore_header(_obj("restored", datetime(2099, 1, 1, tzinfo=UTC)), HOT) == []
