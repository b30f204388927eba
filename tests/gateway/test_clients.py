"""Unmodified S3 clients against the gateway: Debian's AWS CLI v2 (/usr/bin/aws), s3cmd and rclone each
upload a tree, list it, download it, and the copy is compared byte for byte."""

from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
from botocore.client import BaseClient

from tests.gateway.conftest import Gateway

MiB = 1024 * 1024
AWS = "/usr/bin/aws"  # Debian's awscli package: AWS CLI v2 (not a pyenv shim of v1)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """Nested directories, an empty file, awkward names and a file big enough for every client's multipart."""
    root = tmp_path / "tree"
    files = {
        "a.bin": os.urandom(1000),
        "sub/big.bin": os.urandom(20 * MiB + 7),
        "sub/deeper/empty": b"",
        "sub/deeper/mid.dat": os.urandom(300_000),
        "with space/ünïcødé.txt": "grüße\n".encode(),
        "plus+and=equals/x.txt": b"x",
    }
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def _same_tree(a: Path, b: Path) -> None:
    left = sorted(str(p.relative_to(a)) for p in a.rglob("*") if p.is_file())
    right = sorted(str(p.relative_to(b)) for p in b.rglob("*") if p.is_file())
    assert left == right
    for rel in left:
        assert filecmp.cmp(a / rel, b / rel, shallow=False), rel


def _run(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> str:
    r = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    return r.stdout


def _listed(s3: BaseClient, bucket: str, prefix: str) -> list[tuple[str, int]]:
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    return sorted((o["Key"][len(prefix):], o["Size"]) for page in pages for o in page.get("Contents", []))


def _expected(tree: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(tree)), p.stat().st_size) for p in tree.rglob("*") if p.is_file())


@pytest.mark.skipif(not Path(AWS).exists(), reason="Debian's awscli is not installed")
def test_aws_cli_v2_recursive_copy(gateway: Gateway, s3: BaseClient, tree: Path, tmp_path: Path) -> None:
    user = gateway.users["alice"]
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, AWS_ACCESS_KEY_ID=user.access_key_id, AWS_SECRET_ACCESS_KEY=user.secret_access_key,
               AWS_DEFAULT_REGION="us-east-1", HOME=str(home), AWS_CONFIG_FILE=str(home / "config"),
               AWS_SHARED_CREDENTIALS_FILE=str(home / "credentials"), AWS_PAGER="")
    version = _run([AWS, "--version"], env)
    assert version.startswith("aws-cli/2.")
    bucket = f"t-aws-{uuid.uuid4().hex[:8]}"
    base = [AWS, "--endpoint-url", gateway.url]
    _run(base + ["s3", "mb", f"s3://{bucket}"], env)
    _run(base + ["s3", "cp", "--recursive", "--only-show-errors", str(tree), f"s3://{bucket}/up/"], env)
    listing = _run(base + ["s3", "ls", "--recursive", f"s3://{bucket}/up/"], env)
    assert "up/sub/big.bin" in listing and "up/with space/ünïcødé.txt" in listing
    assert _listed(s3, bucket, "up/") == _expected(tree)
    out = tmp_path / "out"
    _run(base + ["s3", "cp", "--recursive", "--only-show-errors", f"s3://{bucket}/up/", str(out)], env)
    _same_tree(tree, out)
    # sync finds nothing to do on an identical tree, then removes what was deleted locally
    (tree / "a.bin").unlink()
    synced = _run(base + ["s3", "sync", "--delete", "--no-progress", str(tree), f"s3://{bucket}/up/"], env)
    assert "delete: s3://" in synced and "upload:" not in synced
    assert _listed(s3, bucket, "up/") == _expected(tree)
    _run(base + ["s3", "rb", "--force", f"s3://{bucket}"], env)


@pytest.mark.skipif(shutil.which("s3cmd") is None, reason="s3cmd is not installed")
def test_s3cmd_sync(gateway: Gateway, s3: BaseClient, tree: Path, tmp_path: Path) -> None:
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
    _run(cmd + ["sync", f"{tree}/", f"s3://{bucket}/up/"], env)
    listing = _run(cmd + ["ls", "-r", f"s3://{bucket}/"], env)
    assert f"s3://{bucket}/up/sub/big.bin" in listing
    assert _listed(s3, bucket, "up/") == _expected(tree)
    out = tmp_path / "out"
    _run(cmd + ["sync", f"s3://{bucket}/up/", f"{out}/"], env)
    _same_tree(tree, out)
    again = _run(cmd + ["sync", f"{tree}/", f"s3://{bucket}/up/"], env)
    assert "upload:" not in again  # MD5s (ETags) match: nothing to send


@pytest.mark.skipif(shutil.which("rclone") is None, reason="rclone is not installed")
def test_rclone_copy_and_check(gateway: Gateway, s3: BaseClient, tree: Path, tmp_path: Path) -> None:
    user = gateway.users["alice"]
    env = {k: v for k, v in os.environ.items() if k != "AWS_CA_BUNDLE"}  # rclone 1.60 refuses it on plain HTTP
    env.update(RCLONE_CONFIG=str(tmp_path / "rclone.conf"), RCLONE_CONFIG_GW_TYPE="s3",
               RCLONE_CONFIG_GW_PROVIDER="Other", RCLONE_CONFIG_GW_ACCESS_KEY_ID=user.access_key_id,
               RCLONE_CONFIG_GW_SECRET_ACCESS_KEY=user.secret_access_key, RCLONE_CONFIG_GW_ENDPOINT=gateway.url,
               RCLONE_CONFIG_GW_REGION="us-east-1", HOME=str(tmp_path))
    bucket = f"t-rclone-{uuid.uuid4().hex[:8]}"
    _run(["rclone", "mkdir", f"gw:{bucket}"], env)
    # a small upload cutoff so the big file goes up as a multipart upload
    _run(["rclone", "copy", "--s3-upload-cutoff", "5M", "--s3-chunk-size", "5M", str(tree), f"gw:{bucket}/up"], env)
    checked = subprocess.run(["rclone", "check", str(tree), f"gw:{bucket}/up"], env=env, capture_output=True,
                             text=True, timeout=300)
    assert checked.returncode == 0, checked.stderr
    assert "0 differences found" in checked.stderr
    listing = _run(["rclone", "ls", f"gw:{bucket}"], env)
    assert "up/sub/big.bin" in listing
    assert _listed(s3, bucket, "up/") == _expected(tree)
    out = tmp_path / "out"
    _run(["rclone", "copy", f"gw:{bucket}/up", str(out)], env)
    _same_tree(tree, out)
    _run(["rclone", "purge", f"gw:{bucket}"], env)
    assert bucket not in [b["Name"] for b in s3.list_buckets()["Buckets"]]
