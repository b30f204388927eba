"""The one place request and response bodies pass through: the hook for throughput reservations.

Every body chunk the gateway receives or sends is accounted with ``await flow.consume(nbytes)``
before it moves on. A ``FlowPolicy`` opens one ``Flow`` per request from the request's
``X-Tierpilot-Reservation`` header, caller, bucket and direction; the default policy is best-effort
(no limit, no waiting). The reservations domain installs its own policy with ``set_policy`` (token
buckets shared through Redis); a policy rejects a bad reservation id by raising
``errors.invalid_reservation(...)`` from ``open``.
"""

from __future__ import annotations

from typing import Literal, NamedTuple, Protocol

Direction = Literal["read", "write"]
RESERVATION_HEADER = "x-tierpilot-reservation"


class FlowRequest(NamedTuple):
    """Who moves bytes where: what a policy needs to pick (or refuse) a flow (a tuple: made for every GET and PUT,
    a third of a frozen dataclass's cost)."""

    reservation_id: str | None
    user_id: int
    is_admin: bool
    bucket: str
    bucket_id: int
    direction: Direction
    expected_bytes: int | None


class Flow(Protocol):
    # response headers the flow wants sent (e.g. "served best-effort: reservation not active")
    headers: list[tuple[bytes, bytes]]

    async def consume(self, nbytes: int) -> None:
        """Account ``nbytes`` about to move; may wait to keep the flow at its rate."""

    async def close(self) -> None:
        """The request ended (its bytes are all accounted or it failed)."""


class FlowPolicy(Protocol):
    async def open(self, request: FlowRequest) -> Flow: ...


class BestEffortFlow:
    """No reservation: bytes move as fast as the gateway and the client can."""

    headers: list[tuple[bytes, bytes]] = []

    async def consume(self, nbytes: int) -> None:
        return None

    async def close(self) -> None:
        return None


class BestEffortPolicy:
    _flow = BestEffortFlow()

    async def open(self, request: FlowRequest) -> Flow:
        return self._flow


_policy: FlowPolicy = BestEffortPolicy()


def set_policy(policy: FlowPolicy) -> None:
    """Install the process's flow policy (the reservations domain does at gateway start-up)."""
    global _policy
    _policy = policy


def get_policy() -> FlowPolicy:
    return _policy
