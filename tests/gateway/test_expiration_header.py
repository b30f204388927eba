"""x-amz-expiration on PUT, GET and HEAD of objects an enabled rule will expire (real gateway, boto3): the
earliest matching rule's day (creation + Days, rounded up to midnight UTC) and its id; none for objects no
rule expires, after the configuration is deleted, or for a version asked for by id."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

from botocore.client import BaseClient


def _expiration(response: dict[str, object]) -> tuple[datetime, str] | None:
    value = response["ResponseMetadata"]["HTTPHeaders"].get("x-amz-expiration")  # type: ignore[index]
    if value is None:
        return None
    m = re.fullmatch(r'expiry-date="(.+)", rule-id="(.+)"', value)
    assert m, value
    return parsedate_to_datetime(m.group(1)), m.group(2)


def test_objects_a_rule_will_expire_say_when_and_which_rule(s3: BaseClient, bucket: str) -> None:
    s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": [
        {"ID": "tmp-30", "Filter": {"Prefix": "tmp/"}, "Status": "Enabled", "Expiration": {"Days": 30}},
        {"ID": "tagged-2", "Filter": {"Tag": {"Key": "scratch", "Value": "yes"}}, "Status": "Enabled",
         "Expiration": {"Days": 2}},
        {"ID": "off", "Filter": {"Prefix": ""}, "Status": "Disabled", "Expiration": {"Days": 1}},
    ]})
    before = datetime.now(UTC)
    put = s3.put_object(Bucket=bucket, Key="tmp/a", Body=b"a")
    when, rule = _expiration(put) or (None, None)
    assert rule == "tmp-30" and when is not None
    midnight = (before + timedelta(days=30)).replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
    assert when == midnight
    assert _expiration(s3.head_object(Bucket=bucket, Key="tmp/a")) == (when, "tmp-30")
    assert _expiration(s3.get_object(Bucket=bucket, Key="tmp/a")) == (when, "tmp-30")
    s3.put_object(Bucket=bucket, Key="tmp/b", Body=b"b", Tagging="scratch=yes")  # the earlier rule wins
    assert _expiration(s3.head_object(Bucket=bucket, Key="tmp/b"))[1] == "tagged-2"  # type: ignore[index]
    assert _expiration(s3.put_object(Bucket=bucket, Key="keep/c", Body=b"c")) is None
    s3.delete_bucket_lifecycle(Bucket=bucket)
    assert _expiration(s3.head_object(Bucket=bucket, Key="tmp/a")) is None


def test_a_version_asked_for_by_id_has_no_expiration(s3: BaseClient, bucket: str) -> None:
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": [
        {"ID": "all", "Filter": {}, "Status": "Enabled", "Expiration": {"Days": 5}}]})
    vid = s3.put_object(Bucket=bucket, Key="k", Body=b"1")["VersionId"]
    assert _expiration(s3.head_object(Bucket=bucket, Key="k")) is not None
    assert _expiration(s3.head_object(Bucket=bucket, Key="k", VersionId=vid)) is None
