"""Object lock given to CreateMultipartUpload ends up on the object its completion makes (boto3, real gateway)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError


def test_lock_headers_of_a_multipart_upload_protect_the_object(s3: BaseClient) -> None:
    bucket = f"t-mpl-{uuid.uuid4().hex[:8]}"
    s3.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True)
    until = (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0)
    upload = s3.create_multipart_upload(Bucket=bucket, Key="k", ObjectLockMode="GOVERNANCE",
                                        ObjectLockRetainUntilDate=until, ObjectLockLegalHoldStatus="ON")
    part = s3.upload_part(Bucket=bucket, Key="k", UploadId=upload["UploadId"], PartNumber=1, Body=b"data")
    done = s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload["UploadId"],
                                        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
    head = s3.head_object(Bucket=bucket, Key="k")
    assert (head["ObjectLockMode"], head["ObjectLockRetainUntilDate"], head["ObjectLockLegalHoldStatus"]) == (
        "GOVERNANCE", until, "ON")
    with pytest.raises(ClientError) as e:  # the legal hold holds even with the governance bypass
        s3.delete_object(Bucket=bucket, Key="k", VersionId=done["VersionId"], BypassGovernanceRetention=True)
    assert e.value.response["Error"]["Code"] == "AccessDenied"
    s3.put_object_legal_hold(Bucket=bucket, Key="k", VersionId=done["VersionId"], LegalHold={"Status": "OFF"})
    with pytest.raises(ClientError) as e:
        s3.delete_object(Bucket=bucket, Key="k", VersionId=done["VersionId"])
    assert e.value.response["Error"]["Code"] == "AccessDenied"
    s3.delete_object(Bucket=bucket, Key="k", VersionId=done["VersionId"], BypassGovernanceRetention=True)


def test_lock_headers_on_a_bucket_without_lock_are_refused(s3: BaseClient, bucket: str) -> None:
    with pytest.raises(ClientError) as e:
        s3.create_multipart_upload(Bucket=bucket, Key="k", ObjectLockLegalHoldStatus="ON")
    assert e.value.response["Error"]["Code"] == "InvalidRequest"
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
