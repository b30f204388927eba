"""When beat last started a lifecycle sweep, so the API can say when the next one starts.

Kept beside the broker, not in a table: in Redis when one is configured, else in the data directory that
holds the embedded broker (every process of an installation without Redis shares it). Beat starts the
next sweep one period after it sent the last; the start recorded here is at most the queue's delay later.
"""

from __future__ import annotations

import logging
import os
import threading
from datetime import UTC, datetime

from tierpilot.kit import redisclient
from tierpilot.kit.settings import get_settings

log = logging.getLogger(__name__)

KEY = "tierpilot:lifecycle:sweep:last_run_at"
FILE = "lifecycle-sweep-last-run"


def record_start(at: datetime) -> None:
    """Note that a scheduled sweep started; a failure only costs the dashboard its 'next sweep' time."""
    settings = get_settings()
    value = at.astimezone(UTC).isoformat()
    try:
        if settings.redis_url:
            redisclient.shared(settings.redis_url).set(KEY, value)
            return
        path = settings.data_dir / FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{FILE}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(value)
        os.replace(tmp, path)  # readers see the old time or the new one, never half
    except Exception as exc:  # noqa: BLE001  (the sweep matters, its clock does not)
        log.warning("could not record the lifecycle sweep's start: %s", exc)


def last_start() -> datetime | None:
    """When beat's last sweep started, or None before the first one (or while Redis is unreachable)."""
    settings = get_settings()
    try:
        if settings.redis_url:
            raw = redisclient.shared(settings.redis_url).get(KEY)
            text = raw.decode() if isinstance(raw, bytes) else raw
        else:
            path = settings.data_dir / FILE
            text = path.read_text() if path.exists() else None
        return datetime.fromisoformat(text) if text else None
    except Exception as exc:  # noqa: BLE001  (an unknown time is shown as unknown)
        log.warning("could not read the lifecycle sweep's last start: %s", exc)
        return None
