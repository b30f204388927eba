"""MQTT target (Mosquitto …) through paho-mqtt: QoS 1, each publish acknowledged by the broker before the next.

``url`` is ``mqtt://[user:pass@]host[:1883]``; ``topic`` the topic name.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from urllib.parse import unquote, urlsplit

import paho.mqtt.client as mqtt

from tierpilot.eventsinks.base import Message, Settings, failed_from, summary


class MqttSink:
    def __init__(self, settings: Settings, timeout_s: float) -> None:
        self._settings, self._timeout = settings, timeout_s
        self._client: mqtt.Client | None = None

    def _open(self) -> mqtt.Client:
        if self._client is not None and self._client.is_connected():
            return self._client
        self.close()
        parts = urlsplit(self._settings.url)
        client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv311)
        if parts.username:
            client.username_pw_set(unquote(parts.username), unquote(parts.password or ""))
        if parts.scheme == "mqtts":
            client.tls_set()
        client.connect(parts.hostname or "127.0.0.1", parts.port or (8883 if parts.scheme == "mqtts" else 1883),
                       keepalive=30)
        client.loop_start()
        deadline = time.monotonic() + self._timeout
        while not client.is_connected():
            if time.monotonic() > deadline:
                client.loop_stop()
                raise TimeoutError("no CONNACK from the broker")
            time.sleep(0.01)
        self._client = client
        return client

    def send(self, messages: Sequence[Message]) -> list[str | None]:
        out: list[str | None] = []
        try:
            client = self._open()
        except Exception as exc:  # noqa: BLE001
            self.close()
            return failed_from(0, len(messages), summary(exc), out)
        for i, msg in enumerate(messages):
            try:
                info = client.publish(self._settings.topic, msg.body, qos=1)
                info.wait_for_publish(self._timeout)
                if not info.is_published():
                    raise TimeoutError("no PUBACK from the broker")
            except Exception as exc:  # noqa: BLE001
                self.close()
                return failed_from(i, len(messages), summary(exc), out)
            out.append(None)
        return out

    def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):  # closing a dead connection
                client.disconnect()
                client.loop_stop()
