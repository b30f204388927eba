"""The spend domain's gateway hooks (listed in ``wiring.GATEWAY_EXTENSIONS`` after reservations, whose flow
policy it wraps): meter every data-path flow and write the counters in the background."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from tierpilot.kit import flow as kitflow
from tierpilot.kit.streaming import run
from tierpilot.spend.metering import FLUSH_S, MeteringPolicy, meter

log = logging.getLogger(__name__)

_flusher: asyncio.Task[None] | None = None


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
