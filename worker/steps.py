"""What the worker's consumer does each time it has connected to the broker, after its start and after every outage:
tell the process that keeps it running that it consumes (``worker/keeper.py``), and have held work handed out again."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any

from celery import bootsteps

from tierpilot.kit.db import utcnow

log = logging.getLogger(__name__)

# set by `tierpilot worker` for its Celery process: the file whose modification time says it consumes
HEARTBEAT_ENV = "TIERPILOT_WORKER_HEARTBEAT_FILE"
HEARTBEAT_S = 5.0
# a publish right after an outage may find the producer's pooled connection broken: reconnect a few times
_SEND_RETRY = {"max_retries": 3, "interval_start": 0, "interval_step": 0.5, "interval_max": 1.0}


class Heartbeat(bootsteps.StartStopStep):
    """Touches the heartbeat file every ``HEARTBEAT_S`` from the consumer's event loop: it stops while the consumer
    is disconnected or stuck."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def __init__(self, c: Any, **kwargs: Any) -> None:
        super().__init__(c, **kwargs)
        path = os.environ.get(HEARTBEAT_ENV)
        self.path = Path(path) if path else None
        self.entry: Any = None

    def start(self, c: Any) -> None:
        if self.path is None:
            return
        self.beat()
        self.entry = c.timer.call_repeatedly(HEARTBEAT_S, self.beat)

    def stop(self, c: Any) -> None:
        if self.entry is not None:
            self.entry.cancel()
            self.entry = None

    def beat(self) -> None:
        assert self.path is not None
        now = time.time()
        try:
            os.utime(self.path, (now, now))
        except FileNotFoundError:
            self.path.touch()


class ResumeMoves(bootsteps.StartStopStep):
    """Asks for ``lifecycle.resume``: an outage may have lost the messages of queued moves, and a worker that died
    before this one may have held some; waiting for the lifecycle sweep would leave them for minutes."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def start(self, c: Any) -> None:
        try:
            c.app.send_task("lifecycle.resume", kwargs={"before": utcnow().isoformat()}, ignore_result=True,
                            retry=True, retry_policy=_SEND_RETRY)
        except Exception as exc:  # noqa: BLE001 - the broker went again: the next connection asks again
            log.warning("lifecycle.resume not sent: %s: %s", type(exc).__name__, exc)
