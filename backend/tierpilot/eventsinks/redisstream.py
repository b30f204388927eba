"""Redis stream target: XADD of each event (fields ``event``, ``id``, ``name``) to the stream ``topic``.

``url`` is redis-py's (``redis://host:6379/0``); a ``maxlen`` option trims the stream approximately.
"""

from __future__ import annotations

from collections.abc import Sequence

import redis

from tierpilot.eventsinks.base import Message, Settings, failed_from, summary


class RedisStreamSink:
    def __init__(self, settings: Settings, timeout_s: float) -> None:
        self._settings = settings
        self._client = redis.Redis.from_url(settings.url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s)
        raw = settings.options.get("maxlen")
        self._maxlen = int(raw) if raw else None

    def send(self, messages: Sequence[Message]) -> list[str | None]:
        out: list[str | None] = []
        for i, msg in enumerate(messages):
            try:
                self._client.xadd(self._settings.topic, {"event": msg.body, "id": msg.id, "name": msg.name},
                                  maxlen=self._maxlen, approximate=True)
            except Exception as exc:  # noqa: BLE001
                return failed_from(i, len(messages), summary(exc), out)
            out.append(None)
        return out

    def close(self) -> None:
        self._client.close()
