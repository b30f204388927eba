"""Lifecycle configurations: read, replace, edit one rule, delete; checked against the bucket's tiers.

The gateway (S3 XML) and the API (JSON) both call these, so a rule written by either shows in the other.
Services flush, never commit.
"""

from __future__ import annotations

from collections.abc import Container

from pydantic import ValidationError
from sqlalchemy.orm import Session

from tierpilot.catalog import repository as catalog_repository
from tierpilot.catalog.models import Bucket
from tierpilot.kit.db import utcnow
from tierpilot.kit.errors import NotFound
from tierpilot.lifecycle import repository
from tierpilot.lifecycle.models import LifecycleConfiguration
from tierpilot.lifecycle.rules import LifecycleConfig, LifecycleInvalid, LifecycleRule
from tierpilot.lifecycle.validation import check_structure, validate_for_bucket
from tierpilot.tiers import repository as tiers_repository


class NoSuchLifecycleConfiguration(NotFound):
    s3_code = "NoSuchLifecycleConfiguration"

    def __init__(self, bucket: str) -> None:
        super().__init__("The lifecycle configuration does not exist", BucketName=bucket)


class StoredConfigurationInvalid(LifecycleInvalid):
    """A stored configuration today's checks refuse (saved before a bound existed): it is not run."""


def load(row: LifecycleConfiguration) -> LifecycleConfig:
    """The stored configuration; StoredConfigurationInvalid when it no longer passes the model's bounds."""
    try:
        return LifecycleConfig.model_validate({
            "rules": row.rules, "transition_default_minimum_object_size": row.transition_default_minimum_object_size})
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err.get("loc", ()))
        raise StoredConfigurationInvalid(
            f"the stored lifecycle configuration is no longer valid ({where}: {err.get('msg')}); it is not run "
            "until its owner replaces or deletes it") from None


def configured_buckets(session: Session, bucket_id: int | None = None
                       ) -> list[tuple[Bucket, LifecycleConfiguration]]:
    """Every bucket with a stored configuration (or the given one, if it has one), by bucket name."""
    rows = {c.bucket_id: c for c in repository.configurations(session, bucket_id)}
    if not rows:
        return []
    return [(b, rows[b.id]) for b in catalog_repository.buckets_by_id(session, rows)]


def usable_configurations(session: Session, bucket_ids: Container[int]) -> list[tuple[Bucket, LifecycleConfig]]:
    """The configurations of these buckets that can run; one that no longer loads is left out."""
    out = []
    for bucket, row in configured_buckets(session):
        if bucket.id not in bucket_ids:
            continue
        try:
            out.append((bucket, load(row)))
        except StoredConfigurationInvalid:
            continue
    return out


def get_config(session: Session, bucket: Bucket) -> LifecycleConfig | None:
    row = repository.get_configuration(session, bucket.id)
    return load(row) if row is not None else None


def require_config(session: Session, bucket: Bucket) -> LifecycleConfig:
    config = get_config(session, bucket)
    if config is None:
        raise NoSuchLifecycleConfiguration(bucket.name)
    return config


def check(session: Session, bucket: Bucket, config: LifecycleConfig) -> LifecycleConfig:
    """A configuration as it would be stored (IDs filled in), or LifecycleInvalid; changes nothing."""
    config = check_structure(config)
    validate_for_bucket(config, bucket, tiers_repository.list_tiers(session))
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
