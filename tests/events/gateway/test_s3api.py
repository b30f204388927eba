"""Put/GetBucketNotificationConfiguration through the gateway, with boto3 and the AWS CLI v2 (/usr/bin/aws)."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from typing import Any

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from tests.events.conftest import add_target, rule
from tests.gateway.conftest import Gateway

AWS = "/usr/bin/aws"


@pytest.fixture
def arns(gateway: Gateway) -> dict[str, str]:
    tag = uuid.uuid4().hex[:6]
    return {"amqp": add_target(f"q-{tag}", "amqp", "amqp://guest:guest@127.0.0.1:5672/%2F", f"events-{tag}")[0],
            "redis": add_target(f"r-{tag}", "redis", "redis://127.0.0.1:6379/0", f"events-{tag}")[0]}


def _config(arns: dict[str, str]) -> dict[str, Any]:
    return {
        "QueueConfigurations": [
            rule(arns["amqp"], ["s3:ObjectCreated:*", "s3:ObjectRemoved:Delete"], prefix="data/", suffix=".csv",
                 id_="csv-in"),
            rule(arns["amqp"], ["s3:ObjectCreated:*"], prefix="logs/", id_="logs-in"),
        ],
        "TopicConfigurations": [
            {"Id": "restored", "TopicArn": arns["redis"], "Events": ["s3:ObjectRestore:Completed",
                                                                   "s3:LifecycleTransition"]},
        ],
    }


def test_boto3_sets_and_reads_the_configuration_unchanged(s3: BaseClient, bucket: str, arns: dict[str, str]) -> None:
    config = _config(arns)
    s3.put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration=config)
    got = s3.get_bucket_notification_configuration(Bucket=bucket)
    got.pop("ResponseMetadata")
    assert got == config


def test_a_bucket_without_configuration_reads_empty(s3: BaseClient, bucket: str) -> None:
    got = s3.get_bucket_notification_configuration(Bucket=bucket)
    got.pop("ResponseMetadata")
    assert got == {}


def test_an_empty_configuration_removes_it(s3: BaseClient, bucket: str, arns: dict[str, str]) -> None:
    s3.put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration=_config(arns))
    s3.put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration={})
    got = s3.get_bucket_notification_configuration(Bucket=bucket)
    got.pop("ResponseMetadata")
    assert got == {}


@pytest.mark.skipif(not os.path.exists(AWS), reason="the AWS CLI v2 (/usr/bin/aws, Debian's awscli) is not installed")
def test_aws_cli_sets_and_reads_the_configuration_unchanged(gateway: Gateway, bucket: str,
                                                            arns: dict[str, str]) -> None:
    user = gateway.users["alice"]
    env = {**os.environ, "AWS_ACCESS_KEY_ID": user.access_key_id, "AWS_SECRET_ACCESS_KEY": user.secret_access_key,
           "AWS_DEFAULT_REGION": "us-east-1", "AWS_CONFIG_FILE": os.devnull,
           "AWS_SHARED_CREDENTIALS_FILE": os.devnull}
    config = _config(arns)

    def aws(*args: str) -> str:
        done = subprocess.run([AWS, "--endpoint-url", gateway.url, "s3api", *args], env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    aws("put-bucket-notification-configuration", "--bucket", bucket, "--notification-configuration",
        json.dumps(config))
    assert json.loads(aws("get-bucket-notification-configuration", "--bucket", bucket)) == config


@pytest.mark.parametrize(("change", "code"), [
    (lambda c: c["QueueConfigurations"][0].update(QueueArn="arn:tierpilot:sqs::nobody:amqp"), "InvalidArgument"),
    (lambda c: c["QueueConfigurations"][0].update(QueueArn="arn:aws:sqs:us-east-1:123456789012:q"),
     "InvalidArgument"),
    (lambda c: c["QueueConfigurations"][0].update(Events=["s3:ObjectCreated:Rename"]), "InvalidArgument"),
    (lambda c: c["QueueConfigurations"][1].update(Filter={"Key": {"FilterRules": [{"Name": "prefix",
                                                                                    "Value": "data/x"}]}}),
     "InvalidArgument"),
    (lambda c: c["QueueConfigurations"][1].update(Filter={"Key": {"FilterRules": [{"Name": "middle",
                                                                                    "Value": "x"}]}}),
     "InvalidFilterRuleName"),
], ids=["unknown-target", "foreign-arn", "unknown-event", "overlapping-filters", "bad-filter-name"])
def test_a_refused_configuration_changes_nothing(s3: BaseClient, bucket: str, arns: dict[str, str], change: Any,
                                                 code: str) -> None:
    before = {"QueueConfigurations": [rule(arns["amqp"], ["s3:ObjectCreated:Put"], id_="kept")]}
    s3.put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration=before)
    config = _config(arns)
    change(config)
    with pytest.raises(ClientError) as refused:
        s3.put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration=config)
    assert refused.value.response["Error"]["Code"] == code
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    got = s3.get_bucket_notification_configuration(Bucket=bucket)
    got.pop("ResponseMetadata")
    assert got == before
