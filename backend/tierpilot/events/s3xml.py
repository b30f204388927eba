"""A bucket's notification configuration in S3's XML (Put/GetBucketNotificationConfiguration) and as stored.

The stored form keeps what the client sent (element kind, ids, event names and filter rule names in their order),
so a configuration reads back as it was set; ``rules`` is what delivery matches against.
"""

from __future__ import annotations

import uuid
from typing import Any
from xml.etree.ElementTree import Element

from defusedxml import ElementTree as SafeET

from tierpilot.events import names

S3_NS = "http://s3.amazonaws.com/doc/2006-03-01/"
_KINDS = {"TopicConfiguration": "Topic", "QueueConfiguration": "Queue", "CloudFunctionConfiguration": "CloudFunction"}
MAX_CONFIGS = 100


class ConfigInvalid(Exception):
    """A configuration S3 refuses (400): ``code`` is S3's error code."""

    def __init__(self, message: str, code: str = "InvalidArgument") -> None:
        super().__init__(message)
        self.message, self.code = message, code


def _local(el: Element) -> str:
    return el.tag.rsplit("}", 1)[-1]


def _text(el: Element) -> str:
    return (el.text or "").strip()


def parse_xml(body: bytes) -> list[dict[str, Any]]:
    """The entries of a NotificationConfiguration document (structure checked, ARNs and events not yet)."""
    try:
        root = SafeET.fromstring(body) if body.strip() else None
    except Exception:  # noqa: BLE001  (defusedxml's and expat's errors alike)
        raise ConfigInvalid("The XML you provided was not well-formed or did not validate against our published "
                            "schema", "MalformedXML") from None
    if root is None or _local(root) != "NotificationConfiguration":
        raise ConfigInvalid("The XML you provided was not well-formed or did not validate against our published "
                            "schema", "MalformedXML")
    entries: list[dict[str, Any]] = []
    for node in root:
        tag = _local(node)
        if tag == "EventBridgeConfiguration":
            raise ConfigInvalid("EventBridge destinations are not supported; name a target's ARN")
        kind = _KINDS.get(tag)
        if kind is None:
            raise ConfigInvalid(f"Unknown element {tag}", "MalformedXML")
        entries.append(_entry(node, kind))
    if len(entries) > MAX_CONFIGS:
        raise ConfigInvalid(f"A notification configuration holds at most {MAX_CONFIGS} destinations")
    return entries


def _entry(node: Element, kind: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"kind": kind, "id": "", "arn": "", "events": [], "filter": []}
    for child in node:
        tag = _local(child)
        if tag == "Id":
            entry["id"] = _text(child)
        elif tag == kind:
            entry["arn"] = _text(child)
        elif tag == "Event":
            entry["events"].append(_text(child))
        elif tag == "Filter":
            entry["filter"] = _filter(child)
        else:
            raise ConfigInvalid(f"Unknown element {tag} in {kind}Configuration", "MalformedXML")
    if not entry["arn"] or not entry["events"]:
        raise ConfigInvalid(f"A {kind}Configuration needs a {kind} and at least one Event", "MalformedXML")
    entry["id"] = entry["id"] or uuid.uuid4().hex
    if len(entry["id"]) > 255:
        raise ConfigInvalid("A configuration Id is at most 255 characters")
    return entry


def _filter(node: Element) -> list[list[str]]:
    rules: list[list[str]] = []
    for key in node:
        if _local(key) != "S3Key":
            raise ConfigInvalid(f"Unknown element {_local(key)} in Filter", "MalformedXML")
        for rule in key:
            if _local(rule) != "FilterRule":
                raise ConfigInvalid(f"Unknown element {_local(rule)} in S3Key", "MalformedXML")
            name = value = None
            for part in rule:
                if _local(part) == "Name":
                    name = _text(part)
                elif _local(part) == "Value":
                    value = part.text or ""
                else:
                    raise ConfigInvalid(f"Unknown element {_local(part)} in FilterRule", "MalformedXML")
            if name is None or name.lower() not in ("prefix", "suffix"):
                raise ConfigInvalid("filter rule name must be either prefix or suffix", "InvalidFilterRuleName")
            if value is None or len(value.encode()) > 1024:
                raise ConfigInvalid("filter rule value must be 0 to 1024 bytes", "InvalidFilterRuleValue")
            if any(r[0].lower() == name.lower() for r in rules):
                raise ConfigInvalid(f"Cannot specify more than one {name.lower()} rule in a filter.",
                                    "InvalidFilterRuleName")
            rules.append([name, value])
    return rules


def rule_of(entry: dict[str, Any], target: str) -> names.Rule:
    """The delivery rule of one stored entry whose ARN names ``target``."""
    events: frozenset[str] = frozenset()
    for pattern in entry["events"]:
        events |= names.covered(pattern)
    prefix = next((v for n, v in entry["filter"] if n.lower() == "prefix"), "")
    suffix = next((v for n, v in entry["filter"] if n.lower() == "suffix"), "")
    return names.Rule(entry["id"], target, events, prefix, suffix)


def to_xml(entries: list[dict[str, Any]]) -> bytes:
    """The stored entries as GetBucketNotificationConfiguration answers them."""
    parts = ['<?xml version="1.0" encoding="UTF-8"?>\n', f'<NotificationConfiguration xmlns="{S3_NS}">']
    for entry in entries:
        kind = entry["kind"]
        parts.append(f"<{kind}Configuration><Id>{_esc(entry['id'])}</Id><{kind}>{_esc(entry['arn'])}</{kind}>")
        parts += [f"<Event>{_esc(e)}</Event>" for e in entry["events"]]
        if entry["filter"]:
            rules = "".join(f"<FilterRule><Name>{_esc(n)}</Name><Value>{_esc(v)}</Value></FilterRule>"
                            for n, v in entry["filter"])
            parts.append(f"<Filter><S3Key>{rules}</S3Key></Filter>")
        parts.append(f"</{kind}Configuration>")
    parts.append("</NotificationConfiguration>")
    return "".join(parts).encode()


def _esc(value: str) -> str:
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
