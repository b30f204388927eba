"""The rule model: which objects a transition leaves alone under S3's 128 KB default."""

from __future__ import annotations

from tierpilot.lifecycle.rules import (
    LifecycleConfig,
    LifecycleRule,
    LifecycleTransition,
    RuleFilter,
    small_objects_blocked,
)


def test_the_128k_default_and_its_overrides() -> None:
    plain = LifecycleRule(id="r", filter=RuleFilter(prefix=""),
                          transitions=[LifecycleTransition(days=1, storage_class="GLACIER")])
    sized = LifecycleRule(id="s", filter=RuleFilter(object_size_greater_than=10),
                          transitions=[LifecycleTransition(days=1, storage_class="STANDARD_IA")])
    default = LifecycleConfig(rules=[plain, sized])
    varies = default.model_copy(update={"transition_default_minimum_object_size": "varies_by_storage_class"})
    assert small_objects_blocked(default, plain, "GLACIER")
    assert not small_objects_blocked(varies, plain, "GLACIER")
    assert small_objects_blocked(varies, plain, "STANDARD_IA")
    assert not small_objects_blocked(default, sized, "STANDARD_IA")  # a size filter takes precedence
