"""The catalog's event listener: which buckets have configurations (cached per process) and the outbox rows a
change makes, written in the change's own transaction.

A snapshot of every configuration, the targets' ids and the outbox's size is read at most every
``TIERPILOT_GATEWAY_CACHE_S`` (one small statement when no bucket has a configuration), so asking whether a
bucket is watched is a dictionary lookup; a configuration written in this process takes effect at once
(``forget``), in other processes within that period.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import quote_plus

from prometheus_client import Counter
from sqlalchemy.orm import Session

from tierpilot.catalog import repository as catalog_repository
from tierpilot.catalog.events import Change
from tierpilot.events import names, repository
from tierpilot.events.s3xml import rule_of
from tierpilot.kit.db import transaction, utcnow
from tierpilot.kit.settings import get_settings

log = logging.getLogger(__name__)

EVENTS_RECORDED = Counter("tierpilot_events_recorded_total", "bucket events written to the outbox")
EVENTS_DROPPED = Counter("tierpilot_events_dropped_total", "bucket events not recorded: the outbox was full")


@dataclass(frozen=True)
class Watched:
    """A bucket with a configuration: what its events say of it and the rules with their targets' ids."""

    name: str
    region: str
    owner: str
    rules: tuple[tuple[names.Rule, int], ...]


@dataclass
class Snapshot:
    buckets: dict[int, Watched] = field(default_factory=dict)
    queued: int = 0  # outbox rows when read (counted up to the bound), plus those recorded since
    loaded_at: float = float("-inf")


def event_time(now: datetime) -> str:
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def s3_record(change: Change, watched: Watched, rule: names.Rule, now: datetime) -> dict[str, Any]:
    """S3's event record for ``change`` (its sequencer is the outbox row's, added when sent)."""
    obj: dict[str, Any] = {"key": quote_plus(change.key, safe="/")}
    if not change.name.startswith(("ObjectRemoved:", "LifecycleExpiration:")):
        obj.update(size=change.size, eTag=change.etag.strip('"'))
    if change.version_id not in (None, "null"):
        obj["versionId"] = change.version_id
    record: dict[str, Any] = {
        "eventVersion": "2.1", "eventSource": "tierpilot:s3", "awsRegion": watched.region,
        "eventTime": event_time(now), "eventName": change.name,
        "userIdentity": {"principalId": watched.owner}, "requestParameters": {"sourceIPAddress": ""},
        "responseElements": {},
        "s3": {"s3SchemaVersion": "1.0", "configurationId": rule.id,
               "bucket": {"name": watched.name, "ownerIdentity": {"principalId": watched.owner},
                          "arn": f"arn:aws:s3:::{watched.name}"},
               "object": obj},
    }
    record.update(change.extra)
    return record


class Directory:
    """``catalog.events.Listener``: installed by ``wiring``."""

    def __init__(self, ttl_s: float | None = None) -> None:
        self._ttl = ttl_s
        self._lock = threading.Lock()
        self._snap = Snapshot()

    def forget(self) -> None:
        """Read the configurations again before the next change (one of them changed in this process)."""
        self._snap = Snapshot(self._snap.buckets, self._snap.queued)

    def _fresh(self) -> Snapshot:
        snap = self._snap
        ttl = self._ttl if self._ttl is not None else get_settings().gateway_cache_s
        if time.monotonic() - snap.loaded_at < ttl:
            return snap
        with self._lock:
            if self._snap is not snap:
                return self._snap
            try:
                self._snap = snap = self._load()
            except Exception:  # noqa: BLE001  (keep the last snapshot: a write must not fail for this)
                log.warning("could not read the notification configurations", exc_info=True)
                snap.loaded_at = time.monotonic()
        return snap

    def _load(self) -> Snapshot:
        cap = get_settings().events_outbox_max
        with transaction() as session:
            configs = repository.all_configs(session)
            if not configs:
                return Snapshot(loaded_at=time.monotonic())
            targets = {(t.name, t.type): t.id for t in repository.list_targets(session)}
            buckets: dict[int, Watched] = {}
            for bucket_id, entries in configs:
                bucket = catalog_repository.get_bucket(session, bucket_id)
                if bucket is None:
                    continue
                rules = []
                for entry in entries:
                    parsed = names.parse_arn(entry["arn"])
                    target_id = targets.get(parsed) if parsed is not None else None
                    if parsed is not None and target_id is not None:
                        rules.append((rule_of(entry, parsed[0]), target_id))
                buckets[bucket_id] = Watched(bucket.name, bucket.region, str(bucket.owner_id), tuple(rules))
            queued = repository.outbox_size(session, cap + 1)
        return Snapshot(buckets, queued, time.monotonic())

    def wants(self, bucket_id: int) -> bool:
        return bucket_id in self._fresh().buckets

    def record(self, session: Session, changes: Sequence[Change]) -> None:
        snap = self._fresh()
        now = utcnow()
        rows: list[dict[str, Any]] = []
        for change in changes:
            watched = snap.buckets.get(change.bucket_id)
            if watched is None:
                continue
            sent: set[int] = set()
            for rule, target_id in watched.rules:
                if target_id in sent or not rule.matches(change.name, change.key):
                    continue
                sent.add(target_id)
                rows.append({"target_id": target_id, "bucket_id": change.bucket_id, "key": change.key,
                             "name": change.name, "record": s3_record(change, watched, rule, now),
                             "created_at": now, "next_at": now, "attempts": 0})
        if not rows:
            return
        if snap.queued + len(rows) > get_settings().events_outbox_max:
            EVENTS_DROPPED.inc(len(rows))
            return
        repository.insert_events(session, rows)
        snap.queued += len(rows)
        EVENTS_RECORDED.inc(len(rows))


directory = Directory()
