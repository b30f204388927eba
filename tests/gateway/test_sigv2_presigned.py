"""Signature V2 presigned URLs made by boto3 (``signature_version="s3"``), fetched with plain httpx: bucket-level
operations sign the path with the bucket's trailing slash, object-level ones the key; both are served."""

from __future__ import annotations

import httpx
from botocore.client import BaseClient

from tests.gateway.conftest import Gateway


def test_v2_presigned_list_objects_v2_is_served(gateway: Gateway, s3: BaseClient, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="a b+c", Body=b"v")
    v2 = gateway.client("alice", signature_version="s3")
    url = v2.generate_presigned_url("list_objects_v2", Params={"Bucket": bucket, "Prefix": "a"}, ExpiresIn=300)
    r = httpx.get(url, timeout=10)
    assert r.status_code == 200, r.text
    assert "<Key>a%20b%2Bc</Key>" in r.text  # boto3 asks for encoding-type=url


def test_v2_presigned_bucket_subresource_is_served(gateway: Gateway, s3: BaseClient, bucket: str) -> None:
    v2 = gateway.client("alice", signature_version="s3")
    url = v2.generate_presigned_url("get_bucket_versioning", Params={"Bucket": bucket}, ExpiresIn=300)
    r = httpx.get(url, timeout=10)
    assert r.status_code == 200, r.text
    assert "VersioningConfiguration" in r.text


def test_v2_presigned_object_get_and_put_are_served(gateway: Gateway, s3: BaseClient, bucket: str) -> None:
    v2 = gateway.client("alice", signature_version="s3")
    put = v2.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "dir/k ey"}, ExpiresIn=300)
    assert httpx.put(put, content=b"payload", timeout=10).status_code == 200
    get = v2.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "dir/k ey"}, ExpiresIn=300)
    r = httpx.get(get, timeout=10)
    assert (r.status_code, r.content) == (200, b"payload")


def test_v2_presigned_url_with_a_changed_query_is_refused(gateway: Gateway, bucket: str) -> None:
    v2 = gateway.client("alice", signature_version="s3")
    url = v2.generate_presigned_url("get_bucket_versioning", Params={"Bucket": bucket}, ExpiresIn=300)
    r = httpx.get(url.replace("?versioning", "?acl"), timeout=10)
    assert r.status_code == 403 and "<Code>SignatureDoesNotMatch</Code>" in r.text
