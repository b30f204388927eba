"""``x-amz-expected-bucket-owner``: a request naming an account other than the bucket's owner (the Owner/ID that
ListBuckets shows) is AccessDenied and changes nothing; naming the owner is served."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from tests.gateway.conftest import Gateway, catalog_rows


def _owner_id(s3: BaseClient) -> str:
    return str(s3.list_buckets()["Owner"]["ID"])


def _code(call: Any, **kwargs: Any) -> tuple[int, str]:
    with pytest.raises(ClientError) as e:
        call(**kwargs)
    return e.value.response["ResponseMetadata"]["HTTPStatusCode"], e.value.response["Error"]["Code"]


def test_another_owner_is_refused_on_put_get_and_list(gateway: Gateway, s3: BaseClient, bucket: str) -> None:
    other = str(gateway.users["bob"].id)
    assert other != _owner_id(s3)
    s3.put_object(Bucket=bucket, Key="k", Body=b"v")
    denied = (403, "AccessDenied")
    assert _code(s3.put_object, Bucket=bucket, Key="new", Body=b"x", ExpectedBucketOwner=other) == denied
    assert _code(s3.get_object, Bucket=bucket, Key="k", ExpectedBucketOwner=other) == denied
    assert _code(s3.list_objects, Bucket=bucket, ExpectedBucketOwner=other) == denied
    assert _code(s3.list_objects_v2, Bucket=bucket, ExpectedBucketOwner=other) == denied
    assert [row[0] for row in catalog_rows(bucket)] == ["k"]


def test_the_owner_is_served_on_put_get_and_list(s3: BaseClient, bucket: str) -> None:
    owner = _owner_id(s3)
    s3.put_object(Bucket=bucket, Key="k", Body=b"v", ExpectedBucketOwner=owner)
    assert s3.get_object(Bucket=bucket, Key="k", ExpectedBucketOwner=owner)["Body"].read() == b"v"
    assert [o["Key"] for o in s3.list_objects(Bucket=bucket, ExpectedBucketOwner=owner)["Contents"]] == ["k"]
    assert s3.list_objects_v2(Bucket=bucket, ExpectedBucketOwner=owner)["KeyCount"] == 1


def test_copy_checks_the_source_owner_separately(gateway: Gateway, s3: BaseClient, bucket: str,
                                                 make_bucket: Callable[..., str]) -> None:
    owner, other = _owner_id(s3), str(gateway.users["bob"].id)
    source = make_bucket()
    s3.put_object(Bucket=source, Key="src", Body=b"v")
    copy = {"Bucket": bucket, "Key": "dst", "CopySource": {"Bucket": source, "Key": "src"}}
    assert _code(s3.copy_object, **copy, ExpectedBucketOwner=owner,
                 ExpectedSourceBucketOwner=other) == (403, "AccessDenied")
    assert catalog_rows(bucket) == []
    s3.copy_object(**copy, ExpectedBucketOwner=owner, ExpectedSourceBucketOwner=owner)
    assert s3.get_object(Bucket=bucket, Key="dst")["Body"].read() == b"v"


def test_an_anonymous_caller_of_a_public_bucket_is_refused_too(gateway: Gateway, s3: BaseClient,
                                                                bucket: str) -> None:
    import boto3
    from botocore import UNSIGNED
    from botocore.config import Config

    s3.put_bucket_acl(Bucket=bucket, ACL="public-read-write")
    anonymous = boto3.client("s3", endpoint_url=gateway.url, region_name="us-east-1",
                             config=Config(signature_version=UNSIGNED))
    anonymous.list_objects(Bucket=bucket)  # the ACL lets anyone in
    wrong = _owner_id(s3) + "foo"
    assert _code(anonymous.list_objects, Bucket=bucket, ExpectedBucketOwner=wrong) == (403, "AccessDenied")
    assert _code(anonymous.put_object, Bucket=bucket, Key="bar", Body=b"coffee",
                 ExpectedBucketOwner=wrong) == (403, "AccessDenied")
    assert catalog_rows(bucket) == []
