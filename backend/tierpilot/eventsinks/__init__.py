"""Drivers that publish event messages to targets: webhook, AMQP 0-9-1, MQTT, NATS JetStream, Redis stream.

They know no domain: they take a target's connection settings and messages (bytes with a key) and say, per
message, whether the target took it. ``open_sink`` builds one; ``Sink.send`` is blocking and in order.
"""

from tierpilot.eventsinks.base import SINK_TYPES, Message, Settings, Sink, SinkError
from tierpilot.eventsinks.registry import open_sink

__all__ = ["SINK_TYPES", "Message", "Settings", "Sink", "SinkError", "open_sink"]
