"""Multipart uploads: the S3 rules, parallel parts, and a 256 MiB object moved in parallel both ways."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import zlib
from concurrent.futures import ThreadPoolExecutor

import pytest
from boto3.s3.transfer import TransferConfig
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from tests.gateway.conftest import Gateway, blob_files, catalog_rows

MiB = 1024 * 1024


def _code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return str(exc.value.response["Error"]["Code"])


def _etag(parts: list[bytes]) -> str:
    return f'"{hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts)).hexdigest()}-{len(parts)}"'


def test_parts_out_of_order_and_in_parallel(s3: BaseClient, bucket: str, gateway: Gateway) -> None:
    parts = [os.urandom(5 * MiB) for _ in range(4)] + [os.urandom(123)]
    upload = s3.create_multipart_upload(Bucket=bucket, Key="mp/obj", ContentType="application/x-mp",
                                        Metadata={"k": "v"}, StorageClass="STANDARD_IA")["UploadId"]

    def send(n: int) -> dict[str, object]:
        r = s3.upload_part(Bucket=bucket, Key="mp/obj", UploadId=upload, PartNumber=n, Body=parts[n - 1])
        return {"PartNumber": n, "ETag": r["ETag"]}

    with ThreadPoolExecutor(5) as pool:
        done = list(pool.map(send, [5, 3, 1, 4, 2]))
    listed = s3.list_parts(Bucket=bucket, Key="mp/obj", UploadId=upload)
    assert [p["PartNumber"] for p in listed["Parts"]] == [1, 2, 3, 4, 5]
    assert listed["Parts"][4]["Size"] == 123
    uploads = s3.list_multipart_uploads(Bucket=bucket)["Uploads"]
    assert [(u["Key"], u["UploadId"]) for u in uploads] == [("mp/obj", upload)]
    done.sort(key=lambda p: p["PartNumber"])  # type: ignore[arg-type, return-value]
    r = s3.complete_multipart_upload(Bucket=bucket, Key="mp/obj", UploadId=upload,
                                     MultipartUpload={"Parts": done})  # type: ignore[typeddict-item]
    assert r["ETag"] == _etag(parts)
    got = s3.get_object(Bucket=bucket, Key="mp/obj")
    assert got["Body"].read() == b"".join(parts)
    assert got["ETag"] == _etag(parts) and got["Metadata"] == {"k": "v"} and got["ContentType"] == "application/x-mp"
    assert got["StorageClass"] == "STANDARD_IA" and got["PartsCount"] == 5
    assert "Uploads" not in s3.list_multipart_uploads(Bucket=bucket)
    # the parts are gone from the tier once the object is complete
    assert not any((gateway.tier_dirs["infrequent"] / "parts").iterdir())
    with pytest.raises(ClientError) as exc:
        s3.list_parts(Bucket=bucket, Key="mp/obj", UploadId=upload)
    assert _code(exc) == "NoSuchUpload"


def test_complete_checks_order_parts_and_sizes(s3: BaseClient, bucket: str) -> None:
    upload = s3.create_multipart_upload(Bucket=bucket, Key="k")["UploadId"]
    small = [s3.upload_part(Bucket=bucket, Key="k", UploadId=upload, PartNumber=n, Body=b"x" * 100)["ETag"]
             for n in (1, 2)]
    with pytest.raises(ClientError) as exc:
        s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload, MultipartUpload={"Parts": [
            {"PartNumber": 2, "ETag": small[1]}, {"PartNumber": 1, "ETag": small[0]}]})
    assert _code(exc) == "InvalidPartOrder"
    with pytest.raises(ClientError) as exc:
        s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload, MultipartUpload={"Parts": [
            {"PartNumber": 1, "ETag": small[0]}, {"PartNumber": 3, "ETag": small[1]}]})
    assert _code(exc) == "InvalidPart"
    with pytest.raises(ClientError) as exc:
        s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload, MultipartUpload={"Parts": [
            {"PartNumber": 1, "ETag": '"00000000000000000000000000000000"'}]})
    assert _code(exc) == "InvalidPart"
    with pytest.raises(ClientError) as exc:
        s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload, MultipartUpload={"Parts": [
            {"PartNumber": 1, "ETag": small[0]}, {"PartNumber": 2, "ETag": small[1]}]})
    assert _code(exc) == "EntityTooSmall"
    assert catalog_rows(bucket) == []
    # a single small part is a valid upload
    r = s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload, MultipartUpload={"Parts": [
        {"PartNumber": 2, "ETag": small[1]}]})
    assert r["ETag"] == _etag([b"x" * 100])


def test_no_such_upload_and_abort(s3: BaseClient, bucket: str, gateway: Gateway) -> None:
    with pytest.raises(ClientError) as exc:
        s3.upload_part(Bucket=bucket, Key="k", UploadId="nope", PartNumber=1, Body=b"x")
    assert _code(exc) == "NoSuchUpload"
    upload = s3.create_multipart_upload(Bucket=bucket, Key="k")["UploadId"]
    with pytest.raises(ClientError) as exc:
        s3.upload_part(Bucket=bucket, Key="other-key", UploadId=upload, PartNumber=1, Body=b"x")
    assert _code(exc) == "NoSuchUpload"
    with pytest.raises(ClientError) as exc:
        s3.upload_part(Bucket=bucket, Key="k", UploadId=upload, PartNumber=10001, Body=b"x")
    assert _code(exc) == "InvalidArgument"
    s3.upload_part(Bucket=bucket, Key="k", UploadId=upload, PartNumber=1, Body=b"x" * 1000)
    s3.abort_multipart_upload(Bucket=bucket, Key="k", UploadId=upload)
    with pytest.raises(ClientError) as exc:
        s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload, MultipartUpload={"Parts": [
            {"PartNumber": 1, "ETag": '"x"'}]})
    assert _code(exc) == "NoSuchUpload"
    with pytest.raises(ClientError) as exc:
        s3.abort_multipart_upload(Bucket=bucket, Key="k", UploadId=upload)
    assert _code(exc) == "NoSuchUpload"
    assert not any((gateway.tier_dirs["hot-disk"] / "parts").iterdir())


def test_reuploading_a_part_keeps_the_last_one(s3: BaseClient, bucket: str) -> None:
    upload = s3.create_multipart_upload(Bucket=bucket, Key="k")["UploadId"]
    s3.upload_part(Bucket=bucket, Key="k", UploadId=upload, PartNumber=1, Body=b"first")
    tag = s3.upload_part(Bucket=bucket, Key="k", UploadId=upload, PartNumber=1, Body=b"second")["ETag"]
    assert [p["ETag"] for p in s3.list_parts(Bucket=bucket, Key="k", UploadId=upload)["Parts"]] == [tag]
    s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload, MultipartUpload={"Parts": [
        {"PartNumber": 1, "ETag": tag}]})
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"second"


def test_upload_part_copy(s3: BaseClient, bucket: str) -> None:
    source = os.urandom(12 * MiB)
    s3.put_object(Bucket=bucket, Key="src", Body=source)
    upload = s3.create_multipart_upload(Bucket=bucket, Key="dst")["UploadId"]
    p1 = s3.upload_part_copy(Bucket=bucket, Key="dst", UploadId=upload, PartNumber=1,
                             CopySource={"Bucket": bucket, "Key": "src"}, CopySourceRange=f"bytes=0-{6 * MiB - 1}")
    p2 = s3.upload_part_copy(Bucket=bucket, Key="dst", UploadId=upload, PartNumber=2,
                             CopySource={"Bucket": bucket, "Key": "src"}, CopySourceRange=f"bytes={6 * MiB}-")
    with pytest.raises(ClientError) as exc:
        s3.upload_part_copy(Bucket=bucket, Key="dst", UploadId=upload, PartNumber=3,
                            CopySource={"Bucket": bucket, "Key": "src"}, CopySourceRange="bytes=-5")
    assert _code(exc) == "InvalidArgument"
    s3.complete_multipart_upload(Bucket=bucket, Key="dst", UploadId=upload, MultipartUpload={"Parts": [
        {"PartNumber": 1, "ETag": p1["CopyPartResult"]["ETag"]},
        {"PartNumber": 2, "ETag": p2["CopyPartResult"]["ETag"]}]})
    assert s3.get_object(Bucket=bucket, Key="dst")["Body"].read() == source


def test_part_checksums_make_a_composite_checksum(s3: BaseClient, bucket: str) -> None:
    parts = [os.urandom(5 * MiB), os.urandom(1000)]
    upload = s3.create_multipart_upload(Bucket=bucket, Key="c", ChecksumAlgorithm="CRC32")["UploadId"]
    done = []
    for n, data in enumerate(parts, 1):
        r = s3.upload_part(Bucket=bucket, Key="c", UploadId=upload, PartNumber=n, Body=data,
                           ChecksumAlgorithm="CRC32")
        done.append({"PartNumber": n, "ETag": r["ETag"], "ChecksumCRC32": r["ChecksumCRC32"]})
    bad = base64.b64encode((zlib.crc32(b"nope") & 0xFFFFFFFF).to_bytes(4, "big")).decode()
    with pytest.raises(ClientError) as exc:
        s3.upload_part(Bucket=bucket, Key="c", UploadId=upload, PartNumber=3, Body=b"zzz", ChecksumCRC32=bad)
    assert _code(exc) == "BadDigest"
    r = s3.complete_multipart_upload(Bucket=bucket, Key="c", UploadId=upload,
                                     MultipartUpload={"Parts": done})  # type: ignore[typeddict-item]
    raw = b"".join((zlib.crc32(p) & 0xFFFFFFFF).to_bytes(4, "big") for p in parts)
    expected = base64.b64encode((zlib.crc32(raw) & 0xFFFFFFFF).to_bytes(4, "big")).decode() + "-2"
    assert r["ChecksumCRC32"] == expected
    got = s3.get_object(Bucket=bucket, Key="c", ChecksumMode="ENABLED")
    assert got["Body"].read() == b"".join(parts)  # botocore skips validating composite checksums, as for S3


def test_transfer_manager_multipart_round_trip(s3: BaseClient, bucket: str) -> None:
    data = os.urandom(40 * MiB + 17)
    config = TransferConfig(multipart_threshold=8 * MiB, multipart_chunksize=8 * MiB, max_concurrency=6)
    s3.upload_fileobj(io.BytesIO(data), bucket, "tm/obj", Config=config)
    assert s3.head_object(Bucket=bucket, Key="tm/obj")["ETag"].endswith('-6"')
    out = io.BytesIO()
    s3.download_fileobj(bucket, "tm/obj", out, Config=config)
    assert out.getvalue() == data


@pytest.mark.slow
def test_256_mib_parallel_multipart_upload_and_parallel_ranged_download(s3: BaseClient, bucket: str,
                                                                        gateway: Gateway, tmp_path: object) -> None:
    size = 256 * MiB
    part = 16 * MiB
    data = os.urandom(size)
    upload = s3.create_multipart_upload(Bucket=bucket, Key="big/256")["UploadId"]
    view = memoryview(data)

    def send(n: int) -> dict[str, object]:
        body = bytes(view[(n - 1) * part: n * part])
        r = s3.upload_part(Bucket=bucket, Key="big/256", UploadId=upload, PartNumber=n, Body=body)
        return {"PartNumber": n, "ETag": r["ETag"]}

    with ThreadPoolExecutor(8) as pool:
        done = list(pool.map(send, range(1, size // part + 1)))
    s3.complete_multipart_upload(Bucket=bucket, Key="big/256", UploadId=upload,
                                 MultipartUpload={"Parts": done})  # type: ignore[typeddict-item]
    assert s3.head_object(Bucket=bucket, Key="big/256")["ContentLength"] == size

    chunk = 8 * MiB

    def fetch(start: int) -> tuple[int, bytes]:
        r = s3.get_object(Bucket=bucket, Key="big/256", Range=f"bytes={start}-{start + chunk - 1}")
        return start, r["Body"].read()

    out = bytearray(size)
    with ThreadPoolExecutor(8) as pool:
        for start, body in pool.map(fetch, range(0, size, chunk)):
            out[start:start + len(body)] = body
    assert hashlib.sha256(out).digest() == hashlib.sha256(data).digest()
    assert bytes(out) == data
    s3.delete_object(Bucket=bucket, Key="big/256")
    assert not [p for p in blob_files(gateway.tier_dirs["hot-disk"]) if p.startswith(f"d_{bucket}/")]


def test_a_part_number_listed_twice_in_a_row_counts_its_later_entry(s3: BaseClient, bucket: str) -> None:
    """ceph/s3-tests' resend-first-finishes-last: both answers of a re-sent part are listed, the stored one last."""
    upload = s3.create_multipart_upload(Bucket=bucket, Key="k")["UploadId"]
    first = s3.upload_part(Bucket=bucket, Key="k", UploadId=upload, PartNumber=1, Body=b"B" * 8)["ETag"]
    second = s3.upload_part(Bucket=bucket, Key="k", UploadId=upload, PartNumber=1, Body=b"A" * 8)["ETag"]
    with pytest.raises(ClientError) as e:  # the later entry names the replaced upload: not stored
        s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload, MultipartUpload={"Parts": [
            {"ETag": second, "PartNumber": 1}, {"ETag": first, "PartNumber": 1}]})
    assert e.value.response["Error"]["Code"] == "InvalidPart"
    s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload, MultipartUpload={"Parts": [
        {"ETag": first, "PartNumber": 1}, {"ETag": second, "PartNumber": 1}]})
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"A" * 8
