"""CRC64NVME and FULL_OBJECT multipart checksums through a real gateway: boto3's flexible checksums, a
hand-made aws-chunked body with a trailing CRC64NVME, AWS CLI v2 (/usr/bin/aws). Expected values come from
awscrt over the whole data, never from the gateway's own combination."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import zlib
from pathlib import Path
from typing import Any

import google_crc32c
import pytest
from awscrt import checksums as crt
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from tests.gateway import rawclient as raw
from tests.gateway.conftest import Gateway

MIB = 1024 * 1024


def _b64(value: int, size: int) -> str:
    return base64.b64encode(value.to_bytes(size, "big")).decode()


CRC = {
    "CRC32": lambda data: _b64(zlib.crc32(data), 4),
    "CRC32C": lambda data: _b64(google_crc32c.value(data), 4),
    "CRC64NVME": lambda data: _b64(crt.crc64nvme(data), 8),
}


def _error(e: pytest.ExceptionInfo[ClientError]) -> tuple[int, str]:
    return e.value.response["ResponseMetadata"]["HTTPStatusCode"], e.value.response["Error"]["Code"]


def test_put_with_crc64nvme_is_verified_kept_and_returned(s3: BaseClient, bucket: str) -> None:
    data = b"A" * 1024
    expected = "Qeh8oXvGiSo="  # ceph/s3-tests' value for these bytes
    assert CRC["CRC64NVME"](data) == expected
    put = s3.put_object(Bucket=bucket, Key="k", Body=data, ChecksumAlgorithm="CRC64NVME", ChecksumCRC64NVME=expected)
    assert put["ChecksumCRC64NVME"] == expected
    assert "ChecksumCRC64NVME" not in s3.head_object(Bucket=bucket, Key="k")
    head = s3.head_object(Bucket=bucket, Key="k", ChecksumMode="ENABLED")
    assert (head["ChecksumCRC64NVME"], head["ChecksumType"]) == (expected, "FULL_OBJECT")
    # boto3 computes the value itself when only the algorithm is named
    assert s3.put_object(Bucket=bucket, Key="auto", Body=data * 3,
                         ChecksumAlgorithm="CRC64NVME")["ChecksumCRC64NVME"] == CRC["CRC64NVME"](data * 3)
    for wrong in ("bad", CRC["CRC64NVME"](b"other")):
        with pytest.raises(ClientError) as e:
            s3.put_object(Bucket=bucket, Key="k", Body=b"changed", ChecksumAlgorithm="CRC64NVME",
                          ChecksumCRC64NVME=wrong)
        assert _error(e) == (400, "BadDigest")
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == data  # nothing was replaced


def test_trailing_crc64nvme_on_an_unsigned_chunked_body(gateway: Gateway, bucket: str, s3: BaseClient) -> None:
    user = gateway.users["alice"]
    data = os.urandom(300_000)
    url = raw.url_for(gateway.url, bucket, "trailed")
    headers = {"content-encoding": "aws-chunked", "x-amz-decoded-content-length": str(len(data)),
               "x-amz-trailer": "x-amz-checksum-crc64nvme", "x-amz-sdk-checksum-algorithm": "CRC64NVME"}
    for value, status in ((CRC["CRC64NVME"](b"no"), 400), (CRC["CRC64NVME"](data), 200)):
        signed = raw.sign("PUT", url, headers, "STREAMING-UNSIGNED-PAYLOAD-TRAILER", user.access_key_id,
                          user.secret_access_key)
        r = raw.send("PUT", url, signed.headers, raw.unsigned_chunks(data, ("x-amz-checksum-crc64nvme", value)))
        assert r.status_code == status, r.text
    assert r.headers["x-amz-checksum-crc64nvme"] == CRC["CRC64NVME"](data)
    got = s3.get_object(Bucket=bucket, Key="trailed", ChecksumMode="ENABLED")  # boto3 checks the body against it
    assert got["Body"].read() == data and got["ChecksumCRC64NVME"] == CRC["CRC64NVME"](data)


def _upload(s3: BaseClient, bucket: str, key: str, algorithm: str, parts: list[bytes], **create: Any
            ) -> tuple[str, list[dict[str, Any]]]:
    upload = s3.create_multipart_upload(Bucket=bucket, Key=key, ChecksumAlgorithm=algorithm, **create)
    listed = []
    for number, data in enumerate(parts, start=1):
        part = s3.upload_part(Bucket=bucket, Key=key, UploadId=upload["UploadId"], PartNumber=number, Body=data,
                              ChecksumAlgorithm=algorithm)
        assert part[f"Checksum{algorithm}"] == CRC[algorithm](data)
        listed.append({"ETag": part["ETag"], "PartNumber": number,
                       f"Checksum{algorithm}": part[f"Checksum{algorithm}"]})
    return upload["UploadId"], listed


@pytest.mark.parametrize("algorithm", ["CRC32", "CRC32C", "CRC64NVME"])
def test_full_object_multipart_checksum_is_the_whole_objects_crc(s3: BaseClient, bucket: str, algorithm: str) -> None:
    parts = [os.urandom(5 * MIB), os.urandom(5 * MIB + 17), b"tail" * 999]
    whole = CRC[algorithm](b"".join(parts))
    upload_id, listed = _upload(s3, bucket, "big", algorithm, parts, ChecksumType="FULL_OBJECT")
    listing = s3.list_parts(Bucket=bucket, Key="big", UploadId=upload_id)
    assert (listing["ChecksumAlgorithm"], listing["ChecksumType"]) == (algorithm, "FULL_OBJECT")
    # a wrong whole-object value (a part's CRC, or a composite-looking one) completes nothing
    for wrong in (listed[0][f"Checksum{algorithm}"], whole + "-3"):
        with pytest.raises(ClientError) as e:
            s3.complete_multipart_upload(Bucket=bucket, Key="big", UploadId=upload_id,
                                         MultipartUpload={"Parts": listed}, **{f"Checksum{algorithm}": wrong})
        assert _error(e) == (400, "BadDigest")
    assert s3.list_multipart_uploads(Bucket=bucket)["Uploads"][0]["UploadId"] == upload_id
    done = s3.complete_multipart_upload(Bucket=bucket, Key="big", UploadId=upload_id, ChecksumType="FULL_OBJECT",
                                        MultipartUpload={"Parts": listed}, **{f"Checksum{algorithm}": whole})
    assert (done[f"Checksum{algorithm}"], done["ChecksumType"]) == (whole, "FULL_OBJECT")
    head = s3.head_object(Bucket=bucket, Key="big", ChecksumMode="ENABLED")
    assert (head[f"Checksum{algorithm}"], head["ChecksumType"]) == (whole, "FULL_OBJECT")
    attributes = s3.get_object_attributes(Bucket=bucket, Key="big", ObjectAttributes=["Checksum", "ObjectParts"])
    assert attributes["Checksum"] == {f"Checksum{algorithm}": whole, "ChecksumType": "FULL_OBJECT"}
    assert [p[f"Checksum{algorithm}"] for p in attributes["ObjectParts"]["Parts"]] == [CRC[algorithm](p) for p in parts]
    # boto3 validates a full-object CRC against the body it reads, and a part's CRC against the part's bytes
    assert s3.get_object(Bucket=bucket, Key="big", ChecksumMode="ENABLED")["Body"].read() == b"".join(parts)
    second = s3.get_object(Bucket=bucket, Key="big", PartNumber=2, ChecksumMode="ENABLED")
    assert (second[f"Checksum{algorithm}"], second["ChecksumType"]) == (CRC[algorithm](parts[1]), "FULL_OBJECT")
    assert second["Body"].read() == parts[1]


def test_full_object_complete_without_a_claimed_value_computes_it(s3: BaseClient, bucket: str) -> None:
    parts = [os.urandom(5 * MIB), os.urandom(1000)]
    upload_id, listed = _upload(s3, bucket, "k", "CRC64NVME", parts)  # CRC64NVME alone: FULL_OBJECT
    done = s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload_id, MultipartUpload={"Parts": listed})
    assert (done["ChecksumCRC64NVME"], done["ChecksumType"]) == (CRC["CRC64NVME"](b"".join(parts)), "FULL_OBJECT")


def test_composite_crc_multipart_keeps_its_parts_checksums(s3: BaseClient, bucket: str) -> None:
    parts = [os.urandom(5 * MIB), os.urandom(10)]
    upload_id, listed = _upload(s3, bucket, "k", "CRC32C", parts)  # CRC32C alone: COMPOSITE
    digests = b"".join(base64.b64decode(CRC["CRC32C"](p)) for p in parts)
    composite = CRC["CRC32C"](digests) + "-2"
    done = s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload_id, ChecksumCRC32C=composite,
                                        MultipartUpload={"Parts": listed})
    assert (done["ChecksumCRC32C"], done["ChecksumType"]) == (composite, "COMPOSITE")
    first = s3.get_object(Bucket=bucket, Key="k", PartNumber=1, ChecksumMode="ENABLED")
    assert (first["ChecksumCRC32C"], first["ChecksumType"]) == (CRC["CRC32C"](parts[0]), "COMPOSITE")


@pytest.mark.parametrize(("create", "field"), [
    ({"ChecksumAlgorithm": "CRC64NVME", "ChecksumType": "COMPOSITE"}, "composite"),
    ({"ChecksumAlgorithm": "SHA256", "ChecksumType": "FULL_OBJECT"}, "full_object"),
    ({"ChecksumType": "FULL_OBJECT"}, "x-amz-checksum-algorithm"),
])
def test_checksum_types_s3_refuses_are_invalid_request(s3: BaseClient, bucket: str, create: dict[str, str],
                                                       field: str) -> None:
    with pytest.raises(ClientError) as e:
        s3.create_multipart_upload(Bucket=bucket, Key="k", **create)
    assert _error(e) == (400, "InvalidRequest")
    assert field in e.value.response["Error"]["Message"].lower()
    assert "Uploads" not in s3.list_multipart_uploads(Bucket=bucket)


def test_object_parts_of_get_object_attributes_page_by_their_headers(s3: BaseClient, bucket: str) -> None:
    parts = [b"a" * (5 * MIB)] * 3 + [b"end"]
    upload_id, listed = _upload(s3, bucket, "k", "CRC32", parts)
    s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload_id, MultipartUpload={"Parts": listed})
    page = s3.get_object_attributes(Bucket=bucket, Key="k", ObjectAttributes=["ObjectParts"], MaxParts=1,
                                    PartNumberMarker=2)["ObjectParts"]
    assert (page["TotalPartsCount"], page["MaxParts"], page["IsTruncated"],
            page["NextPartNumberMarker"]) == (4, 1, True, 3)
    assert [(p["PartNumber"], p["Size"]) for p in page["Parts"]] == [(3, 5 * MIB)]
    with pytest.raises(ClientError) as e:
        s3.get_object_attributes(Bucket=bucket, Key="k", ObjectAttributes=["ObjectParts"], MaxParts=-1)
    assert _error(e) == (400, "InvalidArgument")


@pytest.mark.skipif(shutil.which("/usr/bin/aws") is None, reason="AWS CLI v2 is /usr/bin/aws (Debian's awscli)")
def test_aws_cli_v2_multipart_with_a_crc32_part(gateway: Gateway, s3: BaseClient, bucket: str,
                                                tmp_path: Path) -> None:
    """/usr/bin/aws 2.9 knows CRC32/CRC32C/SHA (no CRC64NVME, no checksum type): s3api with --checksum-algorithm
    CRC32 (the CLI computes the part's CRC and sends it); three CLI calls, each a second of start-up."""
    user = gateway.users["alice"]
    env = dict(os.environ, AWS_ACCESS_KEY_ID=user.access_key_id, AWS_SECRET_ACCESS_KEY=user.secret_access_key,
               AWS_DEFAULT_REGION="us-east-1", AWS_CONFIG_FILE=str(tmp_path / "none"))
    env.pop("AWS_PROFILE", None)
    data = os.urandom(MIB)
    (tmp_path / "part").write_bytes(data)

    def api(*args: str) -> dict[str, Any]:
        done = subprocess.run(["/usr/bin/aws", "--endpoint-url", gateway.url, "s3api", *args, "--bucket", bucket,
                               "--key", "cli.bin"], env=env, capture_output=True, timeout=120, text=True)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout) if done.stdout.strip() else {}

    upload_id = api("create-multipart-upload", "--checksum-algorithm", "CRC32")["UploadId"]
    part = api("upload-part", "--upload-id", upload_id, "--part-number", "1", "--body", str(tmp_path / "part"),
               "--checksum-algorithm", "CRC32")
    assert part["ChecksumCRC32"] == CRC["CRC32"](data)
    listed = {"Parts": [{"ETag": part["ETag"], "PartNumber": 1, "ChecksumCRC32": part["ChecksumCRC32"]}]}
    composite = CRC["CRC32"](base64.b64decode(part["ChecksumCRC32"])) + "-1"
    done = api("complete-multipart-upload", "--upload-id", upload_id, "--multipart-upload", json.dumps(listed))
    assert done["ChecksumCRC32"] == composite
    head = s3.head_object(Bucket=bucket, Key="cli.bin", ChecksumMode="ENABLED")
    assert (head["ChecksumCRC32"], head["ChecksumType"]) == (composite, "COMPOSITE")
    assert s3.get_object(Bucket=bucket, Key="cli.bin")["Body"].read() == data


def test_upload_part_copy_into_a_full_object_upload_gives_the_ranges_crc(s3: BaseClient, bucket: str) -> None:
    source = os.urandom(6 * MIB)
    s3.put_object(Bucket=bucket, Key="src", Body=source)
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="copy", ChecksumAlgorithm="CRC64NVME")["UploadId"]
    ranges = [(0, 5 * MIB - 1), (5 * MIB, 6 * MIB - 1)]
    listed = []
    for number, (first, last) in enumerate(ranges, start=1):
        copied = s3.upload_part_copy(Bucket=bucket, Key="copy", UploadId=upload_id, PartNumber=number,
                                     CopySource={"Bucket": bucket, "Key": "src"},
                                     CopySourceRange=f"bytes={first}-{last}")["CopyPartResult"]
        assert copied["ChecksumCRC64NVME"] == CRC["CRC64NVME"](source[first:last + 1])
        listed.append({"ETag": copied["ETag"], "PartNumber": number})
    done = s3.complete_multipart_upload(Bucket=bucket, Key="copy", UploadId=upload_id,
                                        ChecksumCRC64NVME=CRC["CRC64NVME"](source), MultipartUpload={"Parts": listed})
    assert (done["ChecksumCRC64NVME"], done["ChecksumType"]) == (CRC["CRC64NVME"](source), "FULL_OBJECT")
