"""Lifecycle XML: what boto3 sends parses, and what we answer parses back in boto3 to the same rules."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSRequest
from botocore.parsers import RestXMLParser

from tierpilot.lifecycle.rules import (
    LifecycleConfig,
    LifecycleInvalid,
    LifecycleRule,
    LifecycleTransition,
    RuleFilter,
    check_structure,
    created_threshold,
    due_at,
    parse_xml,
    small_objects_blocked,
    to_xml,
)


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


@pytest.mark.parametrize("config", ROUND_TRIPS, ids=["prefix", "and-chain", "mixed"])
@pytest.mark.parametrize("min_size", [None, "varies_by_storage_class"])
def test_boto3_configuration_round_trips(config: dict[str, Any], min_size: str | None) -> None:
    body, header = boto3_request(config, min_size)
    parsed = parse_xml(body, header)
    assert parsed.transition_default_minimum_object_size == (min_size or "all_storage_classes_128K")
    back = boto3_parse(parsed)
    assert back["Rules"] == config["Rules"]
    assert back["TransitionDefaultMinimumObjectSize"] == (min_size or "all_storage_classes_128K")
    assert parse_xml(to_xml(parsed), parsed.transition_default_minimum_object_size) == parsed


def test_rule_without_id_gets_a_stable_one() -> None:
    body, _ = boto3_request({"Rules": [{"Status": "Enabled", "Filter": {}, "Expiration": {"Days": 5}}]})
    parsed = parse_xml(body)
    assert parsed.rules[0].id
    assert parse_xml(to_xml(parsed)).rules[0].id == parsed.rules[0].id


def _bad(rules: list[dict[str, Any]]) -> LifecycleInvalid:
    body, header = boto3_request({"Rules": rules})
    with pytest.raises(LifecycleInvalid) as err:
        parse_xml(body, header)
    return err.value


@pytest.mark.parametrize(("rules", "message"), [
    ([{"ID": "a", "Status": "Enabled", "Filter": {}}], "at least one action"),
    ([{"ID": "a", "Status": "Enabled", "Filter": {}, "Expiration": {"Days": 1}},
      {"ID": "a", "Status": "Enabled", "Filter": {}, "Expiration": {"Days": 2}}], "unique"),
    ([{"ID": "a", "Status": "Enabled", "Filter": {},
       "Transitions": [{"Days": 90, "StorageClass": "STANDARD_IA"}, {"Days": 30, "StorageClass": "GLACIER"}]}],
     "must come after the Transition to the warmer class STANDARD_IA"),
    ([{"ID": "a", "Status": "Enabled", "Filter": {},
       "Transitions": [{"Days": 30, "StorageClass": "GLACIER"}], "Expiration": {"Days": 30}}],
     "must be greater than Days in the Transition"),
    ([{"ID": "a", "Status": "Enabled", "Filter": {},
       "Transitions": [{"Days": 30, "StorageClass": "STANDARD"}]}], "not a storage class a transition can go to"),
    ([{"ID": "a", "Status": "Enabled", "Filter": {},
       "Transitions": [{"Date": datetime(2020, 1, 1, 12, tzinfo=UTC), "StorageClass": "GLACIER"}]}],
     "midnight GMT"),
    ([{"ID": "a", "Status": "Enabled", "Filter": {},
       "Transitions": [{"Days": 3, "StorageClass": "STANDARD_IA"},
                       {"Date": datetime(2030, 1, 1, tzinfo=UTC), "StorageClass": "GLACIER"}]}], "mixed Date and Days"),
    ([{"ID": "a", "Status": "Enabled", "Filter": {"Tag": {"Key": "k", "Value": "v"}},
       "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 3}}], "cannot be specified with Tags"),
    ([{"ID": "a", "Status": "Enabled",
       "Filter": {"And": {"ObjectSizeGreaterThan": 100, "ObjectSizeLessThan": 100}},
       "Expiration": {"Days": 3}}], "must be less than ObjectSizeLessThan"),
])
def test_configurations_s3_refuses_are_refused_with_the_reason(rules: list[dict[str, Any]], message: str) -> None:
    assert message in _bad(rules).message


@pytest.mark.parametrize("body", [b"", b"<nope", b"<LifecycleConfiguration/>",
                                  b"<LifecycleConfiguration><Rule><Status>On</Status></Rule></LifecycleConfiguration>",
                                  b"<LifecycleConfiguration><Rule><ID>x</ID><Status>Enabled</Status><Filter/>"
                                  b"<Expiration><Days>soon</Days></Expiration></Rule></LifecycleConfiguration>",
                                  b"<LifecycleConfiguration><Bogus/></LifecycleConfiguration>",
                                  b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]>'
                                  b"<LifecycleConfiguration>&a;</LifecycleConfiguration>"])
def test_garbage_is_malformed_xml(body: bytes) -> None:
    with pytest.raises(LifecycleInvalid) as err:
        parse_xml(body)
    assert err.value.s3_code == "MalformedXML"


def test_due_date_rounds_up_to_the_next_midnight_utc() -> None:
    created = datetime(2026, 1, 10, 15, 0, tzinfo=UTC)
    assert due_at(created, 30) == datetime(2026, 2, 10, tzinfo=UTC)
    assert due_at(datetime(2026, 1, 10, tzinfo=UTC), 1) == datetime(2026, 1, 11, tzinfo=UTC)
    # the threshold form the sweep queries with agrees with due_at on both sides of the boundary
    for now in (datetime(2026, 2, 9, 23, 59, 59, tzinfo=UTC), datetime(2026, 2, 10, tzinfo=UTC)):
        threshold = created_threshold(now, 30, None)
        assert threshold is not None
        assert (created <= threshold) == (due_at(created, 30) <= now)


def test_a_date_action_applies_to_every_object_once_the_date_passed() -> None:
    now = datetime(2026, 3, 1, 8, tzinfo=UTC)
    assert created_threshold(now, None, datetime(2026, 3, 1, tzinfo=UTC)) == now
    assert created_threshold(now, None, datetime(2026, 3, 2, tzinfo=UTC)) is None


def test_the_128k_default_and_its_overrides() -> None:
    plain = LifecycleRule(id="r", filter=RuleFilter(prefix=""),
                          transitions=[LifecycleTransition(days=1, storage_class="GLACIER")])
    sized = LifecycleRule(id="s", filter=RuleFilter(object_size_greater_than=10),
                          transitions=[LifecycleTransition(days=1, storage_class="STANDARD_IA")])
    default = check_structure(LifecycleConfig(rules=[plain, sized]))
    varies = default.model_copy(update={"transition_default_minimum_object_size": "varies_by_storage_class"})
    assert small_objects_blocked(default, plain, "GLACIER")
    assert not small_objects_blocked(varies, plain, "GLACIER")
    assert small_objects_blocked(varies, plain, "STANDARD_IA")
    assert not small_objects_blocked(default, sized, "STANDARD_IA")  # a size filter takes precedence
