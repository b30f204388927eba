"""Object operations through boto3 with default settings: put/get/head/delete, metadata, ranges,
conditional requests, checksums, presigned URLs, copies, storage classes, tagging."""

from __future__ import annotations

import base64
import hashlib
import os
import zlib
from datetime import UTC, datetime, timedelta

import google_crc32c
import httpx
import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from tests.gateway.conftest import Gateway, blob_files, catalog_rows
from tests.waiting import wait_until


def _code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return str(exc.value.response["Error"]["Code"])


def _status(exc: pytest.ExceptionInfo[ClientError]) -> int:
    return int(exc.value.response["ResponseMetadata"]["HTTPStatusCode"])


def test_put_get_head_delete_round_trip_with_metadata(s3: BaseClient, bucket: str) -> None:
    data = os.urandom(100_000)
    put = s3.put_object(Bucket=bucket, Key="dir/obj.bin", Body=data, ContentType="application/x-test",
                        Metadata={"experiment": "belle2", "run": "42"}, ContentDisposition="attachment",
                        CacheControl="max-age=60")
    assert put["ETag"] == f'"{hashlib.md5(data).hexdigest()}"'
    got = s3.get_object(Bucket=bucket, Key="dir/obj.bin")
    assert got["Body"].read() == data
    assert got["ContentType"] == "application/x-test"
    assert got["Metadata"] == {"experiment": "belle2", "run": "42"}
    assert got["ContentDisposition"] == "attachment"
    assert got["CacheControl"] == "max-age=60"
    head = s3.head_object(Bucket=bucket, Key="dir/obj.bin")
    assert head["ContentLength"] == len(data)
    assert "StorageClass" not in head  # S3 says a class other than STANDARD only (x-amz-storage-class)
    assert head["ETag"] == put["ETag"]
    s3.delete_object(Bucket=bucket, Key="dir/obj.bin")
    with pytest.raises(ClientError) as exc:
        s3.head_object(Bucket=bucket, Key="dir/obj.bin")
    assert _status(exc) == 404
    with pytest.raises(ClientError) as exc:
        s3.get_object(Bucket=bucket, Key="dir/obj.bin")
    assert _code(exc) == "NoSuchKey"
    s3.delete_object(Bucket=bucket, Key="dir/obj.bin")  # deleting a missing key succeeds, as S3


def test_overwrite_replaces_bytes_and_removes_the_old_blob(s3: BaseClient, bucket: str, gateway: Gateway) -> None:
    s3.put_object(Bucket=bucket, Key="k", Body=b"first version")
    before = blob_files(gateway.tier_dirs["hot-disk"])
    s3.put_object(Bucket=bucket, Key="k", Body=b"second")
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"second"
    after = blob_files(gateway.tier_dirs["hot-disk"])
    assert len(after) == len(before)
    assert catalog_rows(bucket)[0][1] == len(b"second")


def test_empty_object(s3: BaseClient, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="empty", Body=b"")
    got = s3.get_object(Bucket=bucket, Key="empty")
    assert got["Body"].read() == b""
    assert got["ETag"] == '"d41d8cd98f00b204e9800998ecf8427e"'


@pytest.mark.parametrize(
    ("header", "expected", "content_range"),
    [
        ("bytes=0-9", slice(0, 10), "bytes 0-9/1000"),
        ("bytes=990-", slice(990, 1000), "bytes 990-999/1000"),
        ("bytes=-5", slice(995, 1000), "bytes 995-999/1000"),
        ("bytes=500-5000", slice(500, 1000), "bytes 500-999/1000"),
    ],
)
def test_ranged_get_answers_206(s3: BaseClient, bucket: str, header: str, expected: slice,
                                content_range: str) -> None:
    data = os.urandom(1000)
    s3.put_object(Bucket=bucket, Key="r", Body=data)
    got = s3.get_object(Bucket=bucket, Key="r", Range=header)
    assert got["ResponseMetadata"]["HTTPStatusCode"] == 206
    assert got["ContentRange"] == content_range
    assert got["Body"].read() == data[expected]


def test_unsatisfiable_range_is_416_and_garbage_range_is_ignored(s3: BaseClient, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="r", Body=b"0123456789")
    with pytest.raises(ClientError) as exc:
        s3.get_object(Bucket=bucket, Key="r", Range="bytes=10-20")
    assert _status(exc) == 416 and _code(exc) == "InvalidRange"
    full = s3.get_object(Bucket=bucket, Key="r", Range="bytes=abc")
    assert full["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert full["Body"].read() == b"0123456789"


def test_conditional_get_304_and_412(s3: BaseClient, bucket: str) -> None:
    put = s3.put_object(Bucket=bucket, Key="c", Body=b"conditional")
    tag = put["ETag"]
    assert s3.get_object(Bucket=bucket, Key="c", IfMatch=tag)["Body"].read() == b"conditional"
    with pytest.raises(ClientError) as exc:
        s3.get_object(Bucket=bucket, Key="c", IfMatch='"0000"')
    assert _status(exc) == 412 and _code(exc) == "PreconditionFailed"
    with pytest.raises(ClientError) as exc:
        s3.get_object(Bucket=bucket, Key="c", IfNoneMatch=tag)
    assert _status(exc) == 304
    future = datetime.now(UTC) + timedelta(hours=1)
    past = datetime.now(UTC) - timedelta(hours=1)
    with pytest.raises(ClientError) as exc:
        s3.get_object(Bucket=bucket, Key="c", IfModifiedSince=future)
    assert _status(exc) == 304
    assert s3.get_object(Bucket=bucket, Key="c", IfModifiedSince=past)["Body"].read() == b"conditional"
    with pytest.raises(ClientError) as exc:
        s3.get_object(Bucket=bucket, Key="c", IfUnmodifiedSince=past)
    assert _status(exc) == 412
    # If-Match true wins over If-Unmodified-Since false (as S3)
    assert s3.get_object(Bucket=bucket, Key="c", IfMatch=tag, IfUnmodifiedSince=past)["Body"].read()
    with pytest.raises(ClientError) as exc:
        s3.head_object(Bucket=bucket, Key="c", IfNoneMatch="*")
    assert _status(exc) == 304


def test_conditional_put_if_none_match_star(s3: BaseClient, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="once", Body=b"a", IfNoneMatch="*")
    with pytest.raises(ClientError) as exc:
        s3.put_object(Bucket=bucket, Key="once", Body=b"b", IfNoneMatch="*")
    assert _status(exc) == 412
    assert s3.get_object(Bucket=bucket, Key="once")["Body"].read() == b"a"


@pytest.mark.parametrize("algorithm", ["CRC32", "CRC32C", "SHA1", "SHA256"])
def test_flexible_checksums_are_verified_stored_and_returned(s3: BaseClient, bucket: str, algorithm: str) -> None:
    data = os.urandom(300_000)
    if algorithm == "CRC32C":  # botocore computes CRC32C only with awscrt: send the value ourselves
        value = base64.b64encode(google_crc32c.value(data).to_bytes(4, "big")).decode()
        put = s3.put_object(Bucket=bucket, Key="x", Body=data, ChecksumCRC32C=value)
    else:
        put = s3.put_object(Bucket=bucket, Key="x", Body=data, ChecksumAlgorithm=algorithm)
    claimed = put[f"Checksum{algorithm}"]
    got = s3.get_object(Bucket=bucket, Key="x", ChecksumMode="ENABLED")
    assert got["Body"].read() == data
    assert got[f"Checksum{algorithm}"] == claimed
    head = s3.head_object(Bucket=bucket, Key="x", ChecksumMode="ENABLED")
    assert head[f"Checksum{algorithm}"] == claimed


def test_wrong_checksum_is_bad_digest_and_stores_nothing(s3: BaseClient, bucket: str, gateway: Gateway) -> None:
    s3.put_object(Bucket=bucket, Key="keep", Body=b"old bytes")
    rows, blobs = catalog_rows(bucket), blob_files(gateway.tier_dirs["hot-disk"])
    wrong_crc = base64.b64encode((zlib.crc32(b"other") & 0xFFFFFFFF).to_bytes(4, "big")).decode()
    with pytest.raises(ClientError) as exc:
        s3.put_object(Bucket=bucket, Key="keep", Body=b"new bytes", ChecksumCRC32=wrong_crc)
    assert _code(exc) == "BadDigest"
    with pytest.raises(ClientError) as exc:
        s3.put_object(Bucket=bucket, Key="fresh", Body=b"new bytes",
                      ContentMD5=base64.b64encode(hashlib.md5(b"other").digest()).decode())
    assert _code(exc) == "BadDigest"
    assert s3.get_object(Bucket=bucket, Key="keep")["Body"].read() == b"old bytes"
    assert catalog_rows(bucket) == rows
    assert blob_files(gateway.tier_dirs["hot-disk"]) == blobs


def test_content_md5_accepted_when_right(s3: BaseClient, bucket: str) -> None:
    body = b"md5 checked"
    s3.put_object(Bucket=bucket, Key="m", Body=body, ContentMD5=base64.b64encode(hashlib.md5(body).digest()).decode())
    assert s3.get_object(Bucket=bucket, Key="m")["Body"].read() == body


def test_presigned_get_and_put(s3: BaseClient, bucket: str) -> None:
    put_url = s3.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "p/q r+s.txt"},
                                        ExpiresIn=300)
    r = httpx.put(put_url, content=b"presigned body")
    assert r.status_code == 200, r.text
    get_url = s3.generate_presigned_url("get_object", Params={
        "Bucket": bucket, "Key": "p/q r+s.txt", "ResponseContentDisposition": "attachment; filename=x.txt"},
        ExpiresIn=300)
    r = httpx.get(get_url)
    assert r.status_code == 200 and r.content == b"presigned body"
    assert r.headers["content-disposition"] == "attachment; filename=x.txt"
    assert r.headers["x-amz-request-id"]


def test_copy_object_metadata_directive_and_storage_class(s3: BaseClient, bucket: str, gateway: Gateway) -> None:
    s3.put_object(Bucket=bucket, Key="src", Body=b"copy me", Metadata={"a": "1"}, ContentType="text/plain")
    s3.copy_object(Bucket=bucket, Key="same-meta", CopySource={"Bucket": bucket, "Key": "src"})
    head = s3.head_object(Bucket=bucket, Key="same-meta")
    assert head["Metadata"] == {"a": "1"} and head["ContentType"] == "text/plain"
    s3.copy_object(Bucket=bucket, Key="new-meta", CopySource=f"{bucket}/src", MetadataDirective="REPLACE",
                   Metadata={"b": "2"}, ContentType="application/json")
    head = s3.head_object(Bucket=bucket, Key="new-meta")
    assert head["Metadata"] == {"b": "2"} and head["ContentType"] == "application/json"
    assert s3.get_object(Bucket=bucket, Key="new-meta")["Body"].read() == b"copy me"
    with pytest.raises(ClientError) as exc:
        s3.copy_object(Bucket=bucket, Key="src", CopySource={"Bucket": bucket, "Key": "src"})
    assert _code(exc) == "InvalidRequest"
    # changing the storage class in place moves the object to the tier of that class
    ia_before = blob_files(gateway.tier_dirs["infrequent"])
    s3.copy_object(Bucket=bucket, Key="src", CopySource={"Bucket": bucket, "Key": "src"}, StorageClass="STANDARD_IA")
    assert s3.head_object(Bucket=bucket, Key="src")["StorageClass"] == "STANDARD_IA"
    assert len(blob_files(gateway.tier_dirs["infrequent"])) == len(ia_before) + 1
    assert s3.get_object(Bucket=bucket, Key="src")["Body"].read() == b"copy me"
    with pytest.raises(ClientError) as exc:
        s3.copy_object(Bucket=bucket, Key="x", CopySource={"Bucket": bucket, "Key": "src"},
                       CopySourceIfMatch='"nope"')
    assert _status(exc) == 412


def test_storage_class_on_put_picks_the_tier(s3: BaseClient, bucket: str, gateway: Gateway) -> None:
    s3.put_object(Bucket=bucket, Key="ia", Body=b"cool data", StorageClass="STANDARD_IA")
    assert s3.head_object(Bucket=bucket, Key="ia")["StorageClass"] == "STANDARD_IA"
    listed = s3.list_objects_v2(Bucket=bucket)["Contents"]
    assert listed[0]["StorageClass"] == "STANDARD_IA"
    with pytest.raises(ClientError) as exc:
        s3.put_object(Bucket=bucket, Key="bad", Body=b"x", StorageClass="ONEZONE_IA")
    assert _code(exc) == "InvalidStorageClass"


def test_archived_object_needs_a_restore_before_get(s3: BaseClient, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="cold", Body=b"frozen", StorageClass="GLACIER")
    head = s3.head_object(Bucket=bucket, Key="cold")
    assert head["StorageClass"] == "GLACIER" and head["ContentLength"] == 6
    with pytest.raises(ClientError) as exc:
        s3.get_object(Bucket=bucket, Key="cold")
    assert _status(exc) == 403 and _code(exc) == "InvalidObjectState"
    with pytest.raises(ClientError) as exc:
        s3.copy_object(Bucket=bucket, Key="warm", CopySource={"Bucket": bucket, "Key": "cold"})
    assert _code(exc) == "InvalidObjectState"


def test_delete_objects_batch(s3: BaseClient, bucket: str) -> None:
    for i in range(5):
        s3.put_object(Bucket=bucket, Key=f"d/{i}", Body=b"x")
    r = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": f"d/{i}"} for i in range(3)] + [
        {"Key": "missing"}, {"Key": "v", "VersionId": "abc"}]})
    assert sorted(d["Key"] for d in r["Deleted"]) == ["d/0", "d/1", "d/2", "missing"]
    assert r["Errors"][0]["Code"] == "NoSuchVersion"
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]] == ["d/3", "d/4"]
    quiet = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "d/3"}], "Quiet": True})
    assert "Deleted" not in quiet


def test_object_tagging(s3: BaseClient, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="t", Body=b"x", Tagging="project=belle2&tier=hot")
    assert {t["Key"]: t["Value"] for t in s3.get_object_tagging(Bucket=bucket, Key="t")["TagSet"]} == {
        "project": "belle2", "tier": "hot"}
    s3.put_object_tagging(Bucket=bucket, Key="t", Tagging={"TagSet": [{"Key": "a", "Value": "b"}]})
    assert s3.get_object_tagging(Bucket=bucket, Key="t")["TagSet"] == [{"Key": "a", "Value": "b"}]
    assert s3.get_object(Bucket=bucket, Key="t")["TagCount"] == 1
    s3.delete_object_tagging(Bucket=bucket, Key="t")
    assert s3.get_object_tagging(Bucket=bucket, Key="t")["TagSet"] == []


def test_keys_with_unusual_characters_round_trip(s3: BaseClient, bucket: str) -> None:
    keys = ["a b/c+d=e&f", "ünïcødé/日本語.txt", "with%percent", "tab\tand~tilde", "trailing/", "a//double",
            "x" * 1000, "emoji-🎉", "?question#hash"]
    for key in keys:
        s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
    for key in keys:
        assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == key.encode()
    listed = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]]
    assert sorted(listed) == sorted(keys)


def test_last_access_time_is_recorded(s3: BaseClient, bucket: str) -> None:
    from sqlalchemy import select

    from tierpilot.catalog.models import Bucket, Object
    from tierpilot.kit.db import transaction

    s3.put_object(Bucket=bucket, Key="seen", Body=b"x")
    s3.get_object(Bucket=bucket, Key="seen")["Body"].read()
    def seen() -> bool:
        with transaction() as s:
            return s.scalar(select(Object.last_access_at).join(Bucket).where(Bucket.name == bucket)) is not None

    wait_until(seen, message="last_access_at was not recorded")
