"""GET and HEAD of small objects answered on the gateway's event loop: what a client sees is
exactly what the catalog holds at that moment, also after another process changed it."""

from __future__ import annotations

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError
from sqlalchemy import select, update

from tierpilot.catalog.models import Bucket, Object
from tierpilot.kit.db import transaction


def test_overwrite_and_delete_are_seen_by_the_next_read(s3: BaseClient, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="k", Body=b"first", Metadata={"v": "1"})
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"first"
    s3.put_object(Bucket=bucket, Key="k", Body=b"second!", Metadata={"v": "2"}, ContentType="text/plain")
    got = s3.get_object(Bucket=bucket, Key="k")
    assert (got["Body"].read(), got["Metadata"], got["ContentType"]) == (b"second!", {"v": "2"}, "text/plain")
    head = s3.head_object(Bucket=bucket, Key="k")
    assert (head["ContentLength"], head["ETag"]) == (7, got["ETag"])
    s3.delete_object(Bucket=bucket, Key="k")
    for call in (s3.get_object, s3.head_object):
        with pytest.raises(ClientError) as err:
            call(Bucket=bucket, Key="k")
        assert err.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404


def test_a_row_changed_by_another_process_is_read_at_once(s3: BaseClient, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="k", Body=b"abc")
    assert s3.head_object(Bucket=bucket, Key="k")["ContentType"] == "binary/octet-stream"
    with transaction(write=True) as session:  # this test process: another connection than the gateway's
        bucket_id = select(Bucket.id).where(Bucket.name == bucket).scalar_subquery()
        session.execute(update(Object).where(Object.bucket_id == bucket_id, Object.key == "k")
                        .values(content_type="image/png"))
    assert s3.head_object(Bucket=bucket, Key="k")["ContentType"] == "image/png"
    assert s3.get_object(Bucket=bucket, Key="k")["ContentType"] == "image/png"


def test_ranges_conditions_and_empty_objects(s3: BaseClient, bucket: str) -> None:
    body = bytes(range(256)) * 4
    etag = s3.put_object(Bucket=bucket, Key="k", Body=body)["ETag"]
    part = s3.get_object(Bucket=bucket, Key="k", Range="bytes=10-19")
    assert (part["Body"].read(), part["ContentRange"]) == (body[10:20], "bytes 10-19/1024")
    assert s3.get_object(Bucket=bucket, Key="k", Range="bytes=-4")["Body"].read() == body[-4:]
    with pytest.raises(ClientError) as err:
        s3.get_object(Bucket=bucket, Key="k", IfNoneMatch=etag)
    assert err.value.response["ResponseMetadata"]["HTTPStatusCode"] == 304
    with pytest.raises(ClientError) as err:
        s3.get_object(Bucket=bucket, Key="k", IfMatch='"0000"')
    assert err.value.response["Error"]["Code"] == "PreconditionFailed"
    with pytest.raises(ClientError) as err:
        s3.get_object(Bucket=bucket, Key="k", Range="bytes=2000-")
    assert err.value.response["Error"]["Code"] == "InvalidRange"
    s3.put_object(Bucket=bucket, Key="empty", Body=b"")
    assert s3.get_object(Bucket=bucket, Key="empty")["Body"].read() == b""
