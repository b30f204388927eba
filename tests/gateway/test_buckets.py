"""Bucket operations, ownership and space reservations."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from tests.gateway.conftest import Gateway, catalog_rows


def _code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return str(exc.value.response["Error"]["Code"])


def _with_headers(client: BaseClient, headers: dict[str, str]) -> BaseClient:
    def add(request: Any, **_: Any) -> None:
        for k, v in headers.items():
            request.headers[k] = v

    client.meta.events.register_first("before-sign.s3.CreateBucket", add)
    return client


def test_create_list_head_delete(s3: BaseClient) -> None:
    name = f"t-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=name)
    assert name in [b["Name"] for b in s3.list_buckets()["Buckets"]]
    assert s3.head_bucket(Bucket=name)["ResponseMetadata"]["HTTPHeaders"]["x-amz-bucket-region"] == "us-east-1"
    assert s3.get_bucket_location(Bucket=name)["LocationConstraint"] is None
    s3.delete_bucket(Bucket=name)
    with pytest.raises(ClientError) as exc:
        s3.head_bucket(Bucket=name)
    assert exc.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
    with pytest.raises(ClientError) as exc:
        s3.list_objects_v2(Bucket=name)
    assert _code(exc) == "NoSuchBucket"


def test_location_constraint_is_kept(s3: BaseClient) -> None:
    name = f"t-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=name, CreateBucketConfiguration={"LocationConstraint": "eu-central-1"})
    assert s3.get_bucket_location(Bucket=name)["LocationConstraint"] == "eu-central-1"


def test_existing_names_and_bad_names(s3: BaseClient, gateway: Gateway, bucket: str) -> None:
    with pytest.raises(ClientError) as exc:
        s3.create_bucket(Bucket=bucket)
    assert _code(exc) == "BucketAlreadyOwnedByYou"
    with pytest.raises(ClientError) as exc:
        gateway.client("bob").create_bucket(Bucket=bucket)
    assert _code(exc) == "BucketAlreadyExists"
    for bad in ("ab", "Upper-case", "has_underscore", "-leading", "192.168.1.1", "a..b"):
        with pytest.raises(ClientError) as exc:
            s3.create_bucket(Bucket=bad)
        assert _code(exc) == "InvalidBucketName", bad


def test_delete_refuses_non_empty_bucket(s3: BaseClient, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="x", Body=b"x")
    with pytest.raises(ClientError) as exc:
        s3.delete_bucket(Bucket=bucket)
    assert _code(exc) == "BucketNotEmpty"
    s3.delete_object(Bucket=bucket, Key="x")
    upload = s3.create_multipart_upload(Bucket=bucket, Key="pending")["UploadId"]
    s3.delete_bucket(Bucket=bucket)  # unfinished uploads go with the bucket
    assert upload


def test_only_the_owner_and_admins_touch_a_bucket(s3: BaseClient, gateway: Gateway, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="private", Body=b"alice's")
    bob, root = gateway.client("bob"), gateway.client("root")
    for call in (lambda: bob.get_object(Bucket=bucket, Key="private"),
                 lambda: bob.put_object(Bucket=bucket, Key="intruder", Body=b"x"),
                 lambda: bob.list_objects_v2(Bucket=bucket),
                 lambda: bob.delete_object(Bucket=bucket, Key="private"),
                 lambda: bob.delete_bucket(Bucket=bucket)):
        with pytest.raises(ClientError) as exc:
            call()
        assert _code(exc) == "AccessDenied"
    assert bucket not in [b["Name"] for b in bob.list_buckets()["Buckets"]]
    assert bucket in [b["Name"] for b in root.list_buckets()["Buckets"]]
    assert root.get_object(Bucket=bucket, Key="private")["Body"].read() == b"alice's"
    assert [r[0] for r in catalog_rows(bucket)] == ["private"]


def test_bucket_on_another_tier(gateway: Gateway) -> None:
    client = _with_headers(gateway.client("alice"), {"x-tierpilot-tier": "infrequent"})
    name = f"t-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=name)
    client.put_object(Bucket=name, Key="k", Body=b"on the IA tier")
    assert client.head_object(Bucket=name, Key="k")["StorageClass"] == "STANDARD_IA"
    bad = _with_headers(gateway.client("alice"), {"x-tierpilot-tier": "no-such-tier"})
    with pytest.raises(ClientError) as exc:
        bad.create_bucket(Bucket=f"t-{uuid.uuid4().hex[:12]}")
    assert _code(exc) == "InvalidArgument"


def test_space_reservation_refuses_writes_beyond_it(gateway: Gateway) -> None:
    now = datetime.now(UTC)
    client = _with_headers(gateway.client("alice"), {
        "x-tierpilot-space-bytes": "1000",
        "x-tierpilot-space-start": (now - timedelta(hours=1)).isoformat(),
        "x-tierpilot-space-end": (now + timedelta(days=1)).isoformat(),
    })
    name = f"t-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=name)
    client.put_object(Bucket=name, Key="a", Body=b"x" * 600)
    with pytest.raises(ClientError) as exc:
        client.put_object(Bucket=name, Key="b", Body=b"x" * 600)
    assert _code(exc) == "QuotaExceeded"
    assert exc.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert [r[0] for r in catalog_rows(name)] == ["a"]
    client.put_object(Bucket=name, Key="a", Body=b"y" * 900)  # replacing frees the old bytes
    client.put_object(Bucket=name, Key="c", Body=b"z" * 100)
    with pytest.raises(ClientError) as exc:
        client.copy_object(Bucket=name, Key="d", CopySource={"Bucket": name, "Key": "c"})
    assert _code(exc) == "QuotaExceeded"
    client.delete_object(Bucket=name, Key="a")
    client.put_object(Bucket=name, Key="b", Body=b"x" * 600)
    assert [r[0] for r in catalog_rows(name)] == ["b", "c"]


def test_space_reservation_outside_its_window_does_not_limit(gateway: Gateway) -> None:
    later = datetime.now(UTC) + timedelta(days=2)
    client = _with_headers(gateway.client("alice"), {
        "x-tierpilot-space-bytes": "10", "x-tierpilot-space-start": later.isoformat()})
    name = f"t-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=name)
    client.put_object(Bucket=name, Key="big", Body=b"x" * 100)


def test_bad_space_headers_are_rejected(gateway: Gateway) -> None:
    for headers in ({"x-tierpilot-space-bytes": "lots"}, {"x-tierpilot-space-bytes": "10",
                                                          "x-tierpilot-space-start": "tomorrow"},
                    {"x-tierpilot-space-start": "2026-01-01T00:00:00Z"}):
        client = _with_headers(gateway.client("alice"), headers)
        with pytest.raises(ClientError) as exc:
            client.create_bucket(Bucket=f"t-{uuid.uuid4().hex[:12]}")
        assert _code(exc) == "InvalidArgument", headers


def test_unsupported_sub_resources_answer_like_s3(s3: BaseClient, bucket: str) -> None:
    with pytest.raises(ClientError) as exc:
        s3.get_bucket_policy(Bucket=bucket)
    assert _code(exc) == "NoSuchBucketPolicy"
    with pytest.raises(ClientError) as exc:
        s3.get_bucket_cors(Bucket=bucket)
    assert _code(exc) == "NoSuchCORSConfiguration"
    assert "Status" not in s3.get_bucket_versioning(Bucket=bucket)
    assert s3.get_bucket_acl(Bucket=bucket)["Grants"][0]["Permission"] == "FULL_CONTROL"
    with pytest.raises(ClientError) as exc:  # ACLs are kept (tests/sharing); a canned ACL S3 has not is refused
        s3.put_bucket_acl(Bucket=bucket, ACL="public-everything")  # type: ignore[arg-type]
    assert _code(exc) == "InvalidArgument"
