"""Lifecycle XML: what boto3 sends parses, and what we answer parses back in boto3 to the same rules."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lifecycle.boto3_wire import ROUND_TRIPS, boto3_parse, boto3_request
from tierpilot.lifecycle.rules import LifecycleInvalid
from tierpilot.lifecycle.s3xml import parse_xml, to_xml


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
