"""A lifecycle configuration in S3's XML: ``parse_xml`` for PutBucketLifecycleConfiguration, ``to_xml`` for Get.

Parsing is strict (unknown or repeated elements are MalformedXML, as in S3) and hands back a configuration
that passed ``validation.check_structure``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, TypeVar
from xml.etree.ElementTree import Element, SubElement, tostring

from defusedxml import ElementTree as SafeET
from pydantic import ValidationError

from tierpilot.lifecycle.rules import (
    MIN_SIZE_128K,
    MIN_SIZE_VARIES,
    LifecycleConfig,
    LifecycleExpiration,
    LifecycleInvalid,
    LifecycleRule,
    LifecycleTag,
    LifecycleTransition,
    NoncurrentVersionExpiration,
    NoncurrentVersionTransition,
    RuleFilter,
)
from tierpilot.lifecycle.validation import check_structure

T = TypeVar("T")

S3_NS = "http://s3.amazonaws.com/doc/2006-03-01/"


def _local(el: Element) -> str:
    return el.tag.rsplit("}", 1)[-1]


def _text(el: Element) -> str:
    return (el.text or "").strip()


def _int(el: Element) -> int:
    try:
        return int(_text(el))
    except ValueError:
        raise LifecycleInvalid(f"{_local(el)} must be an integer, got {_text(el)!r}", "MalformedXML") from None


def _date(el: Element) -> datetime:
    raw = _text(el)
    try:
        d = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise LifecycleInvalid(f"{_local(el)} must be an ISO 8601 date, got {raw!r}", "MalformedXML") from None
    return d.replace(tzinfo=UTC) if d.tzinfo is None else d.astimezone(UTC)


def _bool(el: Element) -> bool:
    raw = _text(el).lower()
    if raw not in ("true", "false"):
        raise LifecycleInvalid(f"{_local(el)} must be true or false", "MalformedXML")
    return raw == "true"


def _fields(el: Element, allowed: Iterable[str], repeated: Iterable[str] = ()) -> dict[str, list[Element]]:
    allowed_set, repeated_set = set(allowed), set(repeated)
    out: dict[str, list[Element]] = {}
    for child in el:
        name = _local(child)
        if name not in allowed_set:
            raise LifecycleInvalid(f"unexpected element {name} in {_local(el)}", "MalformedXML")
        out.setdefault(name, []).append(child)
        if len(out[name]) > 1 and name not in repeated_set:
            raise LifecycleInvalid(f"element {name} given twice in {_local(el)}", "MalformedXML")
    return out


def _one(fields: dict[str, list[Element]], name: str) -> Element | None:
    got = fields.get(name)
    return got[0] if got else None


def _opt(convert: Callable[[Element], T], fields: dict[str, list[Element]], name: str) -> T | None:
    """The element ``name`` converted, or None when it is absent."""
    el = _one(fields, name)
    return convert(el) if el is not None else None


def _tag(el: Element) -> LifecycleTag:
    f = _fields(el, ("Key", "Value"))
    key = _one(f, "Key")
    if key is None:
        raise LifecycleInvalid("Tag needs a Key", "MalformedXML")
    value = _one(f, "Value")
    return LifecycleTag(key=key.text or "", value=(value.text or "") if value is not None else "")


def _parse_filter(el: Element) -> RuleFilter:
    f = _fields(el, ("Prefix", "Tag", "ObjectSizeGreaterThan", "ObjectSizeLessThan", "And"), ("Tag",))
    out: dict[str, Any] = {}
    if (p := _one(f, "Prefix")) is not None:
        out["prefix"] = p.text or ""
    if f.get("Tag"):
        if len(f["Tag"]) > 1:
            raise LifecycleInvalid("a Filter holds one Tag; combine several with And", "MalformedXML")
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
        raise LifecycleInvalid("a Rule needs Status Enabled or Disabled", "MalformedXML")
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
            raise LifecycleInvalid("a Transition needs a StorageClass", "MalformedXML")
        transitions.append(LifecycleTransition(days=_opt(_int, tf, "Days"), date=_opt(_date, tf, "Date"),
                                               storage_class=_text(sc)))
    out["transitions"] = transitions
    if (exp := _one(f, "Expiration")) is not None:
        ef = _fields(exp, ("Days", "Date", "ExpiredObjectDeleteMarker"))
        out["expiration"] = LifecycleExpiration(
            days=_opt(_int, ef, "Days"), date=_opt(_date, ef, "Date"),
            expired_object_delete_marker=_opt(_bool, ef, "ExpiredObjectDeleteMarker"))
    ncts = []
    for t in f.get("NoncurrentVersionTransition", []):
        tf = _fields(t, ("NoncurrentDays", "StorageClass", "NewerNoncurrentVersions"))
        sc = _one(tf, "StorageClass")
        if sc is None:
            raise LifecycleInvalid("a NoncurrentVersionTransition needs a StorageClass", "MalformedXML")
        ncts.append(NoncurrentVersionTransition(noncurrent_days=_opt(_int, tf, "NoncurrentDays"),
                                                storage_class=_text(sc),
                                                newer_noncurrent_versions=_opt(_int, tf, "NewerNoncurrentVersions")))
    out["noncurrent_version_transitions"] = ncts
    if (nce := _one(f, "NoncurrentVersionExpiration")) is not None:
        nf = _fields(nce, ("NoncurrentDays", "NewerNoncurrentVersions"))
        out["noncurrent_version_expiration"] = NoncurrentVersionExpiration(
            noncurrent_days=_opt(_int, nf, "NoncurrentDays"),
            newer_noncurrent_versions=_opt(_int, nf, "NewerNoncurrentVersions"))
    if (ab := _one(f, "AbortIncompleteMultipartUpload")) is not None:
        af = _fields(ab, ("DaysAfterInitiation",))
        d = _one(af, "DaysAfterInitiation")
        if d is None:
            raise LifecycleInvalid("AbortIncompleteMultipartUpload needs DaysAfterInitiation", "MalformedXML")
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
        raise LifecycleInvalid("the lifecycle configuration is not well-formed XML", "MalformedXML") from None
    if _local(root) != "LifecycleConfiguration":
        raise LifecycleInvalid("the document must be a LifecycleConfiguration", "MalformedXML")
    mode = (min_size_header or MIN_SIZE_128K).strip()
    if mode not in (MIN_SIZE_128K, MIN_SIZE_VARIES):
        raise LifecycleInvalid(f"x-amz-transition-default-minimum-object-size must be {MIN_SIZE_128K} or "
                               f"{MIN_SIZE_VARIES}")
    f = _fields(root, ("Rule",), ("Rule",))
    try:
        config = LifecycleConfig.model_validate({"rules": [_parse_rule(r) for r in f.get("Rule", [])],
                                                 "transition_default_minimum_object_size": mode})
    except ValidationError as exc:
        # a value out of its range (Days 0, an ID over 255 characters) is S3's InvalidArgument; a document
        # that does not fit the schema is MalformedXML
        kind = exc.errors()[0].get("type", "")
        raise LifecycleInvalid(_first_error(exc), "InvalidArgument" if kind in _RANGE_ERRORS else "MalformedXML"
                               ) from None
    return check_structure(config)


_RANGE_ERRORS = frozenset({"greater_than", "greater_than_equal", "less_than", "less_than_equal", "string_too_long"})


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
