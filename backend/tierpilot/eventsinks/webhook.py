"""Webhook target: one signed POST per event, through the caller's outbound guard (no inside addresses unless an
admin allow-listed them), signed as the restore webhooks are (X-Tierpilot-Signature)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

from tierpilot.eventsinks.base import Message, Settings, Signer, failed_from, summary

Post = Callable[[str, bytes, Mapping[str, str], float], int]


class WebhookSink:
    def __init__(self, settings: Settings, post: Post, sign: Signer, timeout_s: float) -> None:
        self._url, self._secret = settings.url, settings.secret
        self._post, self._sign, self._timeout = post, sign, timeout_s

    def send(self, messages: Sequence[Message]) -> list[str | None]:
        out: list[str | None] = []
        for i, msg in enumerate(messages):
            headers = {"content-type": "application/json", "x-tierpilot-event": msg.name,
                       "x-tierpilot-delivery": msg.id,
                       "x-tierpilot-signature": self._sign(self._secret, msg.body, int(time.time()))}
            try:
                status = self._post(self._url, msg.body, headers, self._timeout)
            except Exception as exc:  # noqa: BLE001  (the guard's OutboundError and anything the network raises)
                return failed_from(i, len(messages), getattr(exc, "summary", None) or summary(exc), out)
            if not 200 <= status < 300:
                return failed_from(i, len(messages), f"HTTP {status}", out)
            out.append(None)
        return out

    def close(self) -> None:
        return None
