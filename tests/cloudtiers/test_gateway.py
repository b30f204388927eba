"""Buckets on Azure and GCS tiers end to end through the gateway with AWS CLI v2 (/usr/bin/aws --endpoint-url):
upload, list, download; lifecycle moves posix → Azure COOL and → GCS COLDLINE and back (CopyObject to
STANDARD); a restore batch from an Azure ARCHIVE tier reaching ready (Azurite rehydrates in place at once)."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from azure.storage.blob import BlobServiceClient
from botocore.client import BaseClient

from tests.conftest import _truncate_all
from tests.emulators import AZURITE_KEY, Emulator, azurite_connection_string
from tests.gateway.conftest import start_gateway, stop
from tierpilot.drivers.gcs import GCSDriver
from tierpilot.kit.db import transaction, utcnow

AWS = "/usr/bin/aws"  # AWS CLI v2 (Debian); it ignores AWS_ENDPOINT_URL, hence --endpoint-url


@dataclass
class Site:
    url: str
    env: dict[str, str]
    key: tuple[str, str]
    tag: str
    user_id: int
    log: Path


@pytest.fixture(scope="module")
def site(db_url: str, data_dir: Path, azurite: Emulator, fake_gcs: Emulator) -> Iterator[Site]:
    """A gateway over a posix tier, an Azure COOL tier, an Azure ARCHIVE tier (in-place rehydration) and a
    GCS COLDLINE tier, on one Azurite container and one fake-gcs-server bucket."""
    from tierpilot.auth import service as auth
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.schemas import RestoreDelays, TierCreate

    tag = uuid.uuid4().hex[:8]
    container, bucket = f"gw-{tag}", f"gw-{tag}"
    BlobServiceClient.from_connection_string(azurite_connection_string(azurite.url)).create_container(container)
    GCSDriver("setup", bucket=bucket, endpoint_url=fake_gcs.url).client.create_bucket(bucket)
    azure = {"account_url": azurite.url, "container": container, "account_key": AZURITE_KEY}
    with transaction(write=True) as s:
        user, key = auth.create_user(s, f"cloud-{tag}", "cloud-password-1")
        tiers.create(s, TierCreate(name=f"disk-{tag}", driver="posix", config={"path": f"cloud-{tag}/disk"},
                                   storage_classes=["STANDARD"]))
        tiers.create(s, TierCreate(name=f"azcool-{tag}", driver="azure", storage_classes=["COOL", "STANDARD_IA"],
                                   config={**azure, "prefix": "cool", "access_tier": "COOL"},
                                   price_ref={"catalog": "azure-eastus-2026", "storage_class": "COOL"}))
        tiers.create(s, TierCreate(name=f"azarc-{tag}", driver="azure", storage_classes=["ARCHIVE"],
                                   config={**azure, "prefix": "arc", "access_tier": "ARCHIVE",
                                           "rehydrate": "in_place"},
                                   restore_delays=RestoreDelays(expedited=0, standard=0, bulk=0),
                                   price_ref={"catalog": "azure-eastus-2026", "storage_class": "ARCHIVE"}))
        tiers.create(s, TierCreate(name=f"gcold-{tag}", driver="gcs", storage_classes=["COLDLINE", "GLACIER_IR"],
                                   config={"bucket": bucket, "endpoint_url": fake_gcs.url, "prefix": "cold",
                                           "storage_class": "COLDLINE"},
                                   price_ref={"catalog": "gcp-us-central1-2026", "storage_class": "COLDLINE"}))
        user_id = user.id
    log = data_dir / f"cloud-gateway-{tag}.log"
    url, proc = start_gateway(db_url, log)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_ACCESS_KEY_ID=key.access_key_id, AWS_SECRET_ACCESS_KEY=key.secret_access_key,
               AWS_DEFAULT_REGION="us-east-1", AWS_CONFIG_FILE="/dev/null", AWS_SHARED_CREDENTIALS_FILE="/dev/null")
    yield Site(url, env, (key.access_key_id, key.secret_access_key), tag, user_id, log)
    stop(proc)
    _truncate_all()


def _aws(site: Site, *args: str, stdin: bytes | None = None) -> bytes:
    done = subprocess.run([AWS, "--endpoint-url", site.url, *args], env=site.env, input=stdin,
                          capture_output=True, timeout=120)
    assert done.returncode == 0, f"{done.stderr.decode()}\ngateway log:\n{site.log.read_text()[-3000:]}"
    return done.stdout


def _client(site: Site) -> BaseClient:
    return boto3.client("s3", endpoint_url=site.url, aws_access_key_id=site.key[0],
                        aws_secret_access_key=site.key[1], region_name="us-east-1")


def _bucket_on(site: Site, tier: str) -> str:
    """A new bucket whose home is ``tier`` (x-tierpilot-tier at creation, which the CLI cannot send)."""
    name = f"{tier.split('-')[0]}-{uuid.uuid4().hex[:10]}"
    client = _client(site)

    def add_tier_header(request: Any, **_: Any) -> None:
        request.headers["x-tierpilot-tier"] = f"{tier}-{site.tag}"

    client.meta.events.register("before-sign.s3.CreateBucket", add_tier_header)
    client.create_bucket(Bucket=name)
    return name


@pytest.mark.parametrize("tier", ["azcool", "gcold"])
def test_upload_list_download_on_a_cloud_tier_with_the_aws_cli(site: Site, tier: str, tmp_path: Path) -> None:
    bucket = _bucket_on(site, tier)
    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(9 << 20))  # the CLI sends it as a multipart upload (8 MiB parts)
    _aws(site, "s3", "cp", str(big), f"s3://{bucket}/data/big.bin")
    _aws(site, "s3", "cp", "-", f"s3://{bucket}/data/small.txt", stdin=b"small object")
    listing = _aws(site, "s3", "ls", f"s3://{bucket}/data/").decode()
    assert "big.bin" in listing and "small.txt" in listing and str(9 << 20) in listing
    assert _aws(site, "s3", "cp", f"s3://{bucket}/data/small.txt", "-") == b"small object"
    _aws(site, "s3", "cp", f"s3://{bucket}/data/big.bin", str(tmp_path / "back.bin"))
    assert (tmp_path / "back.bin").read_bytes() == big.read_bytes()
    client = _client(site)
    head = client.head_object(Bucket=bucket, Key="data/small.txt")
    assert head["StorageClass"] == {"azcool": "COOL", "gcold": "COLDLINE"}[tier]
    ranged = client.get_object(Bucket=bucket, Key="data/big.bin", Range="bytes=100-199")["Body"].read()
    assert ranged == big.read_bytes()[100:200]
    # fsck lists the tier through its driver: every blob known, no multipart part left behind
    from tierpilot.lifecycle.fsck import fsck

    report = fsck(min_age_s=0, tier_names=[f"{tier}-{site.tag}"])
    assert report.blobs >= 2 and report.findings == [], report.findings


# lifecycle rules speak S3's class names: the Azure tier serves STANDARD_IA as Cool, the GCS tier GLACIER_IR
# as Coldline (the drivers map them)
@pytest.mark.parametrize("cls", ["STANDARD_IA", "GLACIER_IR"])
def test_lifecycle_moves_posix_objects_to_a_cloud_tier_and_a_copy_brings_them_back(
        site: Site, cls: str, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    from tests.lifecycle.conftest import lifecycle_settings
    from tierpilot.catalog import repository as catalog
    from tierpilot.kit.settings import get_settings
    from tierpilot.lifecycle.runner import run_now

    lifecycle_settings(monkeypatch, delete_grace_s=0, move_rate_mbps=0)
    request.addfinalizer(get_settings.cache_clear)

    bucket = _bucket_on(site, "disk")
    data = os.urandom(200 << 10)  # S3 rules leave objects under 128 KiB out of IA transitions
    _aws(site, "s3", "cp", "-", f"s3://{bucket}/logs/a.log", stdin=data)
    rules = {"Rules": [{"ID": "cold", "Status": "Enabled", "Filter": {"Prefix": "logs/"},
                        "Transitions": [{"Days": 1, "StorageClass": cls}]}]}
    _aws(site, "s3api", "put-bucket-lifecycle-configuration", "--bucket", bucket,
         "--lifecycle-configuration", json.dumps(rules))
    with transaction() as s:
        found = catalog.get_bucket_by_name(s, bucket)
        assert found is not None
        bucket_id = found.id
    summary = run_now(bucket_id, now=utcnow() + timedelta(days=3))
    assert summary.errors == [] and sum(summary.by_action.values()) == 1
    client = _client(site)
    assert client.head_object(Bucket=bucket, Key="logs/a.log")["StorageClass"] == cls
    assert _aws(site, "s3", "cp", f"s3://{bucket}/logs/a.log", "-") == data
    _aws(site, "s3api", "copy-object", "--bucket", bucket, "--key", "logs/a.log", "--copy-source",
         f"{bucket}/logs/a.log", "--storage-class", "STANDARD")
    assert client.head_object(Bucket=bucket, Key="logs/a.log").get("StorageClass", "STANDARD") == "STANDARD"
    assert client.get_object(Bucket=bucket, Key="logs/a.log")["Body"].read() == data


def test_a_restore_batch_from_an_azure_archive_tier_reaches_ready(site: Site) -> None:
    from tierpilot.auth.models import User
    from tierpilot.restores import service, sweep

    bucket = _bucket_on(site, "azarc")
    keys = ["raw/a.h5", "raw/b.h5"]
    client = _client(site)
    _aws(site, "s3", "cp", "-", f"s3://{bucket}/{keys[0]}", stdin=keys[0].encode())
    client.put_object(Bucket=bucket, Key=keys[1], Body=keys[1].encode())
    assert client.head_object(Bucket=bucket, Key=keys[0])["StorageClass"] == "ARCHIVE"
    refused = subprocess.run([AWS, "--endpoint-url", site.url, "s3", "cp", f"s3://{bucket}/{keys[0]}", "-"],
                             env=site.env, capture_output=True, timeout=60)
    assert refused.returncode != 0 and b"InvalidObjectState" in refused.stderr
    with transaction(write=True) as s:
        user = s.get(User, site.user_id)
        batch = service.create_batch(s, user, service.Selection(bucket, (), ["raw/"]), "expedited", 2)
        batch_id = batch.id
    stats = sweep.poll_due()
    assert stats.outcomes.get("ready") == 2, stats
    with transaction() as s:
        assert service.get_batch(s, s.get(User, site.user_id), batch_id).batch.state == "ready"
    assert _aws(site, "s3", "cp", f"s3://{bucket}/{keys[0]}", "-") == keys[0].encode()
    assert client.get_object(Bucket=bucket, Key=keys[1])["Body"].read() == keys[1].encode()
