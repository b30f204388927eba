"""Which sink serves which target type."""

from __future__ import annotations

from typing import Any

from tierpilot.eventsinks.base import Settings, Signer, Sink, SinkError


def open_sink(settings: Settings, *, timeout_s: float = 5.0, http_post: Any = None, sign: Signer | None = None
              ) -> Sink:
    """A sink for ``settings``; ``http_post`` (url, body, headers, timeout) -> status is the outbound guard's
    ``post`` for webhooks, ``sign`` their signature."""
    if settings.type == "webhook":
        from tierpilot.eventsinks.webhook import WebhookSink

        if http_post is None or sign is None:
            raise SinkError("a webhook sink needs the outbound guard and a signer")
        return WebhookSink(settings, http_post, sign, timeout_s)
    if settings.type == "amqp":
        from tierpilot.eventsinks.amqp import AmqpSink

        return AmqpSink(settings, timeout_s)
    if settings.type == "mqtt":
        from tierpilot.eventsinks.mqtt import MqttSink

        return MqttSink(settings, timeout_s)
    if settings.type == "nats":
        from tierpilot.eventsinks.nats import NatsSink

        return NatsSink(settings, timeout_s)
    if settings.type == "redis":
        from tierpilot.eventsinks.redisstream import RedisStreamSink

        return RedisStreamSink(settings, timeout_s)
    raise SinkError(f"unknown target type {settings.type!r}")
