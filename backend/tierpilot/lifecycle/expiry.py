"""``x-amz-expiration``: when an enabled rule will expire an object, as S3 says it on PUT, GET and HEAD.

The gateway asks on every such request, so a bucket's expiration rules are kept for
``TIERPILOT_GATEWAY_CACHE_S`` per process (a bucket without rules is cached too: one read per window).
A configuration changed through this process is dropped from the cache at once (``forget``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime
from typing import Any

from tierpilot.kit.cache import TTLCache
from tierpilot.kit.db import transaction
from tierpilot.kit.settings import get_settings
from tierpilot.lifecycle import repository
from tierpilot.lifecycle.dates import due_at
from tierpilot.lifecycle.rules import Predicates
from tierpilot.lifecycle.service import load


@dataclass(frozen=True)
class ExpiryRule:
    rule_id: str
    predicates: Predicates
    days: int | None
    date: datetime | None


_cache: TTLCache[int, tuple[ExpiryRule, ...]] = TTLCache(get_settings().gateway_cache_s)


def cached(bucket_id: int) -> tuple[ExpiryRule, ...] | None:
    """The bucket's expiration rules if this process read them lately (None: read them with ``read``)."""
    return _cache.get(bucket_id)


def read(bucket_id: int) -> tuple[ExpiryRule, ...]:
    """The enabled current-version expirations of a bucket's configuration (blocking: a database read)."""
    with transaction() as session:
        row = repository.get_configuration(session, bucket_id)
        config = load(row) if row is not None else None
    rules = tuple(
        ExpiryRule(r.id, r.predicates(), r.expiration.days, r.expiration.date)
        for r in (config.rules if config is not None else [])
        if r.enabled and r.expiration is not None and (r.expiration.days is not None or r.expiration.date)
    )
    _cache.put(bucket_id, rules)
    return rules


def forget(bucket_id: int) -> None:
    _cache.pop(bucket_id)


def header(rules: tuple[ExpiryRule, ...], key: str, size: int, tags: Mapping[str, Any] | None,
           created_at: datetime) -> str | None:
    """``expiry-date="<HTTP date>", rule-id="<id>"`` of the earliest expiration that applies, or None."""
    best: tuple[datetime, str] | None = None
    for rule in rules:
        if not rule.predicates.matches(key, size, tags):
            continue
        when = due_at(created_at, rule.days) if rule.days is not None else rule.date
        if when is not None and (best is None or when < best[0]):
            best = (when, rule.rule_id)
    if best is None:
        return None
    return f'expiry-date="{format_datetime(best[0].astimezone(UTC), usegmt=True)}", rule-id="{best[1]}"'
