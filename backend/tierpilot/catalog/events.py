"""The catalog's door for bucket events: what changed of an object, told to a listener inside the write's
transaction (an outbox row then commits or rolls back with the change itself).

The catalog may not import the events domain; ``tierpilot.app.wiring`` installs its listener. ``wants`` is asked
per change before anything is built, and answers from memory, so a bucket without a notification configuration
costs a write one dictionary lookup.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlalchemy.orm import Session


@dataclass(frozen=True, slots=True)
class Change:
    """One object event: ``name`` is S3's event name without the ``s3:`` prefix (``ObjectCreated:Put``)."""

    bucket_id: int
    key: str
    name: str
    size: int = 0
    etag: str = ""
    version_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # glacierEventData, lifecycleEventData


class Listener(Protocol):
    def wants(self, bucket_id: int) -> bool: ...

    def record(self, session: Session, changes: Sequence[Change]) -> None: ...


_listener: Listener | None = None


def install(listener: Listener | None) -> None:
    global _listener
    _listener = listener


def watched(bucket_id: int) -> bool:
    """Whether changes of this bucket are worth building (a configuration may match them)."""
    return _listener is not None and _listener.wants(bucket_id)


def emit(session: Session, changes: Sequence[Change]) -> None:
    """Record ``changes`` in the caller's transaction (those of buckets nobody watches are dropped)."""
    if _listener is None:
        return
    picked = [c for c in changes if _listener.wants(c.bucket_id)]
    if picked:
        _listener.record(session, picked)
