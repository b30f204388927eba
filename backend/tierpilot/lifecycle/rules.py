"""A bucket's lifecycle configuration as S3 defines it: the model, its XML form and its own consistency.

The model mirrors S3's XML element for element (``Filter`` with one child or an ``And``, the legacy
rule-level ``Prefix``), so a configuration read back is the one that was written. Checks that need the
bucket's tiers (a class without a tier, minimum storage durations) live in ``service.validate_for_bucket``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal
from xml.etree.ElementTree import Element, SubElement, tostring

from defusedxml import ElementTree as SafeET
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tierpilot.kit.errors import Invalid

S3_NS = "http://s3.amazonaws.com/doc/2006-03-01/"
MIN_SIZE_128K: Final = "all_storage_classes_128K"
MIN_SIZE_VARIES: Final = "varies_by_storage_class"
MinSizeMode = Literal["all_storage_classes_128K", "varies_by_storage_class"]
# S3's default: objects under 128 KB do not transition (the per-object overhead would cost more)
SMALL_OBJECT_BYTES = 128 * 1024
# with varies_by_storage_class, only these classes accept objects under 128 KB
SMALL_OBJECT_CLASSES = frozenset({"GLACIER", "DEEP_ARCHIVE"})
MAX_RULES = 1000
MAX_ID_CHARS = 255

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
    object_size_greater_than: int | None = Field(None, ge=0)
    object_size_less_than: int | None = Field(None, ge=1)


class RuleFilter(_Model):
    """S3's ``Filter``: empty (every object) or exactly one of its children."""

    prefix: str | None = None
    tag: LifecycleTag | None = None
    object_size_greater_than: int | None = Field(None, ge=0)
    object_size_less_than: int | None = Field(None, ge=1)
    and_: AndOperator | None = Field(None, alias="and")


class LifecycleTransition(_Model):
    days: int | None = Field(None, ge=0, le=100 * 365)
    date: datetime | None = None
    storage_class: str


class LifecycleExpiration(_Model):
    days: int | None = Field(None, ge=1, le=100 * 365)
    date: datetime | None = None
    expired_object_delete_marker: bool | None = None


class NoncurrentVersionTransition(_Model):
    """Accepted and returned as S3 does; buckets here are unversioned, so it never applies."""

    noncurrent_days: int | None = Field(None, ge=0)
    storage_class: str
    newer_noncurrent_versions: int | None = Field(None, ge=1)


class NoncurrentVersionExpiration(_Model):
    """Accepted and returned as S3 does; buckets here are unversioned, so it never applies."""

    noncurrent_days: int | None = Field(None, ge=1)
    newer_noncurrent_versions: int | None = Field(None, ge=1)


class LifecycleRule(_Model):
    id: str = Field(default="", max_length=MAX_ID_CHARS)
    status: Literal["Enabled", "Disabled"] = "Enabled"
    filter: RuleFilter | None = None
    prefix: str | None = Field(None, description="legacy rule-level prefix (instead of filter)")
    transitions: list[LifecycleTransition] = Field(default_factory=list)
    expiration: LifecycleExpiration | None = None
    noncurrent_version_transitions: list[NoncurrentVersionTransition] = Field(default_factory=list)
    noncurrent_version_expiration: NoncurrentVersionExpiration | None = None
    abort_incomplete_multipart_upload_days: int | None = Field(None, ge=1)

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

    def matches(self, key: str, size: int, tags: dict[str, Any] | None) -> bool:
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


# ------------------------------------------------------------------------------------------ structure


def _fail(message: str, code: str = "InvalidArgument") -> LifecycleInvalid:
    return LifecycleInvalid(message, code)


def _is_midnight(d: datetime) -> bool:
    d = d.astimezone(UTC)
    return (d.hour, d.minute, d.second, d.microsecond) == (0, 0, 0, 0)


def check_structure(config: LifecycleConfig) -> LifecycleConfig:
    """S3's own checks on a configuration (no tiers needed); fills in missing rule IDs. Raises LifecycleInvalid."""
    if not config.rules:
        raise _fail("a lifecycle configuration needs at least one rule", "MalformedXML")
    if len(config.rules) > MAX_RULES:
        raise _fail(f"a lifecycle configuration holds at most {MAX_RULES} rules")
    rules: list[LifecycleRule] = []
    seen: set[str] = set()
    for rule in config.rules:
        if not rule.id:
            # S3 assigns an ID to a rule without one; it is stable from here on
            rule = rule.model_copy(update={"id": uuid.uuid4().hex[:16]})
        if rule.id in seen:
            raise _fail(f"Rule ID must be unique. Found same ID for more than one rule: {rule.id!r}")
        seen.add(rule.id)
        _check_rule(rule)
        rules.append(rule)
    return config.model_copy(update={"rules": rules})


def _check_rule(rule: LifecycleRule) -> None:
    name = f"rule {rule.id!r}"
    if rule.filter is not None and rule.prefix is not None:
        raise _fail(f"{name}: give either Filter or the legacy Prefix, not both", "MalformedXML")
    if rule.filter is None and rule.prefix is None:
        raise _fail(f"{name}: a rule needs a Filter (an empty Filter applies to every object)", "MalformedXML")
    if rule.filter is not None:
        _check_filter(name, rule.filter)
    if not (rule.transitions or rule.expiration or rule.abort_incomplete_multipart_upload_days
            or rule.noncurrent_version_transitions or rule.noncurrent_version_expiration):
        raise _fail(f"{name}: at least one action needs to be specified in a rule")
    preds = rule.predicates()
    if rule.abort_incomplete_multipart_upload_days is not None and preds.tags:
        raise _fail(f"{name}: AbortIncompleteMultipartUpload cannot be specified with Tags")
    _check_transitions(name, rule.transitions)
    exp = rule.expiration
    if exp is not None:
        given = [x for x in (exp.days, exp.date, exp.expired_object_delete_marker) if x is not None]
        if len(given) != 1:
            raise _fail(f"{name}: Expiration takes exactly one of Days, Date or ExpiredObjectDeleteMarker",
                        "MalformedXML")
        if exp.expired_object_delete_marker is not None and preds.tags:
            raise _fail(f"{name}: ExpiredObjectDeleteMarker cannot be specified with object tags")
        if exp.date is not None and not _is_midnight(exp.date):
            raise _fail(f"{name}: Expiration Date must be at midnight GMT")
        tdays = [t.days for t in rule.transitions if t.days is not None]
        tdates = [t.date for t in rule.transitions if t.date is not None]
        if (exp.days is not None and tdates) or (exp.date is not None and tdays):
            raise _fail(f"{name}: found mixed Date and Days based Expiration and Transition actions")
        if exp.days is not None and tdays and exp.days <= max(tdays):
            raise _fail(f"{name}: Days in the Expiration action ({exp.days}) must be greater than Days in "
                        f"the Transition action ({max(tdays)})")
        if exp.date is not None and tdates and exp.date <= max(tdates):
            raise _fail(f"{name}: Date in the Expiration action must be later than Date in the Transition action")
    seen_nc: set[str] = set()
    for nt in rule.noncurrent_version_transitions:
        if nt.storage_class not in TRANSITION_CLASSES:
            raise _fail(f"{name}: {nt.storage_class!r} is not a storage class a transition can go to")
        if nt.storage_class in seen_nc:
            raise _fail(f"{name}: two NoncurrentVersionTransitions to {nt.storage_class}")
        seen_nc.add(nt.storage_class)


def _check_filter(name: str, f: RuleFilter) -> None:
    children = [x for x in (f.prefix, f.tag, f.object_size_greater_than, f.object_size_less_than, f.and_)
                if x is not None]
    if len(children) > 1:
        raise _fail(f"{name}: a Filter holds one condition; combine several with And", "MalformedXML")
    if f.and_ is not None:
        a = f.and_
        keys = [t.key for t in a.tags]
        if len(set(keys)) != len(keys):
            dupes = ", ".join(sorted({k for k in keys if keys.count(k) > 1}))
            raise _fail(f"{name}: duplicate tag keys in And: {dupes}")
        gt, lt = a.object_size_greater_than, a.object_size_less_than
        if gt is not None and lt is not None and gt >= lt:
            raise _fail(f"{name}: ObjectSizeGreaterThan ({gt}) must be less than ObjectSizeLessThan ({lt})")


def _check_transitions(name: str, transitions: list[LifecycleTransition]) -> None:
    classes: set[str] = set()
    for t in transitions:
        if t.storage_class not in TRANSITION_CLASSES:
            allowed = ", ".join(sorted(TRANSITION_CLASSES))
            raise _fail(f"{name}: {t.storage_class!r} is not a storage class a transition can go to ({allowed})")
        if t.storage_class in classes:
            raise _fail(f"{name}: two Transitions to {t.storage_class}; one per storage class")
        classes.add(t.storage_class)
        if (t.days is None) == (t.date is None):
            raise _fail(f"{name}: a Transition takes exactly one of Days or Date", "MalformedXML")
        if t.date is not None and not _is_midnight(t.date):
            raise _fail(f"{name}: Transition Date must be at midnight GMT")
    if any(t.days is not None for t in transitions) and any(t.date is not None for t in transitions):
        raise _fail(f"{name}: found mixed Date and Days based Transition actions")
    ordered = sorted(transitions, key=lambda t: class_rank(t.storage_class))
    for warmer, colder in zip(ordered, ordered[1:], strict=False):
        a = warmer.days if warmer.days is not None else warmer.date
        b = colder.days if colder.days is not None else colder.date
        assert a is not None and b is not None
        if b <= a:  # type: ignore[operator]
            what = "Days" if warmer.days is not None else "Date"
            raise _fail(f"{name}: {what} of the Transition to {colder.storage_class} ({_show(b)}) must come after "
                        f"the Transition to the warmer class {warmer.storage_class} ({_show(a)})")


def _show(v: int | datetime) -> str:
    return f"day {v}" if isinstance(v, int) else v.date().isoformat()


def steps(rule: LifecycleRule) -> list[tuple[int | datetime, str | None]]:
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


# ------------------------------------------------------------------------------------------ XML

def _q(tag: str) -> str:
    return f"{{{S3_NS}}}{tag}"


def _local(el: Element) -> str:
    return el.tag.rsplit("}", 1)[-1]


def _children(el: Element) -> list[Element]:
    return list(el)


def _text(el: Element) -> str:
    return (el.text or "").strip()


def _int(el: Element) -> int:
    try:
        return int(_text(el))
    except ValueError:
        raise _fail(f"{_local(el)} must be an integer, got {_text(el)!r}", "MalformedXML") from None


def _date(el: Element) -> datetime:
    raw = _text(el)
    try:
        d = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise _fail(f"{_local(el)} must be an ISO 8601 date, got {raw!r}", "MalformedXML") from None
    return d.replace(tzinfo=UTC) if d.tzinfo is None else d.astimezone(UTC)


def _bool(el: Element) -> bool:
    raw = _text(el).lower()
    if raw not in ("true", "false"):
        raise _fail(f"{_local(el)} must be true or false", "MalformedXML")
    return raw == "true"


def _fields(el: Element, allowed: Iterable[str], repeated: Iterable[str] = ()) -> dict[str, list[Element]]:
    allowed_set, repeated_set = set(allowed), set(repeated)
    out: dict[str, list[Element]] = {}
    for child in _children(el):
        name = _local(child)
        if name not in allowed_set:
            raise _fail(f"unexpected element {name} in {_local(el)}", "MalformedXML")
        out.setdefault(name, []).append(child)
        if len(out[name]) > 1 and name not in repeated_set:
            raise _fail(f"element {name} given twice in {_local(el)}", "MalformedXML")
    return out


def _one(fields: dict[str, list[Element]], name: str) -> Element | None:
    got = fields.get(name)
    return got[0] if got else None


def _tag(el: Element) -> LifecycleTag:
    f = _fields(el, ("Key", "Value"))
    key = _one(f, "Key")
    if key is None:
        raise _fail("Tag needs a Key", "MalformedXML")
    value = _one(f, "Value")
    return LifecycleTag(key=key.text or "", value=(value.text or "") if value is not None else "")


def _parse_filter(el: Element) -> RuleFilter:
    f = _fields(el, ("Prefix", "Tag", "ObjectSizeGreaterThan", "ObjectSizeLessThan", "And"), ("Tag",))
    out: dict[str, Any] = {}
    if (p := _one(f, "Prefix")) is not None:
        out["prefix"] = p.text or ""
    if f.get("Tag"):
        if len(f["Tag"]) > 1:
            raise _fail("a Filter holds one Tag; combine several with And", "MalformedXML")
        out["tag"] = _tag(f["Tag"][0])
    if (g := _one(f, "ObjectSizeGreaterThan")) is not None:
        out["object_size_greater_than"] = _int(g)
    if (lt := _one(f, "ObjectSizeLessThan")) is not None:
        out["object_size_less_than"] = _int(lt)
    if (a := _one(f, "And")) is not None:
        af = _fields(a, ("Prefix", "Tag", "ObjectSizeGreaterThan", "ObjectSizeLessThan"), ("Tag",))
        and_: dict[str, Any] = {"tags": [_tag(t) for t in af.get("Tag", [])]}
        if (p := _one(af, "Prefix")) is not None:
            and_["prefix"] = p.text or ""
        if (g := _one(af, "ObjectSizeGreaterThan")) is not None:
            and_["object_size_greater_than"] = _int(g)
        if (lt := _one(af, "ObjectSizeLessThan")) is not None:
            and_["object_size_less_than"] = _int(lt)
        out["and_"] = and_
    return RuleFilter.model_validate(out)


def _parse_rule(el: Element) -> LifecycleRule:
    f = _fields(el, ("ID", "Status", "Filter", "Prefix", "Transition", "Expiration", "NoncurrentVersionTransition",
                     "NoncurrentVersionExpiration", "AbortIncompleteMultipartUpload"),
                ("Transition", "NoncurrentVersionTransition"))
    out: dict[str, Any] = {}
    if (rid := _one(f, "ID")) is not None:
        out["id"] = rid.text or ""
    status = _one(f, "Status")
    if status is None or _text(status) not in ("Enabled", "Disabled"):
        raise _fail("a Rule needs Status Enabled or Disabled", "MalformedXML")
    out["status"] = _text(status)
    if (flt := _one(f, "Filter")) is not None:
        out["filter"] = _parse_filter(flt)
    if (p := _one(f, "Prefix")) is not None:
        out["prefix"] = p.text or ""
    transitions = []
    for t in f.get("Transition", []):
        tf = _fields(t, ("Days", "Date", "StorageClass"))
        sc = _one(tf, "StorageClass")
        if sc is None:
            raise _fail("a Transition needs a StorageClass", "MalformedXML")
        days, date = _one(tf, "Days"), _one(tf, "Date")
        transitions.append(LifecycleTransition(days=_int(days) if days is not None else None,
                                      date=_date(date) if date is not None else None, storage_class=_text(sc)))
    out["transitions"] = transitions
    if (exp := _one(f, "Expiration")) is not None:
        ef = _fields(exp, ("Days", "Date", "ExpiredObjectDeleteMarker"))
        days, date, marker = _one(ef, "Days"), _one(ef, "Date"), _one(ef, "ExpiredObjectDeleteMarker")
        out["expiration"] = LifecycleExpiration(days=_int(days) if days is not None else None,
                                       date=_date(date) if date is not None else None,
                                       expired_object_delete_marker=_bool(marker) if marker is not None else None)
    ncts = []
    for t in f.get("NoncurrentVersionTransition", []):
        tf = _fields(t, ("NoncurrentDays", "StorageClass", "NewerNoncurrentVersions"))
        sc = _one(tf, "StorageClass")
        if sc is None:
            raise _fail("a NoncurrentVersionTransition needs a StorageClass", "MalformedXML")
        nd, nv = _one(tf, "NoncurrentDays"), _one(tf, "NewerNoncurrentVersions")
        ncts.append(NoncurrentVersionTransition(noncurrent_days=_int(nd) if nd is not None else None,
                                                storage_class=_text(sc),
                                                newer_noncurrent_versions=_int(nv) if nv is not None else None))
    out["noncurrent_version_transitions"] = ncts
    if (nce := _one(f, "NoncurrentVersionExpiration")) is not None:
        nf = _fields(nce, ("NoncurrentDays", "NewerNoncurrentVersions"))
        nd, nv = _one(nf, "NoncurrentDays"), _one(nf, "NewerNoncurrentVersions")
        out["noncurrent_version_expiration"] = NoncurrentVersionExpiration(
            noncurrent_days=_int(nd) if nd is not None else None,
            newer_noncurrent_versions=_int(nv) if nv is not None else None)
    if (ab := _one(f, "AbortIncompleteMultipartUpload")) is not None:
        af = _fields(ab, ("DaysAfterInitiation",))
        d = _one(af, "DaysAfterInitiation")
        if d is None:
            raise _fail("AbortIncompleteMultipartUpload needs DaysAfterInitiation", "MalformedXML")
        out["abort_incomplete_multipart_upload_days"] = _int(d)
    return LifecycleRule.model_validate(out)


def parse_xml(body: bytes, min_size_header: str | None = None) -> LifecycleConfig:
    """A ``LifecycleConfiguration`` document (and the x-amz-transition-default-minimum-object-size header).

    Raises LifecycleInvalid (MalformedXML for what does not parse or fit the schema, InvalidArgument for
    a configuration S3 would refuse).
    """
    try:
        root = SafeET.fromstring(body)
    except Exception:  # defusedxml raises several types for bad, hostile or empty input
        raise _fail("the lifecycle configuration is not well-formed XML", "MalformedXML") from None
    if _local(root) != "LifecycleConfiguration":
        raise _fail("the document must be a LifecycleConfiguration", "MalformedXML")
    mode = (min_size_header or MIN_SIZE_128K).strip()
    if mode not in (MIN_SIZE_128K, MIN_SIZE_VARIES):
        raise _fail(f"x-amz-transition-default-minimum-object-size must be {MIN_SIZE_128K} or {MIN_SIZE_VARIES}")
    f = _fields(root, ("Rule",), ("Rule",))
    try:
        config = LifecycleConfig.model_validate({"rules": [_parse_rule(r) for r in f.get("Rule", [])],
                                                 "transition_default_minimum_object_size": mode})
    except ValidationError as exc:
        raise _fail(_first_error(exc), "MalformedXML") from None
    return check_structure(config)


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err.get("loc", ()))
    return f"{loc}: {err.get('msg')}" if loc else str(err.get("msg"))


def _el(parent: Element, tag: str, text: str | None = None) -> Element:
    child = SubElement(parent, tag)
    if text is not None:
        child.text = text
    return child


def _xml_date(d: datetime) -> str:
    return d.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _xml_tag(parent: Element, tag: LifecycleTag) -> None:
    el = _el(parent, "Tag")
    _el(el, "Key", tag.key)
    _el(el, "Value", tag.value)


def to_xml(config: LifecycleConfig) -> bytes:
    """The configuration as S3 answers GetBucketLifecycleConfiguration (the size mode goes in a header)."""
    root = Element("LifecycleConfiguration", xmlns=S3_NS)
    for rule in config.rules:
        r = _el(root, "Rule")
        if rule.expiration is not None:
            e = _el(r, "Expiration")
            exp = rule.expiration
            if exp.date is not None:
                _el(e, "Date", _xml_date(exp.date))
            if exp.days is not None:
                _el(e, "Days", str(exp.days))
            if exp.expired_object_delete_marker is not None:
                _el(e, "ExpiredObjectDeleteMarker", "true" if exp.expired_object_delete_marker else "false")
        _el(r, "ID", rule.id)
        if rule.prefix is not None:
            _el(r, "Prefix", rule.prefix)
        if rule.filter is not None:
            _xml_filter(_el(r, "Filter"), rule.filter)
        _el(r, "Status", rule.status)
        for t in rule.transitions:
            te = _el(r, "Transition")
            if t.date is not None:
                _el(te, "Date", _xml_date(t.date))
            if t.days is not None:
                _el(te, "Days", str(t.days))
            _el(te, "StorageClass", t.storage_class)
        for nt in rule.noncurrent_version_transitions:
            te = _el(r, "NoncurrentVersionTransition")
            if nt.noncurrent_days is not None:
                _el(te, "NoncurrentDays", str(nt.noncurrent_days))
            _el(te, "StorageClass", nt.storage_class)
            if nt.newer_noncurrent_versions is not None:
                _el(te, "NewerNoncurrentVersions", str(nt.newer_noncurrent_versions))
        if rule.noncurrent_version_expiration is not None:
            ne = _el(r, "NoncurrentVersionExpiration")
            nce = rule.noncurrent_version_expiration
            if nce.noncurrent_days is not None:
                _el(ne, "NoncurrentDays", str(nce.noncurrent_days))
            if nce.newer_noncurrent_versions is not None:
                _el(ne, "NewerNoncurrentVersions", str(nce.newer_noncurrent_versions))
        if rule.abort_incomplete_multipart_upload_days is not None:
            ab = _el(r, "AbortIncompleteMultipartUpload")
            _el(ab, "DaysAfterInitiation", str(rule.abort_incomplete_multipart_upload_days))
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + tostring(root, encoding="unicode").encode("utf-8")


def _xml_filter(el: Element, f: RuleFilter) -> None:
    if f.prefix is not None:
        _el(el, "Prefix", f.prefix)
    if f.tag is not None:
        _xml_tag(el, f.tag)
    if f.object_size_greater_than is not None:
        _el(el, "ObjectSizeGreaterThan", str(f.object_size_greater_than))
    if f.object_size_less_than is not None:
        _el(el, "ObjectSizeLessThan", str(f.object_size_less_than))
    if f.and_ is not None:
        a = _el(el, "And")
        if f.and_.prefix is not None:
            _el(a, "Prefix", f.and_.prefix)
        for t in f.and_.tags:
            _xml_tag(a, t)
        if f.and_.object_size_greater_than is not None:
            _el(a, "ObjectSizeGreaterThan", str(f.and_.object_size_greater_than))
        if f.and_.object_size_less_than is not None:
            _el(a, "ObjectSizeLessThan", str(f.and_.object_size_less_than))


# ------------------------------------------------------------------------------------------ due dates

DAY = timedelta(days=1)


def midnight(t: datetime) -> datetime:
    """The UTC midnight at or before ``t``."""
    t = t.astimezone(UTC)
    return t.replace(hour=0, minute=0, second=0, microsecond=0)


def due_at(created_at: datetime, days: int) -> datetime:
    """When a Days action falls due: creation + days, rounded up to the next midnight UTC (as S3)."""
    t = created_at.astimezone(UTC) + days * DAY
    m = midnight(t)
    return m if m == t else m + DAY


def created_threshold(now: datetime, days: int | None, date: datetime | None) -> datetime | None:
    """The latest creation time for which an action is due at ``now`` (None: nothing is due yet).

    ``due_at(c, days) <= now`` holds exactly when ``c <= midnight(now) - days``; a Date action applies to
    every object (whenever created) once the date has passed, as in S3.
    """
    if days is not None:
        return midnight(now) - days * DAY
    assert date is not None
    return now if date <= now else None
