"""A bucket's lifecycle configuration as S3 defines it: the model of a configuration and its rules.

The model mirrors S3's XML element for element (``Filter`` with one child or an ``And``, the legacy
rule-level ``Prefix``), so a configuration read back is the one that was written. Its XML form is in
``s3xml``, the checks S3 and the bucket's tiers impose in ``validation``, due dates in ``dates``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from tierpilot.kit.errors import Invalid

MIN_SIZE_128K: Final = "all_storage_classes_128K"
MIN_SIZE_VARIES: Final = "varies_by_storage_class"
MinSizeMode = Literal["all_storage_classes_128K", "varies_by_storage_class"]
# S3's default: objects under 128 KB do not transition (the per-object overhead would cost more)
SMALL_OBJECT_BYTES = 128 * 1024
# with varies_by_storage_class, only these classes accept objects under 128 KB
SMALL_OBJECT_CLASSES = frozenset({"GLACIER", "DEEP_ARCHIVE"})
MAX_ID_CHARS = 255
# Every number a rule carries is bounded where it is parsed: a day count past a century, a date near the
# calendar's end or a size past any object overflows the date and integer arithmetic of the sweep.
MAX_DAYS = 100 * 365
MAX_NEWER_VERSIONS = 100  # S3's own limit on NewerNoncurrentVersions
MAX_OBJECT_SIZE = 2**53
EARLIEST_DATE = datetime(1970, 1, 1, tzinfo=UTC)
LATEST_DATE = datetime(9000, 1, 1, tzinfo=UTC)

# Warm to cold: a transition only ever goes to a colder class (S3's waterfall).
CLASS_ORDER: tuple[str, ...] = (
    "STANDARD", "INTELLIGENT_TIERING", "STANDARD_IA", "ONEZONE_IA", "GLACIER_IR", "GLACIER", "DEEP_ARCHIVE",
)
TRANSITION_CLASSES = frozenset(CLASS_ORDER[1:])
CLASS_RANK = {c: i for i, c in enumerate(CLASS_ORDER)}


def class_rank(storage_class: str) -> int:
    """Coldness of a storage class (0 = STANDARD); unknown classes count as STANDARD."""
    return CLASS_RANK.get(storage_class, 0)


class LifecycleInvalid(Invalid):
    """A configuration S3 would refuse; ``s3_code`` is the error code the gateway answers with."""

    def __init__(self, message: str, s3_code: str = "InvalidArgument") -> None:
        super().__init__(message)
        self.s3_code = s3_code


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class LifecycleTag(_Model):
    key: str = Field(min_length=1, max_length=128)
    value: str = Field("", max_length=256)


class AndOperator(_Model):
    prefix: str | None = None
    tags: list[LifecycleTag] = Field(default_factory=list)
    object_size_greater_than: int | None = Field(None, ge=0, le=MAX_OBJECT_SIZE)
    object_size_less_than: int | None = Field(None, ge=1, le=MAX_OBJECT_SIZE)


class RuleFilter(_Model):
    """S3's ``Filter``: empty (every object) or exactly one of its children."""

    prefix: str | None = None
    tag: LifecycleTag | None = None
    object_size_greater_than: int | None = Field(None, ge=0, le=MAX_OBJECT_SIZE)
    object_size_less_than: int | None = Field(None, ge=1, le=MAX_OBJECT_SIZE)
    and_: AndOperator | None = Field(None, alias="and")


class LifecycleTransition(_Model):
    days: int | None = Field(None, ge=0, le=MAX_DAYS)
    date: datetime | None = Field(None, ge=EARLIEST_DATE, le=LATEST_DATE)
    storage_class: str


class LifecycleExpiration(_Model):
    days: int | None = Field(None, ge=1, le=MAX_DAYS)
    date: datetime | None = Field(None, ge=EARLIEST_DATE, le=LATEST_DATE)
    expired_object_delete_marker: bool | None = None


class NoncurrentVersionTransition(_Model):
    """Moves noncurrent versions of a versioned bucket NoncurrentDays after a newer version replaced them,
    leaving the NewerNoncurrentVersions newest ones where they are."""

    noncurrent_days: int | None = Field(None, ge=0, le=MAX_DAYS)
    storage_class: str
    newer_noncurrent_versions: int | None = Field(None, ge=1, le=MAX_NEWER_VERSIONS)


class NoncurrentVersionExpiration(_Model):
    """Deletes noncurrent versions NoncurrentDays after they became noncurrent (but the NewerNoncurrentVersions
    newest, and versions object lock protects)."""

    noncurrent_days: int | None = Field(None, ge=1, le=MAX_DAYS)
    newer_noncurrent_versions: int | None = Field(None, ge=1, le=MAX_NEWER_VERSIONS)


class LifecycleRule(_Model):
    id: str = Field(default="", max_length=MAX_ID_CHARS)
    status: Literal["Enabled", "Disabled"] = "Enabled"
    filter: RuleFilter | None = None
    prefix: str | None = Field(None, description="legacy rule-level prefix (instead of filter)")
    transitions: list[LifecycleTransition] = Field(default_factory=list)
    expiration: LifecycleExpiration | None = None
    noncurrent_version_transitions: list[NoncurrentVersionTransition] = Field(default_factory=list)
    noncurrent_version_expiration: NoncurrentVersionExpiration | None = None
    abort_incomplete_multipart_upload_days: int | None = Field(None, ge=1, le=MAX_DAYS)

    @property
    def enabled(self) -> bool:
        return self.status == "Enabled"

    def predicates(self) -> Predicates:
        """The rule's filter as plain conditions (prefix, tags, size bounds)."""
        if self.filter is None:
            return Predicates(prefix=self.prefix or "")
        f = self.filter
        if f.and_ is not None:
            a = f.and_
            return Predicates(a.prefix or "", tuple((t.key, t.value) for t in a.tags),
                              a.object_size_greater_than, a.object_size_less_than)
        return Predicates(f.prefix or "", ((f.tag.key, f.tag.value),) if f.tag else (),
                          f.object_size_greater_than, f.object_size_less_than)


class LifecycleConfig(_Model):
    rules: list[LifecycleRule] = Field(default_factory=list)
    transition_default_minimum_object_size: MinSizeMode = MIN_SIZE_128K

    def rule(self, rule_id: str) -> LifecycleRule | None:
        return next((r for r in self.rules if r.id == rule_id), None)


@dataclass(frozen=True)
class Predicates:
    """What an object must satisfy for a rule to apply: key prefix, every tag, size strictly within bounds."""

    prefix: str = ""
    tags: tuple[tuple[str, str], ...] = ()
    size_greater_than: int | None = None
    size_less_than: int | None = None

    @property
    def has_size_filter(self) -> bool:
        return self.size_greater_than is not None or self.size_less_than is not None

    def matches(self, key: str, size: int, tags: Mapping[str, Any] | None) -> bool:
        if not key.startswith(self.prefix):
            return False
        if self.size_greater_than is not None and not size > self.size_greater_than:
            return False
        if self.size_less_than is not None and not size < self.size_less_than:
            return False
        have = tags or {}
        return all(have.get(k) == v for k, v in self.tags)


def small_objects_blocked(config: LifecycleConfig, rule: LifecycleRule, storage_class: str) -> bool:
    """Whether S3's 128 KB default keeps objects under 128 KB from this transition.

    A size filter on the rule takes precedence over the default, as in S3.
    """
    if rule.predicates().has_size_filter:
        return False
    if config.transition_default_minimum_object_size == MIN_SIZE_VARIES:
        return storage_class not in SMALL_OBJECT_CLASSES
    return True
