"""Tell every process of the installation about a change at once: Redis pub/sub.

A publisher sends after its transaction committed (``kit.db.after_commit``); a ``Subscription`` runs a
thread per process that hands each message to a callback. Pub/sub keeps nothing for a subscriber that is
away, so the subscriber says when it is listening (``connected``) and calls ``on_reset`` whenever it
(re)connects or loses the connection: a cache fed by invalidations must then forget everything and must
not be trusted while ``connected`` is false.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger("tierpilot.broadcast")

PREFIX = "tierpilot:"
RETRY_S = 1.0  # pause before reconnecting after an error
POLL_S = 1.0  # how often the listening thread looks at its stop flag
_clients: dict[str, Any] = {}
_clients_lock = threading.Lock()


def _client(url: str) -> Any:
    import redis

    with _clients_lock:
        client = _clients.get(url)
        if client is None:
            client = redis.Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0)
            _clients[url] = client
        return client


def publish(url: str, channel: str, message: str) -> int | None:
    """Send ``message``; the number of processes listening, or None when Redis could not be reached."""
    if not url:
        return None
    try:
        return int(_client(url).publish(PREFIX + channel, message))
    except Exception as exc:  # noqa: BLE001  (the change is committed; subscribers' caches expire on their own)
        log.warning("could not publish on %s: %s", channel, exc)
        return None


class Subscription:
    """A thread listening on one channel; ``on_message(text)`` per message, ``on_reset()`` on (dis)connects."""

    def __init__(self, url: str, channel: str, on_message: Callable[[str], None],
                 on_reset: Callable[[], None]) -> None:
        self.url = url
        self.channel = PREFIX + channel
        self._on_message = on_message
        self._on_reset = on_reset
        self._connected = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def connected(self) -> bool:
        """Whether every message published from now on reaches this process."""
        return self._connected.is_set()

    def wait_connected(self, timeout: float) -> bool:
        return self._connected.wait(timeout)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"subscribe {self.channel}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=POLL_S + 2)

    def _run(self) -> None:
        import redis

        while not self._stop.is_set():
            pubsub = None
            try:
                client = redis.Redis.from_url(self.url, socket_connect_timeout=1.0, socket_keepalive=True,
                                              health_check_interval=5)
                pubsub = client.pubsub()
                pubsub.subscribe(self.channel)
                while not self._stop.is_set():
                    message = pubsub.get_message(timeout=POLL_S)
                    if message is None:
                        continue
                    if message["type"] == "subscribe":
                        # anything published while away is lost: start from nothing, then listen
                        self._on_reset()
                        self._connected.set()
                        log.info("listening on %s", self.channel)
                    elif message["type"] == "message":
                        data = message["data"]
                        self._on_message(data.decode() if isinstance(data, bytes) else str(data))
            except Exception as exc:  # noqa: BLE001  (any Redis failure: distrust, retry)
                if self._connected.is_set():
                    log.warning("lost %s, caches it feeds are bypassed until it is back: %s", self.channel, exc)
            finally:
                self._connected.clear()
                self._on_reset()
                if pubsub is not None:
                    with contextlib.suppress(Exception):
                        pubsub.close()
            self._stop.wait(RETRY_S)
