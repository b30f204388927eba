"""AMQP 0-9-1 target (RabbitMQ) through pika: persistent messages with publisher confirms, so a message counts
as delivered only once the broker took responsibility for it.

``url`` is pika's (``amqp://user:pass@host:5672/%2F``); ``topic`` is the routing key. With the default exchange
(no ``exchange`` option) the routing key is a queue, declared durable so events published before a consumer
comes are kept.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import pika
import pika.exceptions

from tierpilot.eventsinks.base import Message, Settings, failed_from, summary


class AmqpSink:
    def __init__(self, settings: Settings, timeout_s: float) -> None:
        self._settings, self._timeout = settings, timeout_s
        self._exchange = str(settings.options.get("exchange", ""))
        self._conn: pika.BlockingConnection | None = None
        self._channel: pika.adapters.blocking_connection.BlockingChannel | None = None

    def _open(self) -> pika.adapters.blocking_connection.BlockingChannel:
        if self._channel is not None and self._channel.is_open:
            return self._channel
        self.close()
        params = pika.URLParameters(self._settings.url)
        params.socket_timeout = self._timeout
        params.blocked_connection_timeout = self._timeout
        params.connection_attempts = 1
        self._conn = pika.BlockingConnection(params)
        channel = self._conn.channel()
        channel.confirm_delivery()
        if not self._exchange:
            channel.queue_declare(self._settings.topic, durable=True)
        self._channel = channel
        return channel

    def send(self, messages: Sequence[Message]) -> list[str | None]:
        out: list[str | None] = []
        try:
            channel = self._open()
        except Exception as exc:  # noqa: BLE001  (a broker that is down is the usual case here)
            self.close()
            return failed_from(0, len(messages), summary(exc), out)
        for i, msg in enumerate(messages):
            props = pika.BasicProperties(content_type="application/json", delivery_mode=2, message_id=msg.id,
                                         type=msg.name)
            try:
                channel.basic_publish(self._exchange, self._settings.topic, msg.body, props, mandatory=True)
            except pika.exceptions.UnroutableError:
                return failed_from(i, len(messages), "unroutable: no queue is bound to the routing key", out)
            except pika.exceptions.NackError:
                return failed_from(i, len(messages), "the broker refused the message (nack)", out)
            except Exception as exc:  # noqa: BLE001
                self.close()
                return failed_from(i, len(messages), summary(exc), out)
            out.append(None)
        return out

    def close(self) -> None:
        conn, self._conn, self._channel = self._conn, None, None
        if conn is not None and conn.is_open:
            with contextlib.suppress(Exception):  # closing a dead connection
                conn.close()

