"""CompleteMultipartUpload with the object's checksum (x-amz-checksum-sha256: the COMPOSITE of the parts'
checksums, ``-N``): the right one completes and is kept, a wrong or malformed one is BadDigest and completes
nothing (boto3, real gateway)."""

from __future__ import annotations

import base64
import hashlib

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError


def test_the_objects_composite_checksum_is_checked_on_complete(s3: BaseClient, bucket: str) -> None:
    data = b"A" * 1024
    part_sum = base64.b64encode(hashlib.sha256(data).digest()).decode()
    composite = base64.b64encode(hashlib.sha256(hashlib.sha256(data).digest()).digest()).decode() + "-1"
    upload = s3.create_multipart_upload(Bucket=bucket, Key="k", ChecksumAlgorithm="SHA256")["UploadId"]
    part = s3.upload_part(Bucket=bucket, Key="k", UploadId=upload, PartNumber=1, Body=data,
                          ChecksumAlgorithm="SHA256", ChecksumSHA256=part_sum)
    listed = {"Parts": [{"ETag": part["ETag"], "ChecksumSHA256": part["ChecksumSHA256"], "PartNumber": 1}]}
    for claimed in ("bad", base64.b64encode(b"\0" * 32).decode() + "-1"):
        with pytest.raises(ClientError) as e:
            s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload, ChecksumSHA256=claimed,
                                         MultipartUpload=listed)
        assert e.value.response["Error"]["Code"] == "BadDigest"
    assert s3.list_multipart_uploads(Bucket=bucket)["Uploads"][0]["UploadId"] == upload  # nothing completed
    done = s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload, ChecksumSHA256=composite,
                                        MultipartUpload=listed)
    assert done["ChecksumSHA256"] == composite
    assert s3.head_object(Bucket=bucket, Key="k", ChecksumMode="ENABLED")["ChecksumSHA256"] == composite
