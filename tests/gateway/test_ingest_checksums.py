"""Every object gets a whole-object CRC64NVME at ingest when its client sends no checksum: boto3 with checksums
off, Debian's AWS CLI v2 (/usr/bin/aws, which sends none), s3cmd and rclone, single PUTs and multipart uploads.
Expected values come from awscrt over the whole data, never from the gateway's own combination of parts."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
from awscrt import checksums as crt
from boto3.s3.transfer import TransferConfig
from botocore.client import BaseClient

from tests.gateway.conftest import Gateway

MiB = 1024 * 1024
AWS = "/usr/bin/aws"


def _crc64(data: bytes) -> str:
    return base64.b64encode(crt.crc64nvme(data).to_bytes(8, "big")).decode()


def _stored(bucket: str) -> dict[str, tuple[str | None, str | None]]:
    """(algorithm, value) the catalog keeps for each key of a bucket."""
    from sqlalchemy import select

    from tierpilot.catalog.models import Bucket, Object
    from tierpilot.kit.db import transaction

    with transaction() as s:
        rows = s.execute(select(Object.key, Object.checksum_algorithm, Object.checksum_value).join(Bucket)
                         .where(Bucket.name == bucket)).all()
    return {key: (alg, value) for key, alg, value in rows}


@pytest.fixture
def files(tmp_path: Path) -> dict[str, bytes]:
    """A small file and one big enough for every client's multipart upload."""
    out = {"small.bin": os.urandom(1024), "big.bin": os.urandom(20 * MiB + 3)}
    for name, data in out.items():
        (tmp_path / "src" / name).parent.mkdir(exist_ok=True)
        (tmp_path / "src" / name).write_bytes(data)
    return out


def _assert_all_checksummed(bucket: str, prefix: str, files: dict[str, bytes]) -> None:
    stored = _stored(bucket)
    for name, data in files.items():
        assert stored[prefix + name] == ("CRC64NVME", _crc64(data)), name


def _run(cmd: list[str], env: dict[str, str]) -> str:
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    return r.stdout


def test_boto3_without_checksums_gets_crc64nvme_for_put_and_multipart(gateway: Gateway,
                                                                       files: dict[str, bytes],
                                                                       tmp_path: Path) -> None:
    s3 = gateway.client("alice", request_checksum_calculation="when_required",
                        response_checksum_validation="when_required")
    bucket = f"t-ingest-{uuid.uuid4().hex[:8]}"
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="small.bin", Body=files["small.bin"])
    s3.upload_file(str(tmp_path / "src" / "big.bin"), bucket, "big.bin",
                   Config=TransferConfig(multipart_threshold=8 * MiB, multipart_chunksize=8 * MiB))
    _assert_all_checksummed(bucket, "", files)
    for name, data in files.items():
        head = s3.head_object(Bucket=bucket, Key=name, ChecksumMode="ENABLED")
        assert head["ChecksumCRC64NVME"] == _crc64(data)
        assert head["ChecksumType"] == "FULL_OBJECT"
        attrs = s3.get_object_attributes(Bucket=bucket, Key=name, ObjectAttributes=["Checksum", "ObjectParts"])
        assert attrs["Checksum"] == {"ChecksumCRC64NVME": _crc64(data), "ChecksumType": "FULL_OBJECT"}
    # a client that never asked for checksums is not shown the parts' ones in ListParts
    upload = s3.create_multipart_upload(Bucket=bucket, Key="listed")
    s3.upload_part(Bucket=bucket, Key="listed", UploadId=upload["UploadId"], PartNumber=1, Body=b"x" * 10)
    try:
        listed = s3.list_parts(Bucket=bucket, Key="listed", UploadId=upload["UploadId"])
        assert "ChecksumAlgorithm" not in listed and "ChecksumCRC64NVME" not in listed["Parts"][0]
    finally:  # its part would otherwise stay on the tier the other gateway tests share
        s3.abort_multipart_upload(Bucket=bucket, Key="listed", UploadId=upload["UploadId"])


def test_client_checksum_is_kept_instead_of_the_default(gateway: Gateway, s3: BaseClient, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="k", Body=b"hello", ChecksumAlgorithm="SHA256")
    head = s3.head_object(Bucket=bucket, Key="k", ChecksumMode="ENABLED")
    assert "ChecksumSHA256" in head and "ChecksumCRC64NVME" not in head


@pytest.mark.skipif(not Path(AWS).exists(), reason="Debian's awscli is not installed")
def test_aws_cli_v2_uploads_end_with_a_checksum(gateway: Gateway, files: dict[str, bytes], tmp_path: Path) -> None:
    user = gateway.users["alice"]
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "AWS_CA_BUNDLE"}
    env.update(AWS_ACCESS_KEY_ID=user.access_key_id, AWS_SECRET_ACCESS_KEY=user.secret_access_key,
               AWS_DEFAULT_REGION="us-east-1", HOME=str(home), AWS_CONFIG_FILE=str(home / "config"),
               AWS_SHARED_CREDENTIALS_FILE=str(home / "credentials"), AWS_PAGER="")
    bucket = f"t-aws-{uuid.uuid4().hex[:8]}"
    base = [AWS, "--endpoint-url", gateway.url]
    _run(base + ["s3", "mb", f"s3://{bucket}"], env)
    _run(base + ["s3", "cp", "--recursive", "--only-show-errors", str(tmp_path / "src"), f"s3://{bucket}/up/"], env)
    _assert_all_checksummed(bucket, "up/", files)


@pytest.mark.skipif(shutil.which("s3cmd") is None, reason="s3cmd is not installed")
def test_s3cmd_uploads_end_with_a_checksum(gateway: Gateway, files: dict[str, bytes], tmp_path: Path) -> None:
    user = gateway.users["alice"]
    host = gateway.url.removeprefix("http://")
    config = tmp_path / "s3cfg"
    config.write_text(
        "[default]\n"
        f"access_key = {user.access_key_id}\nsecret_key = {user.secret_access_key}\n"
        f"host_base = {host}\nhost_bucket = {host}\nuse_https = False\nbucket_location = us-east-1\n"
        "signature_v2 = False\nmultipart_chunk_size_mb = 5\n"
    )
    env = dict(os.environ, HOME=str(tmp_path))
    bucket = f"t-s3cmd-{uuid.uuid4().hex[:8]}"
    cmd = ["s3cmd", "-c", str(config), "--no-progress"]
    _run(cmd + ["mb", f"s3://{bucket}"], env)
    _run(cmd + ["sync", f"{tmp_path / 'src'}/", f"s3://{bucket}/up/"], env)
    _assert_all_checksummed(bucket, "up/", files)


@pytest.mark.skipif(shutil.which("rclone") is None, reason="rclone is not installed")
def test_rclone_uploads_end_with_a_checksum(gateway: Gateway, files: dict[str, bytes], tmp_path: Path) -> None:
    user = gateway.users["alice"]
    env = {k: v for k, v in os.environ.items() if k != "AWS_CA_BUNDLE"}  # rclone 1.60 refuses it on plain HTTP
    env.update(RCLONE_CONFIG=str(tmp_path / "rclone.conf"), RCLONE_CONFIG_GW_TYPE="s3",
               RCLONE_CONFIG_GW_PROVIDER="Other", RCLONE_CONFIG_GW_ACCESS_KEY_ID=user.access_key_id,
               RCLONE_CONFIG_GW_SECRET_ACCESS_KEY=user.secret_access_key, RCLONE_CONFIG_GW_ENDPOINT=gateway.url,
               RCLONE_CONFIG_GW_REGION="us-east-1", HOME=str(tmp_path))
    bucket = f"t-rclone-{uuid.uuid4().hex[:8]}"
    _run(["rclone", "mkdir", f"gw:{bucket}"], env)
    _run(["rclone", "copy", "--s3-upload-cutoff", "5M", "--s3-chunk-size", "5M", str(tmp_path / "src"),
          f"gw:{bucket}/up"], env)
    _assert_all_checksummed(bucket, "up/", files)
