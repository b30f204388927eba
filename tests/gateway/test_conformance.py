"""Smaller S3 behaviours real clients rely on, through boto3 on a real gateway: a retried
CompleteMultipartUpload, GET/HEAD by part number, conditional writes, bucket and multipart tagging,
ListBuckets pages, GetObjectAttributes."""

from __future__ import annotations

import uuid

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from tests.gateway.conftest import Gateway

MiB = 1024 * 1024


def _code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return str(exc.value.response["Error"]["Code"])


def _two_part_object(s3: BaseClient, bucket: str, key: str, **create: str) -> tuple[str, list[dict[str, object]]]:
    upload = s3.create_multipart_upload(Bucket=bucket, Key=key, **create)["UploadId"]
    parts = []
    for number, body in ((1, b"a" * (5 * MiB)), (2, b"b" * 1000)):
        part = s3.upload_part(Bucket=bucket, Key=key, UploadId=upload, PartNumber=number, Body=body)
        parts.append({"PartNumber": number, "ETag": part["ETag"]})
    return upload, parts


def test_complete_retried_with_the_same_parts_succeeds_and_other_parts_do_not(s3: BaseClient, bucket: str) -> None:
    upload, parts = _two_part_object(s3, bucket, "mp")
    first = s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload, MultipartUpload={"Parts": parts})
    again = s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload, MultipartUpload={"Parts": parts})
    assert again["ETag"] == first["ETag"]
    with pytest.raises(ClientError) as exc:
        s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload,
                                     MultipartUpload={"Parts": parts[:1]})
    assert _code(exc) == "NoSuchUpload"


def test_get_and_head_by_part_number(s3: BaseClient, bucket: str) -> None:
    upload, parts = _two_part_object(s3, bucket, "mp")
    done = s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload, MultipartUpload={"Parts": parts})
    second = s3.get_object(Bucket=bucket, Key="mp", PartNumber=2)
    assert second["Body"].read() == b"b" * 1000
    assert second["PartsCount"] == 2 and second["ETag"] == done["ETag"]
    assert second["ContentRange"] == f"bytes {5 * MiB}-{5 * MiB + 999}/{5 * MiB + 1000}"
    assert s3.head_object(Bucket=bucket, Key="mp", PartNumber=1)["ContentLength"] == 5 * MiB
    with pytest.raises(ClientError) as exc:
        s3.get_object(Bucket=bucket, Key="mp", PartNumber=3)
    assert _code(exc) == "InvalidPart"
    s3.put_object(Bucket=bucket, Key="single", Body=b"xyz")
    assert s3.get_object(Bucket=bucket, Key="single", PartNumber=1)["Body"].read() == b"xyz"


def test_conditional_writes(s3: BaseClient, bucket: str) -> None:
    tag = s3.put_object(Bucket=bucket, Key="k", Body=b"1", IfNoneMatch="*")["ETag"]
    with pytest.raises(ClientError) as exc:
        s3.put_object(Bucket=bucket, Key="k", Body=b"2", IfNoneMatch="*")
    assert _code(exc) == "PreconditionFailed"
    with pytest.raises(ClientError) as exc:
        s3.put_object(Bucket=bucket, Key="k", Body=b"2", IfMatch='"0123"')
    assert _code(exc) == "PreconditionFailed"
    s3.put_object(Bucket=bucket, Key="k", Body=b"2", IfMatch=tag)
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"2"


def test_bucket_tagging_and_tags_given_to_a_multipart_upload(s3: BaseClient, bucket: str) -> None:
    with pytest.raises(ClientError) as exc:
        s3.get_bucket_tagging(Bucket=bucket)
    assert _code(exc) == "NoSuchTagSet"
    s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": [{"Key": "project", "Value": "belle2"}]})
    assert s3.get_bucket_tagging(Bucket=bucket)["TagSet"] == [{"Key": "project", "Value": "belle2"}]
    s3.delete_bucket_tagging(Bucket=bucket)
    with pytest.raises(ClientError):
        s3.get_bucket_tagging(Bucket=bucket)
    upload, parts = _two_part_object(s3, bucket, "mp", Tagging="a=1&b=2")
    s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload, MultipartUpload={"Parts": parts})
    assert s3.get_object_tagging(Bucket=bucket, Key="mp")["TagSet"] == [{"Key": "a", "Value": "1"},
                                                                         {"Key": "b", "Value": "2"}]


def test_list_buckets_in_pages(gateway: Gateway) -> None:
    s3 = gateway.client("bob")
    prefix = f"t-pg-{uuid.uuid4().hex[:6]}-"
    names = [f"{prefix}{i}" for i in range(3)]
    for name in names:
        s3.create_bucket(Bucket=name)
    seen: list[str] = []
    kwargs: dict[str, str] = {}
    while True:
        page = s3.list_buckets(MaxBuckets=2, Prefix=prefix, **kwargs)  # type: ignore[arg-type]
        seen += [b["Name"] for b in page["Buckets"]]
        if "ContinuationToken" not in page:
            break
        kwargs = {"ContinuationToken": page["ContinuationToken"]}
    assert seen == names


def test_get_object_attributes(s3: BaseClient, bucket: str) -> None:
    upload, parts = _two_part_object(s3, bucket, "mp")
    s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload, MultipartUpload={"Parts": parts})
    attrs = s3.get_object_attributes(Bucket=bucket, Key="mp",
                                     ObjectAttributes=["ETag", "ObjectSize", "StorageClass", "ObjectParts"])
    assert attrs["ObjectSize"] == 5 * MiB + 1000 and attrs["StorageClass"] == "STANDARD"
    assert attrs["ObjectParts"]["TotalPartsCount"] == 2
    assert [p["Size"] for p in attrs["ObjectParts"]["Parts"]] == [5 * MiB, 1000]
    with pytest.raises(ClientError) as exc:
        s3.get_object_attributes(Bucket=bucket, Key="missing", ObjectAttributes=["ETag"])
    assert _code(exc) == "NoSuchKey"
