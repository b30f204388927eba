"""Reservation changes on a Redis channel: published after the commit, applied by every gateway at once.

A booking, a cancellation or a new capacity reaches each gateway process's directory within a
Redis round trip instead of at its next snapshot (every second), so a reservation booked while its
window is open is enforced from its first chunk. The message carries what the gateway needs, so no
database read stands between it and the next chunk. Without Redis (or when a publish fails) the
gateways' snapshots still bring the change within a second.
"""

from __future__ import annotations

import json
import logging
from functools import lru_cache
from typing import Any

from sqlalchemy.orm import Session

from tierpilot.kit.db import after_commit
from tierpilot.kit.settings import get_settings
from tierpilot.reservations.models import CapacityPool, Reservation

log = logging.getLogger(__name__)

CHANNEL = "tp:reservations:changes"


def reservation_message(r: Reservation) -> dict[str, Any]:
    return {"kind": "reservation", "id": r.id, "owner_id": r.owner_id, "bucket": r.bucket,
            "direction": r.direction, "rate_bps": r.rate_bps, "start": r.start_at.timestamp(),
            "end": r.end_at.timestamp(), "cancelled": r.state == "cancelled"}


def pool_message(pool: CapacityPool) -> dict[str, Any]:
    return {"kind": "pool", "read_bps": pool.read_bps, "write_bps": pool.write_bps,
            "unbookable_share": pool.unbookable_share}


def announce(session: Session, message: dict[str, Any]) -> None:
    """Publish ``message`` once the session commits (nothing on rollback)."""
    payload = json.dumps(message)
    after_commit(session, lambda: publish(payload))


def publish(payload: str) -> None:
    url = get_settings().redis_url
    if not url:
        return
    try:
        _client(url).publish(CHANNEL, payload)
    except Exception as exc:  # noqa: BLE001  (the booking stands; gateways read it at their next snapshot)
        log.warning("could not publish a reservation change, gateways see it within a second: %s", exc)


def parse(data: bytes | str) -> dict[str, Any] | None:
    """A published message, or None (logged) for anything this version does not understand."""
    try:
        message = json.loads(data)
    except ValueError:
        message = None
    if not isinstance(message, dict) or message.get("kind") not in ("reservation", "pool"):
        log.warning("ignoring a message on %s: %r", CHANNEL, data[:200])
        return None
    return message


@lru_cache(maxsize=4)
def _client(url: str) -> Any:
    import redis

    return redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)
