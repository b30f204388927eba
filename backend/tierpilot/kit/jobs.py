"""The Celery app every process shares: domains register their tasks on it and enqueue by task name.

The broker is Redis (embedded default: a local redis-server, or the documented SQLite transport); the
worker and beat processes run it through ``worker.app``, which adds the task modules and the schedule.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import timedelta
from typing import Any

from celery import Celery

from tierpilot.kit.errors import Unavailable
from tierpilot.kit.settings import get_settings

log = logging.getLogger(__name__)


def make_celery() -> Celery:
    settings = get_settings()
    app = Celery("tierpilot", broker=settings.celery_broker_url, backend=settings.celery_result_backend)
    app.conf.update(
        task_acks_late=True,  # a worker killed mid-task leaves it queued for another
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        result_expires=timedelta(days=1),
        timezone="UTC",
        enable_utc=True,
        broker_connection_retry_on_startup=True,
        # a worker rides out a broker outage of any length: it retries forever (Celery's default gives up after
        # 100 tries), and tasks running when the connection goes finish (they are idempotent; cancelled ones would
        # hold their leases until those run out)
        broker_connection_retry=True,
        broker_connection_max_retries=None,
        worker_cancel_long_running_tasks_on_connection_loss=False,
        worker_hijack_root_logger=False,
    )
    if settings.redis_url:
        # Redis redelivers an unacknowledged task after this; the SQLAlchemy fallback has no such option. A
        # broker that does not answer fails a connection in a second, not after the client's own retries.
        app.conf.broker_transport_options = {"visibility_timeout": 3600, "socket_connect_timeout": 1,
                                             "socket_timeout": 5}
        app.conf.broker_connection_timeout = 1
        app.conf.redis_socket_connect_timeout = 1
        app.conf.redis_socket_timeout = 5
    return app


celery_app = make_celery()


def broker_reachable() -> str:
    """'ok' when the broker answers within a second, else the error."""
    try:
        with celery_app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=1)
        return "ok"
    except Exception as exc:
        return f"error: {type(exc).__name__}: {exc}"[:300]


class BrokerUnavailable(Unavailable):
    """The job queue did not take a task within ``ENQUEUE_TIMEOUT_S``: nothing was queued, the client may retry."""


ENQUEUE_TIMEOUT_S = 2.0  # the longest a request waits on the broker
_DOWN_S = 5.0  # after a failure, enqueues fail at once for this long instead of each waiting again
_senders = ThreadPoolExecutor(max_workers=4, thread_name_prefix="enqueue")
_down_until = 0.0
_down_lock = threading.Lock()


def enqueue(name: str, args: list[Any] | None = None, kwargs: dict[str, Any] | None = None,
            countdown: float | None = None) -> str:
    """Queue the task ``name`` and return its id, or raise ``BrokerUnavailable`` after at most
    ``ENQUEUE_TIMEOUT_S``: a request never waits on a broker that is down. No result is kept (the callers'
    state lives in the database)."""
    global _down_until
    if time.monotonic() < _down_until:
        raise BrokerUnavailable("the job queue is unavailable; try again shortly")
    sent = _senders.submit(celery_app.send_task, name, args=args or [], kwargs=kwargs or {}, countdown=countdown,
                           retry=False, ignore_result=True)
    try:
        return str(sent.result(timeout=ENQUEUE_TIMEOUT_S).id)
    except (FutureTimeout, Exception) as exc:
        with _down_lock:
            _down_until = time.monotonic() + _DOWN_S
        log.warning("could not enqueue %s: %s: %s", name, type(exc).__name__, str(exc)[:200])
        raise BrokerUnavailable("the job queue is unavailable; try again shortly") from exc


def kick(name: str, args: list[Any] | None = None) -> None:
    """``enqueue`` for a task that only hurries work a periodic sweep does anyway: a failure is logged only."""
    try:
        enqueue(name, args)
    except BrokerUnavailable:
        log.warning("%s not queued now; the next periodic sweep does its work", name)
