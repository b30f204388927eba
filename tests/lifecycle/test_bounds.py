"""Absurd numbers in a lifecycle rule are refused where they are parsed, and a configuration that cannot be
used (stored before the bounds, or failing for any other reason) costs only its own bucket a sweep."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from tests.lifecycle.conftest import World, age, put
from tierpilot.catalog import service as catalog_service
from tierpilot.kit.db import transaction
from tierpilot.lifecycle import due
from tierpilot.lifecycle.models import LifecycleConfiguration
from tierpilot.lifecycle.rules import LifecycleInvalid
from tierpilot.lifecycle.s3xml import parse_xml
from tierpilot.notifications.models import Notification

BIG = b"b" * (256 * 1024)
HUGE = 10_000_000
POISON = {"id": "p", "status": "Enabled", "filter": {"prefix": ""},
          "abort_incomplete_multipart_upload_days": HUGE}


def _rule(inner: str) -> bytes:
    return (f"<LifecycleConfiguration><Rule><ID>r</ID><Status>Enabled</Status><Filter><Prefix/></Filter>{inner}"
            f"</Rule></LifecycleConfiguration>").encode()


@pytest.mark.parametrize("inner", [
    f"<AbortIncompleteMultipartUpload><DaysAfterInitiation>{HUGE}</DaysAfterInitiation>"
    "</AbortIncompleteMultipartUpload>",
    f"<NoncurrentVersionExpiration><NoncurrentDays>{HUGE}</NoncurrentDays></NoncurrentVersionExpiration>",
    f"<NoncurrentVersionTransition><NoncurrentDays>{HUGE}</NoncurrentDays><StorageClass>GLACIER</StorageClass>"
    "</NoncurrentVersionTransition>",
    "<NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays>"
    f"<NewerNoncurrentVersions>{HUGE}</NewerNoncurrentVersions></NoncurrentVersionExpiration>",
    f"<Expiration><Days>{10**30}</Days></Expiration>",
    f"<Transition><Days>{HUGE}</Days><StorageClass>GLACIER</StorageClass></Transition>",
    "<Expiration><Date>9999-12-31T00:00:00Z</Date></Expiration>",
])
def test_absurd_numbers_in_the_xml_are_invalid_argument(inner: str) -> None:
    with pytest.raises(LifecycleInvalid) as err:
        parse_xml(_rule(inner))
    assert err.value.s3_code == "InvalidArgument"


def test_absurd_sizes_in_a_filter_are_invalid_argument() -> None:
    body = (b"<LifecycleConfiguration><Rule><ID>r</ID><Status>Enabled</Status><Filter><ObjectSizeGreaterThan>"
            + str(10**30).encode() + b"</ObjectSizeGreaterThan></Filter><Expiration><Days>1</Days></Expiration>"
            b"</Rule></LifecycleConfiguration>")
    with pytest.raises(LifecycleInvalid) as err:
        parse_xml(body)
    assert err.value.s3_code == "InvalidArgument"


def test_the_api_refuses_an_absurd_rule_with_422_naming_the_field(client: TestClient, world: World) -> None:
    url = f"/api/lifecycle/buckets/{world.bucket}"
    r = client.post(f"{url}/rules", json=POISON)
    assert r.status_code == 422, r.text
    assert "abort_incomplete_multipart_upload_days" in r.json()["detail"]
    r = client.post(f"{url}/dry-run", json={"rule": POISON})
    assert r.status_code == 422, r.text
    nc = {"id": "n", "filter": {}, "noncurrent_version_expiration": {"noncurrent_days": HUGE}}
    r = client.post(f"{url}/rules", json=nc)
    assert r.status_code == 422 and "noncurrent_days" in r.json()["detail"], r.text
    assert client.get(f"{url}/configuration").json()["configured"] is False


def _poisoned_bucket(world: World) -> tuple[int, str]:
    """A bucket of the same owner whose stored configuration predates the bounds."""
    with transaction(write=True) as s:
        b = catalog_service.create_bucket(s, owner_id=world.owner_id, name=f"poison-{world.tag}",
                                          tier_name=f"hot-{world.tag}")
        s.add(LifecycleConfiguration(bucket_id=b.id, rules=[POISON]))
        return b.id, b.name


def test_a_poisoned_bucket_is_skipped_reported_to_its_owner_and_every_other_bucket_is_swept(
        client: TestClient, world: World) -> None:
    bad_id, bad_name = _poisoned_bucket(world)
    rule: dict[str, Any] = {"id": "gone", "filter": {}, "expiration": {"days": 1}}
    assert client.put(f"/api/lifecycle/buckets/{world.bucket}/configuration",
                      json={"rules": [rule]}).status_code == 200
    put(world, "old", BIG)
    age(world, days=5)
    result = due.sweep()
    assert result.queued == {"expiration": 1} and [k.bucket for k in result.skipped] == [bad_name]
    assert [k.bucket for k in due.sweep().skipped] == [bad_name]
    with transaction() as s:
        notes = list(s.scalars(select(Notification).where(Notification.user_id == world.owner_id,
                                                         Notification.kind == "lifecycle.skipped")))
    # one notification, not one per sweep
    assert len(notes) == 1 and bad_name in notes[0].title + notes[0].body
    # the previews skip it too instead of failing
    assert client.get("/api/lifecycle/preview").status_code == 200
    r = client.get("/api/lifecycle/preview", params={"bucket": bad_name})
    assert r.status_code == 422 and "replace" in r.json()["detail"], r.text
    # and its owner can replace or delete the configuration
    assert client.delete(f"/api/lifecycle/buckets/{bad_name}/configuration").status_code == 204
    assert not due.sweep(bucket_id=bad_id).skipped


def test_a_bucket_whose_sweep_fails_is_skipped_and_the_rest_still_run(
        client: TestClient, world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    other_id, other_name = _poisoned_bucket(world)
    with transaction(write=True) as s:
        row = s.scalar(select(LifecycleConfiguration).where(LifecycleConfiguration.bucket_id == other_id))
        assert row is not None
        row.rules = [{"id": "e", "status": "Enabled", "filter": {}, "expiration": {"days": 1}}]
    assert client.put(f"/api/lifecycle/buckets/{world.bucket}/configuration",
                      json={"rules": [{"id": "gone", "filter": {}, "expiration": {"days": 1}}]}).status_code == 200
    put(world, "old", BIG)
    age(world, days=5)
    real = due.plan_bucket

    def failing(session: Any, bucket: Any, *args: Any) -> due.BucketPlan:
        if bucket.id == other_id:
            raise OverflowError("date value out of range")
        return real(session, bucket, *args)

    monkeypatch.setattr(due, "plan_bucket", failing)
    result = due.sweep()
    assert result.queued == {"expiration": 1}
    assert [(k.bucket, k.reason) for k in result.skipped] == [(other_name, "OverflowError: date value out of range")]
