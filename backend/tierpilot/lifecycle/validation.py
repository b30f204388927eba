"""Whether a lifecycle configuration may be stored: S3's own rule constraints, then the bucket's tiers.

``check_structure`` needs nothing but the configuration (S3 refuses the same); ``validate_for_bucket`` asks
which tier serves each storage class (``class_tier``) and whether a step leaves a tier before its minimum
storage duration.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from tierpilot.catalog import service as catalog_service
from tierpilot.catalog.errors import CatalogError
from tierpilot.catalog.models import Bucket
from tierpilot.lifecycle.rules import (
    TRANSITION_CLASSES,
    LifecycleConfig,
    LifecycleInvalid,
    LifecycleRule,
    LifecycleTransition,
    RuleFilter,
    class_rank,
)
from tierpilot.tiers.models import Tier

MAX_RULES = 1000


def _is_midnight(d: datetime) -> bool:
    d = d.astimezone(UTC)
    return (d.hour, d.minute, d.second, d.microsecond) == (0, 0, 0, 0)


def check_structure(config: LifecycleConfig) -> LifecycleConfig:
    """S3's own checks on a configuration (no tiers needed); fills in missing rule IDs. Raises LifecycleInvalid."""
    if not config.rules:
        raise LifecycleInvalid("a lifecycle configuration needs at least one rule", "MalformedXML")
    if len(config.rules) > MAX_RULES:
        raise LifecycleInvalid(f"a lifecycle configuration holds at most {MAX_RULES} rules")
    rules: list[LifecycleRule] = []
    seen: set[str] = set()
    for rule in config.rules:
        if not rule.id:
            # S3 assigns an ID to a rule without one; it is stable from here on
            rule = rule.model_copy(update={"id": uuid.uuid4().hex[:16]})
        if rule.id in seen:
            raise LifecycleInvalid(f"Rule ID must be unique. Found same ID for more than one rule: {rule.id!r}")
        seen.add(rule.id)
        _check_rule(rule)
        rules.append(rule)
    return config.model_copy(update={"rules": rules})


def _check_rule(rule: LifecycleRule) -> None:
    name = f"rule {rule.id!r}"
    if rule.filter is not None and rule.prefix is not None:
        raise LifecycleInvalid(f"{name}: give either Filter or the legacy Prefix, not both", "MalformedXML")
    if rule.filter is None and rule.prefix is None:
        raise LifecycleInvalid(f"{name}: a rule needs a Filter (an empty Filter applies to every object)",
                               "MalformedXML")
    if rule.filter is not None:
        _check_filter(name, rule.filter)
    if not (rule.transitions or rule.expiration or rule.abort_incomplete_multipart_upload_days
            or rule.noncurrent_version_transitions or rule.noncurrent_version_expiration):
        raise LifecycleInvalid(f"{name}: at least one action needs to be specified in a rule")
    preds = rule.predicates()
    if rule.abort_incomplete_multipart_upload_days is not None and preds.tags:
        raise LifecycleInvalid(f"{name}: AbortIncompleteMultipartUpload cannot be specified with Tags")
    _check_transitions(name, rule.transitions)
    exp = rule.expiration
    if exp is not None:
        given = [x for x in (exp.days, exp.date, exp.expired_object_delete_marker) if x is not None]
        if len(given) != 1:
            raise LifecycleInvalid(f"{name}: Expiration takes exactly one of Days, Date or ExpiredObjectDeleteMarker",
                                   "MalformedXML")
        if exp.expired_object_delete_marker is not None and preds.tags:
            raise LifecycleInvalid(f"{name}: ExpiredObjectDeleteMarker cannot be specified with object tags")
        if exp.date is not None and not _is_midnight(exp.date):
            raise LifecycleInvalid(f"{name}: Expiration Date must be at midnight GMT")
        tdays = [t.days for t in rule.transitions if t.days is not None]
        tdates = [t.date for t in rule.transitions if t.date is not None]
        if (exp.days is not None and tdates) or (exp.date is not None and tdays):
            raise LifecycleInvalid(f"{name}: found mixed Date and Days based Expiration and Transition actions")
        if exp.days is not None and tdays and exp.days <= max(tdays):
            raise LifecycleInvalid(f"{name}: Days in the Expiration action ({exp.days}) must be greater than Days in "
                                   f"the Transition action ({max(tdays)})")
        if exp.date is not None and tdates and exp.date <= max(tdates):
            raise LifecycleInvalid(f"{name}: Date in the Expiration action must be later than Date in the "
                                   "Transition action")
    seen_nc: set[str] = set()
    for nt in rule.noncurrent_version_transitions:
        if nt.storage_class not in TRANSITION_CLASSES:
            raise LifecycleInvalid(f"{name}: {nt.storage_class!r} is not a storage class a transition can go to")
        if nt.storage_class in seen_nc:
            raise LifecycleInvalid(f"{name}: two NoncurrentVersionTransitions to {nt.storage_class}")
        seen_nc.add(nt.storage_class)


def _check_filter(name: str, f: RuleFilter) -> None:
    children = [x for x in (f.prefix, f.tag, f.object_size_greater_than, f.object_size_less_than, f.and_)
                if x is not None]
    if len(children) > 1:
        raise LifecycleInvalid(f"{name}: a Filter holds one condition; combine several with And", "MalformedXML")
    if f.and_ is not None:
        a = f.and_
        keys = [t.key for t in a.tags]
        if len(set(keys)) != len(keys):
            dupes = ", ".join(sorted({k for k in keys if keys.count(k) > 1}))
            raise LifecycleInvalid(f"{name}: duplicate tag keys in And: {dupes}")
        gt, lt = a.object_size_greater_than, a.object_size_less_than
        if gt is not None and lt is not None and gt >= lt:
            raise LifecycleInvalid(f"{name}: ObjectSizeGreaterThan ({gt}) must be less than ObjectSizeLessThan ({lt})")


def _check_transitions(name: str, transitions: list[LifecycleTransition]) -> None:
    classes: set[str] = set()
    for t in transitions:
        if t.storage_class not in TRANSITION_CLASSES:
            allowed = ", ".join(sorted(TRANSITION_CLASSES))
            raise LifecycleInvalid(f"{name}: {t.storage_class!r} is not a storage class a transition can go to "
                                   f"({allowed})")
        if t.storage_class in classes:
            raise LifecycleInvalid(f"{name}: two Transitions to {t.storage_class}; one per storage class")
        classes.add(t.storage_class)
        if (t.days is None) == (t.date is None):
            raise LifecycleInvalid(f"{name}: a Transition takes exactly one of Days or Date", "MalformedXML")
        if t.date is not None and not _is_midnight(t.date):
            raise LifecycleInvalid(f"{name}: Transition Date must be at midnight GMT")
    if any(t.days is not None for t in transitions) and any(t.date is not None for t in transitions):
        raise LifecycleInvalid(f"{name}: found mixed Date and Days based Transition actions")
    ordered = sorted(transitions, key=lambda t: class_rank(t.storage_class))
    for warmer, colder in zip(ordered, ordered[1:], strict=False):
        a = warmer.days if warmer.days is not None else warmer.date
        b = colder.days if colder.days is not None else colder.date
        assert a is not None and b is not None
        if b <= a:  # type: ignore[operator]
            what = "Days" if warmer.days is not None else "Date"
            raise LifecycleInvalid(f"{name}: {what} of the Transition to {colder.storage_class} ({_when(b)}) must "
                                   f"come after the Transition to the warmer class {warmer.storage_class} ({_when(a)})")


def class_tier(tiers: Sequence[Tier], bucket: Bucket, storage_class: str) -> Tier | None:
    """The tier that holds objects of ``storage_class`` in this bucket (the gateway's choice), or None."""
    try:
        return catalog_service.tier_for_class(tiers, bucket.tier_id, storage_class)[0]
    except CatalogError:
        return None


def _served(tiers: Sequence[Tier]) -> str:
    return "; ".join(f"{t.name}: {', '.join(t.storage_classes or ['STANDARD'])}" for t in tiers) or "no tiers"


def validate_for_bucket(config: LifecycleConfig, bucket: Bucket, tiers: Sequence[Tier]) -> None:
    """Checks that need the tiers: every target class has a tier, no step cuts a minimum storage duration short.

    Raises LifecycleInvalid with the rule, the step and what would fix it.
    """
    by_id = {t.id: t for t in tiers}
    home = by_id.get(bucket.tier_id)
    for rule in config.rules:
        name = f"rule {rule.id!r}"
        for cls in [t.storage_class for t in rule.transitions] + [
                t.storage_class for t in rule.noncurrent_version_transitions]:
            if class_tier(tiers, bucket, cls) is None:
                raise LifecycleInvalid(
                    f"{name}: transition to {cls}, but no tier of bucket {bucket.name!r} serves that storage class "
                    f"(tiers and their classes: {_served(tiers)})")
        _check_durations(name, rule, bucket, tiers, home)


def _check_durations(name: str, rule: LifecycleRule, bucket: Bucket, tiers: Sequence[Tier], home: Tier | None) -> None:
    """Walk the rule's steps; leaving a tier earlier than its minimum storage duration is refused."""
    plan = _steps(rule)
    if not plan:
        return
    # Days rules start on the bucket's tier at creation; Date rules have no common start day
    current: Tier | None = home if isinstance(plan[0][0], int) else None
    entered: int | datetime | None = 0 if current is not None else None
    current_label = f"the bucket's tier {home.name!r}" if home is not None else ""
    for when, cls in plan:
        target = class_tier(tiers, bucket, cls) if cls is not None else None
        leaving = cls is None or (target is not None and current is not None and target.id != current.id)
        if leaving and current is not None and entered is not None and current.min_storage_days:
            stay = _days_between(entered, when)
            if stay < current.min_storage_days:
                what = f"Transition to {cls}" if cls is not None else "Expiration"
                raise LifecycleInvalid(
                    f"{name}: objects stay on {current_label} (minimum storage duration "
                    f"{current.min_storage_days} days) only {stay} days before the {what} at "
                    f"{_when(when)}; move that step to {_when(_plus(entered, current.min_storage_days))} or later")
        if cls is not None and target is not None and (current is None or target.id != current.id):
            current, entered = target, when
            current_label = f"tier {target.name!r} ({cls})"


def _days_between(a: int | datetime, b: int | datetime) -> int:
    if isinstance(a, int) and isinstance(b, int):
        return b - a
    assert isinstance(a, datetime) and isinstance(b, datetime)
    return (b - a).days


def _plus(a: int | datetime, days: int) -> int | datetime:
    if isinstance(a, int):
        return a + days
    return a + timedelta(days=days)


def _when(v: int | datetime) -> str:
    return f"day {v}" if isinstance(v, int) else v.date().isoformat()


def _steps(rule: LifecycleRule) -> list[tuple[int | datetime, str | None]]:
    """The rule's current-version actions in time order: (days or date, class or None for expiration)."""
    out: list[tuple[int | datetime, str | None]] = []
    for t in sorted(rule.transitions, key=lambda t: class_rank(t.storage_class)):
        when = t.days if t.days is not None else t.date
        assert when is not None
        out.append((when, t.storage_class))
    exp = rule.expiration
    if exp is not None and (exp.days is not None or exp.date is not None):
        when = exp.days if exp.days is not None else exp.date
        assert when is not None
        out.append((when, None))
    return out
