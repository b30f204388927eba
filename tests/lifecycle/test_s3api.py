"""PutBucketLifecycleConfiguration / Get / DeleteBucketLifecycle through a real gateway process, with boto3
and Debian's AWS CLI v2 (/usr/bin/aws); the dashboard's API shows the same rules and the other way round."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError
from fastapi.testclient import TestClient

from tests.conftest import login
from tests.gateway.conftest import Gateway
from tests.lifecycle.boto3_wire import ROUND_TRIPS

AWS = "/usr/bin/aws"
# the gateway's tiers serve STANDARD, STANDARD_IA, GLACIER and DEEP_ARCHIVE (no GLACIER_IR)
GATEWAY_CONFIGS = json.loads(json.dumps(ROUND_TRIPS, default=str).replace("GLACIER_IR", "DEEP_ARCHIVE"))


def _get(client: BaseClient, name: str) -> dict[str, Any]:
    out = client.get_bucket_lifecycle_configuration(Bucket=name)
    out.pop("ResponseMetadata", None)
    return out


@pytest.mark.parametrize("config", GATEWAY_CONFIGS, ids=["prefix", "and-chain", "mixed"])
def test_boto3_put_get_delete_round_trip(s3: BaseClient, bucket: str, config: dict[str, Any]) -> None:
    put = s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration=config,
                                                TransitionDefaultMinimumObjectSize="varies_by_storage_class")
    assert put["TransitionDefaultMinimumObjectSize"] == "varies_by_storage_class"
    got = json.loads(json.dumps(_get(s3, bucket), default=str))
    assert got == {"Rules": config["Rules"], "TransitionDefaultMinimumObjectSize": "varies_by_storage_class"}
    s3.delete_bucket_lifecycle(Bucket=bucket)
    with pytest.raises(ClientError) as err:
        s3.get_bucket_lifecycle_configuration(Bucket=bucket)
    assert err.value.response["Error"]["Code"] == "NoSuchLifecycleConfiguration"
    s3.delete_bucket_lifecycle(Bucket=bucket)  # deleting nothing succeeds, as in S3


@pytest.mark.parametrize(("rules", "code", "message"), [
    ([{"ID": "x", "Status": "Enabled", "Filter": {}, "Transitions": [{"Days": 30, "StorageClass": "GLACIER_IR"}]}],
     "InvalidArgument", "no tier of bucket"),
    ([{"ID": "x", "Status": "Enabled", "Filter": {},
       "Transitions": [{"Days": 90, "StorageClass": "STANDARD_IA"}, {"Days": 40, "StorageClass": "GLACIER"}]}],
     "InvalidArgument", "must come after the Transition to the warmer class"),
    ([{"ID": "x", "Status": "Enabled", "Filter": {}}], "InvalidArgument", "at least one action"),
])
def test_refused_configurations_answer_s3_errors_and_store_nothing(
        s3: BaseClient, bucket: str, rules: list[dict[str, Any]], code: str, message: str) -> None:
    with pytest.raises(ClientError) as err:
        s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": rules})
    assert err.value.response["Error"]["Code"] == code
    assert message in err.value.response["Error"]["Message"]
    with pytest.raises(ClientError):
        s3.get_bucket_lifecycle_configuration(Bucket=bucket)


def test_only_the_owner_configures_a_bucket(gateway: Gateway, s3: BaseClient, bucket: str) -> None:
    config = ROUND_TRIPS[0]
    with pytest.raises(ClientError) as err:
        gateway.client("bob").put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration=config)
    assert err.value.response["Error"]["Code"] == "AccessDenied"
    gateway.client("root").put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration=config)
    assert _get(s3, bucket)["Rules"] == config["Rules"]


@pytest.fixture
def api_as_alice(gateway: Gateway) -> Iterator[TestClient]:
    from tierpilot.app.api import create_app

    with TestClient(create_app(), base_url="http://127.0.0.1") as c:
        yield login(c, "alice", "alice-password-1")


def _aws(gateway: Gateway, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    alice = gateway.users["alice"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_ACCESS_KEY_ID=alice.access_key_id, AWS_SECRET_ACCESS_KEY=alice.secret_access_key,
               AWS_DEFAULT_REGION="us-east-1", AWS_CONFIG_FILE=str(tmp_path / "none"),
               AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"), HOME=str(tmp_path))
    return subprocess.run([AWS, "--endpoint-url", gateway.url, "s3api", *args], env=env, capture_output=True,
                          text=True, timeout=60)


@pytest.mark.skipif(shutil.which(AWS) is None, reason="Debian's awscli (v2) is not installed")
def test_a_rule_set_with_the_aws_cli_shows_in_the_api_and_back(
        gateway: Gateway, bucket: str, api_as_alice: TestClient, tmp_path: Path) -> None:
    rules = {"Rules": [{"ID": "cli-rule", "Status": "Enabled", "Filter": {"Prefix": "logs/"},
                        "Transitions": [{"Days": 30, "StorageClass": "STANDARD_IA"},
                                        {"Days": 120, "StorageClass": "GLACIER"}],
                        "Expiration": {"Days": 400}}]}
    (tmp_path / "rules.json").write_text(json.dumps(rules))
    done = _aws(gateway, tmp_path, "put-bucket-lifecycle-configuration", "--bucket", bucket,
                "--lifecycle-configuration", f"file://{tmp_path / 'rules.json'}")
    assert done.returncode == 0, done.stderr
    shown = api_as_alice.get(f"/api/lifecycle/buckets/{bucket}/configuration").json()
    assert shown["configured"] and shown["updated_by"] == "s3:alice"
    [rule] = shown["rules"]
    assert rule["id"] == "cli-rule" and rule["filter"]["prefix"] == "logs/"
    assert [(t["days"], t["storage_class"]) for t in rule["transitions"]] == [(30, "STANDARD_IA"), (120, "GLACIER")]
    assert rule["expiration"]["days"] == 400
    # and a rule added in the dashboard shows in the CLI
    added = api_as_alice.post(f"/api/lifecycle/buckets/{bucket}/rules", json={
        "id": "ui-rule", "filter": {"prefix": "tmp/"}, "expiration": {"days": 7}})
    assert added.status_code == 201, added.text
    got = _aws(gateway, tmp_path, "get-bucket-lifecycle-configuration", "--bucket", bucket)
    assert got.returncode == 0, got.stderr
    cli_rules = json.loads(got.stdout)["Rules"]
    assert [r["ID"] for r in cli_rules] == ["cli-rule", "ui-rule"]
    assert cli_rules[1] == {"ID": "ui-rule", "Status": "Enabled", "Filter": {"Prefix": "tmp/"},
                            "Expiration": {"Days": 7}}
