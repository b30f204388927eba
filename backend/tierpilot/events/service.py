"""Event targets (admin) and buckets' notification configurations: validation and storage."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from sqlalchemy.orm import Session

from tierpilot.catalog.models import Bucket
from tierpilot.events import names, repository
from tierpilot.events.models import EventTarget
from tierpilot.events.s3xml import ConfigInvalid, rule_of
from tierpilot.eventsinks import SINK_TYPES, Settings
from tierpilot.kit.crypto import decrypt, encrypt
from tierpilot.kit.db import utcnow
from tierpilot.kit.errors import Conflict, Invalid, NotFound
from tierpilot.kit.outbound import Policy
from tierpilot.notifications import service as notifications

_SCHEMES = {"webhook": ("http", "https"), "amqp": ("amqp", "amqps"), "mqtt": ("mqtt", "mqtts", "tcp"),
            "nats": ("nats", "tls"), "redis": ("redis", "rediss")}


@dataclass(frozen=True)
class NewTarget:
    """A target just added: the row and, for a webhook, its signing secret (shown this once)."""

    target: EventTarget
    secret: str | None = None
    arn: str = field(default="")


def _shown(url: str) -> str:
    """The URL without its password (listings and the dashboard show this)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def add_target(session: Session, name: str, type_: str, url: str, topic: str = "",
               options: dict[str, Any] | None = None, policy: Policy | None = None) -> NewTarget:
    """A new target; its connection settings are stored encrypted. A webhook URL must pass the outbound guard."""
    if not names.TARGET_NAME.fullmatch(name):
        raise Invalid("name: 1-64 letters, digits, '-' or '_'")
    if type_ not in SINK_TYPES:
        raise Invalid(f"type: one of {', '.join(SINK_TYPES)}")
    scheme = urlsplit(url).scheme.lower()
    if scheme not in _SCHEMES[type_]:
        raise Invalid(f"url: a {type_} target's URL starts with {' or '.join(s + '://' for s in _SCHEMES[type_])}")
    if type_ == "webhook":
        notifications.validate_webhook_url(url, policy)
    elif not topic:
        raise Invalid(f"topic: a {type_} target needs a topic (routing key, MQTT topic, subject or stream)")
    if repository.target_by_name(session, name) is not None:
        raise Conflict(f"there is already a target named {name!r}")
    secret = "whsec_" + secrets.token_urlsafe(32) if type_ == "webhook" else ""
    sealed = encrypt(json.dumps({"url": url, "topic": topic, "secret": secret, "options": options or {}}))
    now = utcnow()
    target = repository.add_target(session, EventTarget(name=name, type=type_, sealed=sealed, shown_url=_shown(url),
                                                        topic=topic, created_at=now, updated_at=now))
    return NewTarget(target, secret or None, names.arn(name, type_))


def settings_of(target: EventTarget) -> Settings:
    """A target's connection settings, decrypted."""
    plain = json.loads(decrypt(target.sealed))
    return Settings(type=target.type, url=plain["url"], topic=plain.get("topic", ""), secret=plain.get("secret", ""),
                    options=plain.get("options") or {})


def list_targets(session: Session) -> list[EventTarget]:
    return repository.list_targets(session)


def get_target(session: Session, name: str) -> EventTarget:
    target = repository.target_by_name(session, name)
    if target is None:
        raise NotFound(f"no event target named {name!r}")
    return target


def delete_target(session: Session, name: str) -> None:
    """Remove a target no bucket's configuration names (its queued events and dead letters go with it)."""
    target = get_target(session, name)
    for bucket_id, entries in repository.all_configs(session):
        if any(names.parse_arn(e["arn"]) == (target.name, target.type) for e in entries):
            raise Conflict(f"target {name!r} is named by the notification configuration of bucket id {bucket_id}")
    repository.delete_target(session, target.id)


# configurations ----------------------------------------------------------------------------------------


def validate_entries(session: Session, entries: list[dict[str, Any]]) -> list[names.Rule]:
    """The rules of a configuration, or ConfigInvalid with S3's code: unknown ARN or event, repeated id,
    overlapping filters on one destination."""
    targets = {(t.name, t.type) for t in repository.list_targets(session)}
    rules: list[names.Rule] = []
    ids: set[str] = set()
    for entry in entries:
        parsed = names.parse_arn(entry["arn"])
        if parsed is None or parsed not in targets:
            raise ConfigInvalid(f"Unable to validate the following destination configurations: {entry['arn']} "
                                "(not a target an admin configured)")
        for event in entry["events"]:
            if event not in names.CONFIGURABLE:
                raise ConfigInvalid(f"The event '{event}' is not supported for notifications")
        if entry["id"] in ids:
            raise ConfigInvalid(f"Configuration Id {entry['id']!r} is used twice")
        ids.add(entry["id"])
        rule = rule_of(entry, parsed[0])
        for other in rules:
            if other.target == rule.target and names.filters_overlap(rule, other):
                raise ConfigInvalid("Configurations overlap. Configurations on the same notification destination "
                                    "cannot share a common event type.")
        rules.append(rule)
    return rules


def put_config(session: Session, bucket: Bucket, entries: list[dict[str, Any]]) -> None:
    """Replace the bucket's configuration (an empty one removes it); nothing changes when it is refused."""
    validate_entries(session, entries)
    if entries:
        repository.put_config(session, bucket.id, entries, utcnow())
    else:
        repository.delete_config(session, bucket.id)


def get_config(session: Session, bucket: Bucket) -> list[dict[str, Any]]:
    row = repository.get_config(session, bucket.id)
    return list(row.entries) if row is not None else []


def replay_dead_letters(session: Session, ids: list[int] | None = None) -> int:
    """Dead letters (all, or ``ids``) queued again, due now; returns how many."""
    return repository.replay_dead_letters(session, ids, utcnow())
