"""Object lock (WORM) on a real gateway, through Debian's AWS CLI v2 (/usr/bin/aws --endpoint-url) and boto3:
a bucket created with lock, default retention, GOVERNANCE with the bypass header, COMPLIANCE never shortened,
legal hold, versioning kept on; and lifecycle expirations refused by the catalog for a locked object."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from tests.gateway.conftest import Gateway

AWS = "/usr/bin/aws"  # Debian's awscli package: AWS CLI v2 (not a pyenv shim of v1)



class Cli:
    def __init__(self, gateway: Gateway, home: Path) -> None:
        user = gateway.users["alice"]
        home.mkdir(exist_ok=True)
        self.env = {k: v for k, v in os.environ.items() if k != "AWS_CA_BUNDLE"}
        self.env.update(AWS_ACCESS_KEY_ID=user.access_key_id, AWS_SECRET_ACCESS_KEY=user.secret_access_key,
                        AWS_DEFAULT_REGION="us-east-1", HOME=str(home), AWS_CONFIG_FILE=str(home / "config"),
                        AWS_SHARED_CREDENTIALS_FILE=str(home / "credentials"), AWS_PAGER="")
        self.base = [AWS, "--endpoint-url", gateway.url, "--output", "json", "s3api"]

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.base, *args], env=self.env, capture_output=True, text=True, timeout=120)

    def ok(self, *args: str) -> dict[str, Any]:
        r = self.run(*args)
        assert r.returncode == 0, f"{args} failed: {r.stderr[-2000:]}"
        return json.loads(r.stdout) if r.stdout.strip() else {}

    def fails(self, code: str, *args: str) -> None:
        """The command fails with this S3 error code."""
        r = self.run(*args)
        assert r.returncode != 0 and code in r.stderr, f"{args}: expected {code}, got {r.returncode} {r.stderr}"


@pytest.fixture
def cli(gateway: Gateway, tmp_path: Path) -> Cli:
    return Cli(gateway, tmp_path / "home")


@pytest.mark.skipif(not Path(AWS).exists(), reason="Debian's awscli is not installed")
def test_lock_bucket_default_retention_and_governance_bypass(cli: Cli, s3: BaseClient, tmp_path: Path) -> None:
    bucket = f"t-lock-{uuid.uuid4().hex[:8]}"
    cli.ok("create-bucket", "--bucket", bucket, "--object-lock-enabled-for-bucket")
    assert cli.ok("get-bucket-versioning", "--bucket", bucket)["Status"] == "Enabled"
    with pytest.raises(ClientError) as exc:
        s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Suspended"})
    assert exc.value.response["Error"]["Code"] == "InvalidBucketState"
    cli.ok("put-object-lock-configuration", "--bucket", bucket, "--object-lock-configuration",
           json.dumps({"ObjectLockEnabled": "Enabled",
                       "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1}}}))
    conf = s3.get_object_lock_configuration(Bucket=bucket)["ObjectLockConfiguration"]
    assert conf["Rule"]["DefaultRetention"] == {"Mode": "GOVERNANCE", "Days": 1}
    body = tmp_path / "data.txt"
    body.write_bytes(b"measurement 1")
    vid = cli.ok("put-object", "--bucket", bucket, "--key", "run.dat", "--body", str(body))["VersionId"]
    assert s3.get_object_retention(Bucket=bucket, Key="run.dat")["Retention"]["Mode"] == "GOVERNANCE"
    cli.fails("AccessDenied", "delete-object", "--bucket", bucket, "--key", "run.dat", "--version-id", vid)
    # an overwrite makes a new version; the locked one stays
    v2 = s3.put_object(Bucket=bucket, Key="run.dat", Body=b"measurement 2")["VersionId"]
    assert v2 != vid
    cli.ok("delete-object", "--bucket", bucket, "--key", "run.dat", "--version-id", vid,
           "--bypass-governance-retention")
    listed = s3.list_object_versions(Bucket=bucket)["Versions"]
    assert [v["VersionId"] for v in listed] == [v2]


def _denied(call: Any, **kwargs: Any) -> None:
    with pytest.raises(ClientError) as exc:
        call(**kwargs)
    assert exc.value.response["Error"]["Code"] == "AccessDenied"


def test_compliance_is_never_shortened_and_legal_hold_blocks_deletes(s3: BaseClient) -> None:
    bucket = f"t-lock-{uuid.uuid4().hex[:8]}"
    s3.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True)
    until = datetime.now(UTC) + timedelta(days=2)
    vid = s3.put_object(Bucket=bucket, Key="c", Body=b"evidence", ObjectLockMode="COMPLIANCE",
                        ObjectLockRetainUntilDate=until)["VersionId"]
    assert s3.head_object(Bucket=bucket, Key="c")["ObjectLockMode"] == "COMPLIANCE"
    _denied(s3.put_object_retention, Bucket=bucket, Key="c", BypassGovernanceRetention=True,
            Retention={"Mode": "COMPLIANCE", "RetainUntilDate": until - timedelta(days=1)})
    _denied(s3.put_object_retention, Bucket=bucket, Key="c", BypassGovernanceRetention=True,
            Retention={"Mode": "GOVERNANCE", "RetainUntilDate": until + timedelta(days=1)})
    s3.put_object_retention(Bucket=bucket, Key="c",
                            Retention={"Mode": "COMPLIANCE", "RetainUntilDate": until + timedelta(days=1)})
    _denied(s3.delete_object, Bucket=bucket, Key="c", VersionId=vid, BypassGovernanceRetention=True)
    hv = s3.put_object(Bucket=bucket, Key="h", Body=b"x")["VersionId"]
    s3.put_object_legal_hold(Bucket=bucket, Key="h", LegalHold={"Status": "ON"})
    assert s3.get_object_legal_hold(Bucket=bucket, Key="h")["LegalHold"]["Status"] == "ON"
    _denied(s3.delete_object, Bucket=bucket, Key="h", VersionId=hv, BypassGovernanceRetention=True)
    s3.put_object_legal_hold(Bucket=bucket, Key="h", LegalHold={"Status": "OFF"})
    s3.delete_object(Bucket=bucket, Key="h", VersionId=hv)
    # a plain delete only adds a marker: the locked version stays
    assert s3.delete_object(Bucket=bucket, Key="c")["DeleteMarker"] is True
    assert s3.get_object(Bucket=bucket, Key="c", VersionId=vid)["Body"].read() == b"evidence"


def test_lock_headers_need_a_lock_bucket_and_valid_values(s3: BaseClient, bucket: str) -> None:
    with pytest.raises(ClientError) as exc:
        s3.put_object(Bucket=bucket, Key="k", Body=b"x", ObjectLockMode="GOVERNANCE",
                      ObjectLockRetainUntilDate=datetime.now(UTC) + timedelta(days=1))
    assert exc.value.response["Error"]["Code"] == "InvalidRequest"
    with pytest.raises(ClientError) as exc:
        s3.get_object_lock_configuration(Bucket=bucket)
    assert exc.value.response["Error"]["Code"] == "ObjectLockConfigurationNotFoundError"


def test_lifecycle_expiration_refuses_a_locked_object(s3: BaseClient) -> None:
    from tierpilot.catalog import repository
    from tierpilot.kit.db import transaction

    bucket = f"t-lock-{uuid.uuid4().hex[:8]}"
    s3.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True)
    s3.put_object(Bucket=bucket, Key="held", Body=b"x", ObjectLockLegalHoldStatus="ON")
    s3.put_object(Bucket=bucket, Key="kept", Body=b"x", ObjectLockMode="GOVERNANCE",
                  ObjectLockRetainUntilDate=datetime.now(UTC) + timedelta(days=1))
    with transaction(write=True) as session:
        b = repository.get_bucket_by_name(session, bucket)
        assert b is not None
        for key in ("held", "kept"):
            obj = repository.get_object(session, b.id, key)
            assert obj is not None
            assert not repository.delete_object(session, obj.id, obj.locator)
    assert {o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]} == {"held", "kept"}
