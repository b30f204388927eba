"""NATS JetStream target through nats-py: each publish waits for the stream's acknowledgement.

``url`` is ``nats://host:4222``; ``topic`` the subject, which a JetStream stream must capture (with the
``stream`` option the sink creates that stream on first use).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import nats

from tierpilot.eventsinks.base import Message, Settings, failed_from, summary


class NatsSink:
    def __init__(self, settings: Settings, timeout_s: float) -> None:
        self._settings, self._timeout = settings, timeout_s

    async def _send(self, messages: Sequence[Message]) -> list[str | None]:
        out: list[str | None] = []
        try:
            # nats-py reads 0 reconnect attempts as "forever", initial connect included: one, bounded
            nc = await asyncio.wait_for(nats.connect(self._settings.url, connect_timeout=self._timeout,
                                                     max_reconnect_attempts=1, allow_reconnect=False,
                                                     error_cb=_quiet), self._timeout * 2)
        except Exception as exc:  # noqa: BLE001
            return failed_from(0, len(messages), summary(exc), out)
        try:
            js = nc.jetstream(timeout=self._timeout)
            stream = self._settings.options.get("stream")
            if stream:
                await _ensure_stream(js, str(stream), self._settings.topic)
            for i, msg in enumerate(messages):
                try:
                    await js.publish(self._settings.topic, msg.body, headers={"Nats-Msg-Id": msg.id,
                                                                               "X-Tierpilot-Event": msg.name})
                except Exception as exc:  # noqa: BLE001
                    return failed_from(i, len(messages), summary(exc), out)
                out.append(None)
            return out
        finally:
            await nc.close()

    def send(self, messages: Sequence[Message]) -> list[str | None]:
        # one connection per batch: the worker's threads have no event loop of their own to keep one on
        return asyncio.run(self._send(messages))

    def close(self) -> None:
        return None


async def _quiet(_exc: Exception) -> None:
    """Connection errors come back as the send's outcome; nats-py would log each one with a traceback."""


async def _ensure_stream(js: Any, name: str, subject: str) -> None:
    try:
        await js.stream_info(name)
    except Exception:  # noqa: BLE001  (not found: create it)
        await js.add_stream(name=name, subjects=[subject])
