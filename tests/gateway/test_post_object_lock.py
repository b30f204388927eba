"""POST object with object lock fields (x-amz-object-lock-mode, -retain-until-date, -legal-hold): kept on the
version as a PutObject's headers are, refused the same way (real gateway, requests' multipart forms)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from tests.gateway.conftest import Gateway, catalog_rows
from tests.gateway.test_post_object import _code, _post, _v2_form


def _form(gateway: Gateway, bucket: str, fields: dict[str, str]) -> Any:
    """A signed form whose policy names every field it carries (a condition on an absent field fails)."""
    conditions = [{"bucket": bucket}, *(["starts-with", f"${name}", ""] for name in fields)]
    return _v2_form(gateway, bucket, conditions, fields)


def _until(days: float) -> str:
    return (datetime.now(UTC) + timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_form_lock_fields_lock_the_version(gateway: Gateway, s3: BaseClient, make_bucket: Any) -> None:
    bucket = make_bucket(ObjectLockEnabledForBucket=True)
    until = _until(2)
    form = _form(gateway, bucket, {"key": "locked", "x-amz-object-lock-mode": "GOVERNANCE",
                                   "x-amz-object-lock-retain-until-date": until, "x-amz-object-lock-legal-hold": "ON"})
    r = _post(gateway, bucket, form, b"kept for years")
    assert r.status_code == 204, r.text
    version = r.headers["x-amz-version-id"]
    head = s3.head_object(Bucket=bucket, Key="locked", VersionId=version)
    assert (head["ObjectLockMode"], head["ObjectLockLegalHoldStatus"]) == ("GOVERNANCE", "ON")
    assert head["ObjectLockRetainUntilDate"].strftime("%Y-%m-%dT%H:%M:%SZ") == until
    with pytest.raises(ClientError) as e:
        s3.delete_object(Bucket=bucket, Key="locked", VersionId=version)
    assert e.value.response["Error"]["Code"] == "AccessDenied"


@pytest.mark.parametrize(("fields", "field"), [
    ({"x-amz-object-lock-mode": "FOREVER", "x-amz-object-lock-retain-until-date": _until(1)},
     "x-amz-object-lock-mode"),
    ({"x-amz-object-lock-mode": "COMPLIANCE"}, "x-amz-object-lock-mode"),
    ({"x-amz-object-lock-mode": "COMPLIANCE", "x-amz-object-lock-retain-until-date": "tomorrow"},
     "x-amz-object-lock-retain-until-date"),
    ({"x-amz-object-lock-mode": "COMPLIANCE", "x-amz-object-lock-retain-until-date": _until(-1)},
     "x-amz-object-lock-retain-until-date"),
    ({"x-amz-object-lock-legal-hold": "YES"}, "x-amz-object-lock-legal-hold"),
])
def test_bad_lock_fields_are_invalid_argument_naming_the_field(gateway: Gateway, make_bucket: Any,
                                                               fields: dict[str, str], field: str) -> None:
    bucket = make_bucket(ObjectLockEnabledForBucket=True)
    r = _post(gateway, bucket, _form(gateway, bucket, {"key": "k", **fields}))
    assert (r.status_code, _code(r)) == (400, "InvalidArgument"), r.text
    assert f"<ArgumentName>{field}</ArgumentName>" in r.text
    assert catalog_rows(bucket) == []


def test_lock_fields_in_a_bucket_without_lock_are_invalid_request(gateway: Gateway, bucket: str) -> None:
    r = _post(gateway, bucket, _form(gateway, bucket, {"key": "k", "x-amz-object-lock-legal-hold": "ON"}))
    assert (r.status_code, _code(r)) == (400, "InvalidRequest"), r.text
    assert catalog_rows(bucket) == []


def test_lock_fields_must_be_named_by_the_policy(gateway: Gateway, make_bucket: Any) -> None:
    bucket = make_bucket(ObjectLockEnabledForBucket=True)
    form = _v2_form(gateway, bucket, [{"bucket": bucket}, ["starts-with", "$key", ""]],
                    {"key": "k", "x-amz-object-lock-legal-hold": "ON"})
    r = _post(gateway, bucket, form)
    assert (r.status_code, _code(r)) == (403, "AccessDenied")
    assert catalog_rows(bucket) == []
