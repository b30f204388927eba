"""What boto3 puts on the wire for a lifecycle configuration, and what it makes of our answer (no network)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSRequest
from botocore.parsers import RestXMLParser

from tierpilot.lifecycle.rules import LifecycleConfig
from tierpilot.lifecycle.s3xml import to_xml

# configurations as boto3 takes them; test_s3xml parses them, test_s3api sends them through the gateway
ROUND_TRIPS: list[dict[str, Any]] = [
    {"Rules": [{"ID": "to-ia", "Status": "Enabled", "Filter": {"Prefix": "raw/"},
                "Transitions": [{"Days": 30, "StorageClass": "STANDARD_IA"}]}]},
    {"Rules": [{"ID": "chain", "Status": "Enabled",
                "Filter": {"And": {"Prefix": "logs/", "Tags": [{"Key": "kind", "Value": "log"},
                                                                {"Key": "team", "Value": "b2"}],
                                   "ObjectSizeGreaterThan": 1024, "ObjectSizeLessThan": 10 ** 9}},
                "Transitions": [{"Days": 30, "StorageClass": "STANDARD_IA"},
                                {"Days": 90, "StorageClass": "GLACIER"}],
                "Expiration": {"Days": 365}},
               {"ID": "uploads", "Status": "Enabled", "Filter": {"Prefix": "incoming/"},
                "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 7}}]},
    {"Rules": [{"ID": "dated", "Status": "Disabled", "Filter": {},
                "Transitions": [{"Date": datetime(2020, 1, 1, tzinfo=UTC), "StorageClass": "DEEP_ARCHIVE"}],
                "Expiration": {"Date": datetime(2030, 6, 1, tzinfo=UTC)}},
               {"ID": "tagged", "Status": "Enabled", "Filter": {"Tag": {"Key": "tmp", "Value": "yes"}},
                "Expiration": {"Days": 1}},
               {"ID": "small", "Status": "Enabled", "Filter": {"ObjectSizeLessThan": 4096},
                "Transitions": [{"Days": 0, "StorageClass": "GLACIER"}]},
               {"ID": "big", "Status": "Enabled", "Filter": {"ObjectSizeGreaterThan": 0},
                "Transitions": [{"Days": 10, "StorageClass": "GLACIER_IR"}]},
               {"ID": "legacy", "Status": "Enabled", "Prefix": "old/", "Expiration": {"Days": 3}},
               {"ID": "noncurrent", "Status": "Enabled", "Filter": {"Prefix": "v/"},
                "NoncurrentVersionTransitions": [{"NoncurrentDays": 30, "StorageClass": "STANDARD_IA"}],
                "NoncurrentVersionExpiration": {"NoncurrentDays": 60, "NewerNoncurrentVersions": 2}}]},
]


class _Captured(Exception):
    def __init__(self, request: AWSRequest) -> None:
        self.request = request


def boto3_request(config: dict[str, Any], min_size: str | None = None) -> tuple[bytes, str | None]:
    """The body and size header boto3 sends for put_bucket_lifecycle_configuration (not sent anywhere)."""
    s3 = boto3.client("s3", region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="b",
                      endpoint_url="http://127.0.0.1:9")

    def capture(request: AWSRequest, **_kw: Any) -> None:
        raise _Captured(request)

    s3.meta.events.register("before-send.s3.PutBucketLifecycleConfiguration", capture)
    kwargs: dict[str, Any] = {"Bucket": "b", "LifecycleConfiguration": config}
    if min_size:
        kwargs["TransitionDefaultMinimumObjectSize"] = min_size
    with pytest.raises(_Captured) as got:
        s3.put_bucket_lifecycle_configuration(**kwargs)
    req = got.value.request
    header = req.headers.get("x-amz-transition-default-minimum-object-size")
    body = req.body if isinstance(req.body, bytes) else req.body.read()
    return body, header.decode() if isinstance(header, bytes) else header


def boto3_parse(config: LifecycleConfig) -> dict[str, Any]:
    """What boto3's get_bucket_lifecycle_configuration returns for our answer."""
    import botocore.session

    model = botocore.session.get_session().get_service_model("s3")
    shape = model.operation_model("GetBucketLifecycleConfiguration").output_shape
    response = {"status_code": 200, "body": to_xml(config),
                "headers": {"x-amz-transition-default-minimum-object-size":
                            config.transition_default_minimum_object_size}}
    parsed = RestXMLParser().parse(response, shape)
    parsed.pop("ResponseMetadata", None)
    return parsed
