"""Draining the outbox: claim due rows under a lease, send them through each target's sink, then delete what
was delivered, retry what failed with back-off and dead-letter what failed ``events_max_attempts`` times.

At least once: a worker that dies after sending and before deleting leaves its rows leased; they are sent again
once the lease ends, with the same delivery id and sequencer. In order per key and target: only the oldest
event of a (target, bucket, key) is ever claimed, so the next waits until it is gone.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from prometheus_client import Counter
from sqlalchemy.orm import Session

from tierpilot.auth import repository as auth_repository
from tierpilot.events import repository, service
from tierpilot.events.models import EventTarget, OutboxEvent
from tierpilot.events.outbox import event_time
from tierpilot.eventsinks import Message, Sink, open_sink
from tierpilot.kit.db import transaction, utcnow
from tierpilot.kit.settings import get_settings
from tierpilot.notifications import service as notifications

log = logging.getLogger(__name__)

EVENTS_DELIVERED = Counter("tierpilot_events_delivered_total", "bucket events a target took", ["type"])
EVENTS_FAILED = Counter("tierpilot_events_failed_total", "bucket event deliveries that failed (retried later)",
                        ["type"])
EVENTS_DEAD = Counter("tierpilot_events_dead_letters_total", "bucket events given up on (dead letters)", ["type"])

LEASE = timedelta(seconds=60)
KEEP_DELIVERIES = 10_000


def backoff(attempts: int) -> timedelta:
    """Wait after the ``attempts``-th failure: 1 s, 2 s, 4 s … at most five minutes."""
    return timedelta(seconds=min(2 ** max(attempts - 1, 0), 300))


class _Sinks:
    """Open sinks per target, kept between drains (a broker connection is not made per batch)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[int, tuple[datetime, Sink]] = {}

    def get(self, target: EventTarget) -> Sink:
        with self._lock:
            held = self._open.get(target.id)
            if held is not None and held[0] == target.updated_at:
                return held[1]
            if held is not None:
                held[1].close()
            policy = notifications.outbound_policy()
            sink = open_sink(service.settings_of(target), timeout_s=get_settings().webhook_timeout_s,
                             http_post=policy.post, sign=notifications.sign)
            self._open[target.id] = (target.updated_at, sink)
            return sink

    def close(self) -> None:
        with self._lock:
            for _at, sink in self._open.values():
                sink.close()
            self._open.clear()


sinks = _Sinks()


def message_of(row: OutboxEvent) -> Message:
    record = json.loads(json.dumps(row.record))
    record["s3"]["object"]["sequencer"] = f"{row.id:016X}"
    return Message(id=str(row.id), key=row.key, name=row.name,
                   body=json.dumps({"Records": [record]}, separators=(",", ":")).encode())


@dataclass
class DrainStats:
    delivered: int = 0
    retrying: int = 0
    dead: int = 0
    rounds: int = 0


def drain(budget_s: float = 10.0, limit: int = 500, clock: Callable[[], datetime] = utcnow) -> DrainStats:
    """Deliver due events until none is left or ``budget_s`` passed."""
    stats = DrainStats()
    ends = time.monotonic() + budget_s
    while time.monotonic() < ends:
        token = secrets.token_hex(16)
        now = clock()
        with transaction(write=True) as session:
            rows = repository.claim(session, now, now + LEASE, token, limit)
            targets = {t.id: t for t in repository.list_targets(session)} if rows else {}
            for target in targets.values():
                session.expunge(target)
        if not rows:
            break
        stats.rounds += 1
        outcomes: dict[int, str | None] = {}
        by_target: dict[int, list[OutboxEvent]] = {}
        for row in rows:
            by_target.setdefault(row.target_id, []).append(row)
        for target_id, batch in by_target.items():
            if target_id not in targets:
                continue  # deleted meanwhile: its rows went with it
            target = targets[target_id]
            try:
                results = sinks.get(target).send([message_of(r) for r in batch])
            except Exception as exc:  # noqa: BLE001  (settings that cannot be read, a driver's bug)
                log.warning("event target %s failed", target.name, exc_info=True)
                results = [f"{type(exc).__name__}: {exc}"[:300]] * len(batch)
            for row, result in zip(batch, results, strict=True):
                outcomes[row.id] = result
        _settle(rows, targets, outcomes, token, clock(), stats)
    return stats


def _settle(rows: list[OutboxEvent], targets: dict[int, EventTarget], outcomes: dict[int, str | None], token: str,
            now: datetime, stats: DrainStats) -> None:
    max_attempts = get_settings().events_max_attempts
    with transaction(write=True) as session:
        delivered = [r for r in rows if r.id in outcomes and outcomes[r.id] is None]
        records: list[dict[str, Any]] = []
        if delivered:
            repository.remove_delivered(session, [r.id for r in delivered], token)
        for row in delivered:
            EVENTS_DELIVERED.labels(targets[row.target_id].type).inc()
            records.append({"bucket_id": row.bucket_id, "target_id": row.target_id, "key": row.key, "name": row.name,
                            "status": "delivered", "attempts": row.attempts + 1, "error": None, "at": now})
        stats.delivered += len(delivered)
        for row in rows:
            error = outcomes.get(row.id)
            if row.id not in outcomes or error is None:
                continue
            kind = targets[row.target_id].type
            attempts = row.attempts + 1
            if attempts >= max_attempts:
                if repository.move_to_dead_letters(session, row, token, attempts, error, now):
                    EVENTS_DEAD.labels(kind).inc()
                    stats.dead += 1
                    records.append({"bucket_id": row.bucket_id, "target_id": row.target_id, "key": row.key,
                                    "name": row.name, "status": "dead", "attempts": attempts, "error": error,
                                    "at": now})
            else:
                repository.retry_later(session, row.id, token, attempts, now + backoff(attempts), error)
                EVENTS_FAILED.labels(kind).inc()
                stats.retrying += 1
        repository.add_deliveries(session, records)


def housekeep() -> dict[str, Any]:
    """Prune old delivery records and tell admins (once a day) when the outbox is full."""
    cap = get_settings().events_outbox_max
    with transaction(write=True) as session:
        repository.prune_deliveries(session, KEEP_DELIVERIES)
        size = repository.outbox_size(session, cap + 1)
        if size >= cap:
            for user in auth_repository.list_users(session):
                if user.is_admin:
                    notifications.notify_once(
                        session, user.id, "events.outbox_full", "Bucket event outbox is full",
                        f"{cap} events wait for delivery (TIERPILOT_EVENTS_OUTBOX_MAX): new events are dropped "
                        "until targets take them. Check the event targets and dead letters.", link="/admin/events")
    return {"queued": size, "full": size >= cap}


@dataclass(frozen=True)
class OutboxMetrics:
    queued: int
    retrying: int
    dead_letters: int
    oldest_age_s: float | None


def metrics(session: Session) -> OutboxMetrics:
    queued, oldest, retrying = repository.outbox_stats(session)
    age = (utcnow() - oldest).total_seconds() if oldest is not None else None
    return OutboxMetrics(queued, retrying, repository.count_dead_letters(session), age)


def send_test(target: EventTarget) -> str | None:
    """S3's s3:TestEvent sent straight to the target (no outbox): None when it took it, else why not."""
    body = json.dumps({"Service": "tierpilot:s3", "Event": "s3:TestEvent", "Time": event_time(utcnow()),
                       "Bucket": "", "RequestId": secrets.token_hex(8), "HostId": ""}).encode()
    return sinks.get(target).send([Message(id=f"test-{secrets.token_hex(4)}", key="", name="s3:TestEvent",
                                           body=body)])[0]
