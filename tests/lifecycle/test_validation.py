"""What S3 refuses in a lifecycle configuration is refused here too, with the reason."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from tests.lifecycle.boto3_wire import boto3_request
from tierpilot.catalog.models import Bucket
from tierpilot.lifecycle.rules import (
    LifecycleConfig,
    LifecycleExpiration,
    LifecycleInvalid,
    LifecycleRule,
    LifecycleTransition,
    RuleFilter,
)
from tierpilot.lifecycle.s3xml import parse_xml
from tierpilot.lifecycle.validation import check_structure, validate_for_bucket
from tierpilot.tiers.models import Tier


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


def test_rules_without_an_id_get_distinct_ones_and_named_rules_keep_theirs() -> None:
    rule = LifecycleRule(filter=RuleFilter(), expiration=LifecycleExpiration(days=5))
    checked = check_structure(LifecycleConfig(rules=[rule, rule, rule.model_copy(update={"id": "mine"})]))
    ids = [r.id for r in checked.rules]
    assert ids[0] and ids[1] and ids[0] != ids[1] and ids[2] == "mine"


def _bucket_on(tier: Tier) -> Bucket:
    return Bucket(id=1, name="b", tier_id=tier.id)


def _one_rule(**actions: Any) -> LifecycleConfig:
    return LifecycleConfig(rules=[LifecycleRule(id="r", filter=RuleFilter(), **actions)])


def test_a_class_no_tier_of_the_bucket_serves_is_refused_naming_the_tiers() -> None:
    hot = Tier(id=1, name="hot", storage_classes=["STANDARD"], min_storage_days=0)
    config = _one_rule(transitions=[LifecycleTransition(days=30, storage_class="GLACIER")])
    with pytest.raises(LifecycleInvalid) as err:
        validate_for_bucket(config, _bucket_on(hot), [hot])
    assert err.value.message == ("rule 'r': transition to GLACIER, but no tier of bucket 'b' serves that storage "
                                 "class (tiers and their classes: hot: STANDARD)")


def test_date_steps_count_the_minimum_duration_from_the_transition_date() -> None:
    hot = Tier(id=1, name="hot", storage_classes=["STANDARD"], min_storage_days=30)
    cold = Tier(id=2, name="cold", storage_classes=["GLACIER"], min_storage_days=90)
    # a Date rule has no common start day, so the bucket's own tier (30 days) is not checked
    config = _one_rule(transitions=[LifecycleTransition(date=datetime(2030, 1, 1, tzinfo=UTC),
                                                        storage_class="GLACIER")],
                       expiration=LifecycleExpiration(date=datetime(2030, 2, 1, tzinfo=UTC)))
    with pytest.raises(LifecycleInvalid) as err:
        validate_for_bucket(config, _bucket_on(hot), [hot, cold])
    assert err.value.message == ("rule 'r': objects stay on tier 'cold' (GLACIER) (minimum storage duration 90 "
                                 "days) only 31 days before the Expiration at 2030-02-01; move that step to "
                                 "2030-04-01 or later")
    later = _one_rule(transitions=[LifecycleTransition(date=datetime(2030, 1, 1, tzinfo=UTC),
                                                       storage_class="GLACIER")],
                      expiration=LifecycleExpiration(date=datetime(2030, 4, 1, tzinfo=UTC)))
    validate_for_bucket(later, _bucket_on(hot), [hot, cold])
