"""The spend domain's gateway hooks (listed in ``wiring.GATEWAY_EXTENSIONS`` after reservations, whose flow
policy it wraps): meter every data-path flow, count every other request to a bucket when it ends
(``finished``), and write the counters in the background."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from functools import lru_cache
from typing import Any, Protocol

from tierpilot.kit import flow as kitflow
from tierpilot.kit.streaming import run
from tierpilot.spend.usage import FLUSH_S, MeteringPolicy, kind_of, meter

log = logging.getLogger(__name__)

_flusher: asyncio.Task[None] | None = None


class Finished(Protocol):
    """What ``finished`` reads of the gateway's request (``gateway.ext.Request``)."""

    flows: list[Any]
    caller: Any  # the authenticated credential (user_id), None before authentication
    bucket: str


async def _flush_forever() -> None:
    while True:
        await asyncio.sleep(FLUSH_S)
        try:
            await run(meter.flush)
        except Exception:
            log.warning("could not write metered usage; kept for the next flush", exc_info=True)


async def startup() -> None:
    global _flusher
    if not isinstance(kitflow.get_policy(), MeteringPolicy):
        kitflow.set_policy(MeteringPolicy(kitflow.get_policy()))
    _flusher = asyncio.ensure_future(_flush_forever())


async def shutdown() -> None:
    global _flusher
    if _flusher is not None:
        _flusher.cancel()
        with contextlib.suppress(BaseException):
            await _flusher
        _flusher = None
    policy = kitflow.get_policy()
    if isinstance(policy, MeteringPolicy):
        kitflow.set_policy(policy.inner)
    with contextlib.suppress(Exception):
        await run(meter.flush)


def finished(req: Finished, op: str, status: int) -> None:
    """Count a request to a bucket that opened no flow (HEAD, LIST, other metadata calls, DELETE), in memory.

    Requests without a caller or a bucket bill nobody; 5xx answers and requests the client left before an
    answer (499) are not billed (as S3 does not bill its own failures)."""
    if req.flows or req.caller is None or not req.bucket or status >= 499:
        return
    meter.add_request(req.caller.user_id, req.bucket, _kind(op))


# by operation ("HEAD object", "GET bucket?versions"): its kind, parsed once; bounded, as operations are a method
# and a route but the method is the client's word
@lru_cache(maxsize=4096)
def _kind(op: str) -> str:
    method, _, target = op.partition(" ")
    level, _, subresource = target.partition("?")
    return kind_of(method, level, subresource)
