"""Record security-relevant events and read them back (paged, filtered, as CSV). Services flush; the caller commits."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from tierpilot.audit import repository
from tierpilot.audit.models import AuditEvent
from tierpilot.audit.repository import Filter
from tierpilot.kit.db import transaction, utcnow
from tierpilot.kit.errors import Invalid

# the vocabulary: a recorded event is always one of these (the UI offers them as filters)
EVENTS = (
    "auth.login_ok", "auth.login_failed", "auth.logout", "auth.password_changed", "auth.password_reset",
    "auth.token_created", "auth.token_revoked", "auth.key_created", "auth.key_rotated", "auth.key_deleted",
    "user.created", "user.disabled", "user.enabled", "user.role_changed", "user.deleted",
    "bucket.deleted", "capacity.changed", "tier.created", "tier.updated", "tier.deleted",
    "tier.adopted", "bucket.sharing_changed", "bucket.spend_plan_changed",
    "identity.projects_synced", "identity.sts_keys",
)
MAX_PAGE = 500
# events deleted per transaction by the retention sweep: SQLite's write lock is held only that long
PRUNE_BATCH = 1000
CSV_COLUMNS = ("id", "at", "event", "actor", "actor_id", "client", "target", "detail")


@dataclass(frozen=True)
class Actor:
    """Who acted: a signed-in user (id and name), or only a name (a failed login) and the client address."""

    id: int | None
    name: str
    client: str = ""


def record(session: Session, event: str, actor: Actor | None, target: str = "", **detail: Any) -> None:
    """Add an event to the session's transaction: it is kept exactly when the change it describes is."""
    if event not in EVENTS:
        raise ValueError(f"unknown audit event {event!r}")
    repository.add(session, AuditEvent(
        at=utcnow(), event=event, actor_id=actor.id if actor else None, actor=(actor.name if actor else "")[:64],
        client=(actor.client if actor else "")[:64], target=target[:300], detail=detail,
    ))
    session.flush()


def prune(session: Session, now: datetime, retention_days: int, limit: int = PRUNE_BATCH) -> int:
    """Delete up to ``limit`` of the events older than ``retention_days`` before ``now``, oldest first;
    returns how many went (fewer than ``limit``: none older is left)."""
    return repository.delete_before(session, now - timedelta(days=retention_days), limit)


def last_logins(session: Session, user_ids: list[int]) -> dict[int, datetime]:
    """Each user's latest successful sign-in still in the log (older ones went with retention)."""
    return repository.last_at(session, "auth.login_ok", user_ids)


def _filter(actor: str | None, event: str | None, since: datetime | None, until: datetime | None) -> Filter:
    if since is not None and until is not None and since >= until:
        raise Invalid("since must be before until", field="since")
    return Filter(actor=actor or None, event=event or None, since=since, until=until)


def page(session: Session, *, actor: str | None = None, event: str | None = None, since: datetime | None = None,
         until: datetime | None = None, before_id: int | None = None, limit: int = 100
         ) -> tuple[list[AuditEvent], int | None]:
    """One page, newest first, and the cursor of the next page (None on the last)."""
    limit = max(1, min(limit, MAX_PAGE))
    rows = repository.page(session, _filter(actor, event, since, until), before_id, limit + 1)
    return rows[:limit], (rows[limit - 1].id if len(rows) > limit else None)


def event_names(session: Session) -> list[str]:
    """Every event name: the vocabulary and any older name still in the log."""
    return sorted(set(EVENTS) | set(repository.event_names(session)))


def csv_cell(value: str) -> str:
    """``value`` as a CSV cell no spreadsheet runs: one that starts like a formula is prefixed with ``'``."""
    # usernames, targets, keys and bucket names are user input
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def export_csv(*, actor: str | None = None, event: str | None = None, since: datetime | None = None,
               until: datetime | None = None) -> Iterator[str]:
    """The matching events as CSV lines, oldest first, after a header; read in a transaction of its own
    (the answer streams after the request's transaction ended). Bad filters fail here, before any line."""
    f = _filter(actor, event, since, until)
    return _csv_lines(f)


def _csv_lines(f: Filter) -> Iterator[str]:
    buf = io.StringIO()
    writer = csv.writer(buf)

    def line(values: tuple[Any, ...]) -> str:
        buf.seek(0)
        buf.truncate()
        writer.writerow(values)
        return buf.getvalue()

    yield line(CSV_COLUMNS)
    with transaction() as session:
        for e in repository.stream(session, f):
            yield line((e.id, e.at.isoformat(), e.event, csv_cell(e.actor), "" if e.actor_id is None else e.actor_id,
                        csv_cell(e.client), csv_cell(e.target), csv_cell(json.dumps(e.detail, sort_keys=True))))
