"""Lifecycle configurations: read, replace, edit one rule, delete; checked against the bucket's tiers.

The gateway (S3 XML) and the API (JSON) both call these, so a rule written by either shows in the other.
Services flush, never commit.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy.orm import Session

from tierpilot.catalog import service as catalog_service
from tierpilot.catalog.errors import CatalogError
from tierpilot.catalog.models import Bucket
from tierpilot.kit.db import utcnow
from tierpilot.kit.errors import NotFound
from tierpilot.lifecycle import repository
from tierpilot.lifecycle.models import LifecycleConfiguration
from tierpilot.lifecycle.rules import (
    LifecycleConfig,
    LifecycleInvalid,
    LifecycleRule,
    check_structure,
    steps,
)
from tierpilot.tiers.models import Tier


class NoSuchLifecycleConfiguration(NotFound):
    s3_code = "NoSuchLifecycleConfiguration"

    def __init__(self, bucket: str) -> None:
        super().__init__("The lifecycle configuration does not exist", BucketName=bucket)


def get_bucket(session: Session, name: str, user_id: int, is_admin: bool) -> Bucket:
    """A bucket the caller may configure (owner or admin); NoSuchBucket / AccessDenied otherwise."""
    bucket = catalog_service.get_bucket(session, name)
    catalog_service.require_access(bucket, user_id, is_admin)
    return bucket


def load(row: LifecycleConfiguration) -> LifecycleConfig:
    return LifecycleConfig.model_validate({
        "rules": row.rules, "transition_default_minimum_object_size": row.transition_default_minimum_object_size})


def get_config(session: Session, bucket: Bucket) -> LifecycleConfig | None:
    row = repository.get_configuration(session, bucket.id)
    return load(row) if row is not None else None


def require_config(session: Session, bucket: Bucket) -> LifecycleConfig:
    config = get_config(session, bucket)
    if config is None:
        raise NoSuchLifecycleConfiguration(bucket.name)
    return config


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
    plan = steps(rule)
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
    from datetime import timedelta

    return a + timedelta(days=days)


def _when(v: int | datetime) -> str:
    return f"day {v}" if isinstance(v, int) else v.date().isoformat()


def check(session: Session, bucket: Bucket, config: LifecycleConfig) -> LifecycleConfig:
    """A configuration as it would be stored (IDs filled in), or LifecycleInvalid; changes nothing."""
    config = check_structure(config)
    validate_for_bucket(config, bucket, repository.list_tiers(session))
    return config


def put_config(session: Session, bucket: Bucket, config: LifecycleConfig, actor: str = "") -> LifecycleConfig:
    """Replace the bucket's configuration (as PutBucketLifecycleConfiguration)."""
    config = check(session, bucket, config)
    row = repository.get_configuration(session, bucket.id, for_update=True)
    rules = [r.model_dump(mode="json", by_alias=True, exclude_none=False) for r in config.rules]
    if row is None:
        row = LifecycleConfiguration(bucket_id=bucket.id)
        session.add(row)
    row.rules = rules
    row.transition_default_minimum_object_size = config.transition_default_minimum_object_size
    row.updated_at = utcnow()
    row.updated_by = actor[:64]
    session.flush()
    return config


def delete_config(session: Session, bucket: Bucket) -> bool:
    """Remove the bucket's configuration (DeleteBucketLifecycle: succeeds when there is none)."""
    deleted = repository.delete_configuration(session, bucket.id)
    session.flush()
    return deleted


def put_rule(session: Session, bucket: Bucket, rule: LifecycleRule, actor: str = "", replace_id: str | None = None
             ) -> LifecycleConfig:
    """Add a rule, or replace the rule ``replace_id`` (its position kept); the whole set is checked again."""
    current = get_config(session, bucket) or LifecycleConfig()
    rules = list(current.rules)
    if replace_id is not None:
        index = next((i for i, r in enumerate(rules) if r.id == replace_id), None)
        if index is None:
            raise NotFound(f"bucket {bucket.name!r} has no lifecycle rule {replace_id!r}")
        rules[index] = rule
    else:
        rules.append(rule)
    return put_config(session, bucket, current.model_copy(update={"rules": rules}), actor)


def delete_rule(session: Session, bucket: Bucket, rule_id: str, actor: str = "") -> LifecycleConfig | None:
    """Remove one rule; removing the last one removes the configuration (S3 has no empty configuration)."""
    current = require_config(session, bucket)
    rules = [r for r in current.rules if r.id != rule_id]
    if len(rules) == len(current.rules):
        raise NotFound(f"bucket {bucket.name!r} has no lifecycle rule {rule_id!r}")
    if not rules:
        delete_config(session, bucket)
        return None
    return put_config(session, bucket, current.model_copy(update={"rules": rules}), actor)
