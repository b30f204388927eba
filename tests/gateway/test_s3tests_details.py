"""Details the ceph/s3-tests suite checks: tags listed in key order, a key gone from an unversioned bucket says
x-amz-delete-marker: false, Content-Encoding lists keep their ", " once aws-chunked is taken out."""

from __future__ import annotations

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError


def test_tags_are_listed_in_key_order(s3: BaseClient, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="k", Body=b"x", Tagging="foo=bar&bar")
    assert s3.get_object_tagging(Bucket=bucket, Key="k")["TagSet"] == [{"Key": "bar", "Value": ""},
                                                                      {"Key": "foo", "Value": "bar"}]


def test_missing_key_of_an_unversioned_bucket_is_no_delete_marker(s3: BaseClient, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    s3.delete_object(Bucket=bucket, Key="k")
    with pytest.raises(ClientError) as e:
        s3.head_object(Bucket=bucket, Key="k")
    assert e.value.response["ResponseMetadata"]["HTTPHeaders"]["x-amz-delete-marker"] == "false"


def test_content_encoding_list_without_aws_chunked(s3: BaseClient, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="k", Body=b"x", ContentEncoding="deflate, gzip, aws-chunked")
    assert s3.head_object(Bucket=bucket, Key="k")["ContentEncoding"] == "deflate, gzip"


def test_upload_part_copy_range_past_the_source_is_invalid_range(s3: BaseClient, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="src", Body=b"12345")
    upload = s3.create_multipart_upload(Bucket=bucket, Key="dst")["UploadId"]
    with pytest.raises(ClientError) as e:
        s3.upload_part_copy(Bucket=bucket, Key="dst", UploadId=upload, PartNumber=1,
                            CopySource={"Bucket": bucket, "Key": "src"}, CopySourceRange="bytes=0-21")
    assert (e.value.response["ResponseMetadata"]["HTTPStatusCode"], e.value.response["Error"]["Code"]) == (
        416, "InvalidRange")
    assert s3.list_parts(Bucket=bucket, Key="dst", UploadId=upload).get("Parts", []) == []
    part = s3.upload_part_copy(Bucket=bucket, Key="dst", UploadId=upload, PartNumber=1,
                               CopySource={"Bucket": bucket, "Key": "src"}, CopySourceRange="bytes=1-4")
    assert part["CopyPartResult"]["ETag"]
    s3.abort_multipart_upload(Bucket=bucket, Key="dst", UploadId=upload)  # other tests count the tier's parts


def test_an_empty_continuation_token_lists_from_the_start(s3: BaseClient, bucket: str) -> None:
    for key in ("bar", "baz", "foo"):
        s3.put_object(Bucket=bucket, Key=key, Body=b"x")
    page = s3.list_objects_v2(Bucket=bucket, ContinuationToken="")
    assert page["ContinuationToken"] == "" and not page["IsTruncated"]
    assert [o["Key"] for o in page["Contents"]] == ["bar", "baz", "foo"]
