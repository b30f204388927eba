"""S3 event names, filters and target ARNs: pure rules, no database."""

from __future__ import annotations

import re
from dataclasses import dataclass

# the events tierpilot emits, as S3 names them (without the "s3:" of a configuration's <Event>)
EVENTS = (
    "ObjectCreated:Put", "ObjectCreated:Post", "ObjectCreated:Copy", "ObjectCreated:CompleteMultipartUpload",
    "ObjectRemoved:Delete", "ObjectRemoved:DeleteMarkerCreated",
    "ObjectRestore:Post", "ObjectRestore:Completed", "ObjectRestore:Delete",
    "LifecycleTransition", "LifecycleExpiration:Delete", "LifecycleExpiration:DeleteMarkerCreated",
    "ObjectTagging:Put", "ObjectTagging:Delete",
)
_FAMILIES = {name.split(":")[0] for name in EVENTS if ":" in name}
# what a configuration may name: every event, and each family's wildcard
CONFIGURABLE = frozenset({f"s3:{e}" for e in EVENTS} | {f"s3:{f}:*" for f in _FAMILIES})

_ARN = re.compile(r"arn:tierpilot:(sqs|sns)::([A-Za-z0-9_-]{1,64}):(webhook|amqp|mqtt|nats|redis)")
TARGET_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def arn(name: str, type_: str) -> str:
    """A target's ARN, as MinIO's ``arn:minio:sqs::ID:TYPE``."""
    return f"arn:tierpilot:sqs::{name}:{type_}"


def parse_arn(text: str) -> tuple[str, str] | None:
    """(target name, type) of a tierpilot ARN, None for anything else."""
    match = _ARN.fullmatch(text.strip())
    return (match[2], match[3]) if match else None


def covered(pattern: str) -> frozenset[str]:
    """The event names (without "s3:") a configuration's <Event> covers."""
    name = pattern.removeprefix("s3:")
    if name.endswith(":*"):
        family = name[:-2]
        return frozenset(e for e in EVENTS if e.split(":")[0] == family)
    return frozenset({name})


@dataclass(frozen=True)
class Rule:
    """One Topic/Queue configuration, as the delivery side needs it."""

    id: str
    target: str  # the target's name
    events: frozenset[str]
    prefix: str = ""
    suffix: str = ""

    def matches(self, event: str, key: str) -> bool:
        return event in self.events and key.startswith(self.prefix) and key.endswith(self.suffix)


def filters_overlap(a: Rule, b: Rule) -> bool:
    """S3's rule: two configurations of one destination overlap when they share an event and a key could match
    both filters (one prefix starts the other, one suffix ends the other)."""
    return bool(a.events & b.events) and (a.prefix.startswith(b.prefix) or b.prefix.startswith(a.prefix)) and (
        a.suffix.endswith(b.suffix) or b.suffix.endswith(a.suffix))
