"""What every sink is: a connection to one target that publishes messages in order."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

SINK_TYPES = ("webhook", "amqp", "mqtt", "nats", "redis")


class SinkError(Exception):
    """The target could not be reached or refused; the message is a short summary safe to show an admin."""


@dataclass(frozen=True)
class Message:
    """One event for a target: ``id`` is stable across retries (receivers drop duplicates by it)."""

    id: str
    key: str  # the object key: MQTT and NATS keep no per-key order of their own, the caller does
    name: str  # the event name (a header or property where the target has them)
    body: bytes


@dataclass(frozen=True)
class Settings:
    """A target's connection settings as an admin gave them (stored encrypted by the caller)."""

    type: str
    url: str
    topic: str = ""
    secret: str = ""  # the webhook signing secret
    options: dict[str, Any] = field(default_factory=dict)


class Sink(Protocol):
    def send(self, messages: Sequence[Message]) -> list[str | None]:
        """Publish in order; per message None when the target took it, else why not. Stops at the first
        failure (the rest get the same reason): what follows a failed message of a key must wait for it."""
        ...

    def close(self) -> None: ...


Signer = Callable[[str, bytes, int], str]


def failed_from(index: int, total: int, reason: str, out: list[str | None]) -> list[str | None]:
    """``out`` with ``reason`` for message ``index`` and every one after it."""
    return out + [reason] * (total - index)


def summary(exc: BaseException) -> str:
    """A short, one-line description of a connection error (never a server's full answer)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__
