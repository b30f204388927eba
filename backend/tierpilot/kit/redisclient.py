"""One blocking Redis client per URL and process, with short timeouts: for small reads and writes whose
caller has an answer ready when Redis does not reply (a counter, a timestamp)."""

from __future__ import annotations

import threading
from typing import Any

_clients: dict[str, Any] = {}
_lock = threading.Lock()


def shared(url: str) -> Any:
    """The process's client for ``url`` (a connection pool; safe to use from any thread)."""
    import redis

    with _lock:
        client = _clients.get(url)
        if client is None:
            client = _clients[url] = redis.Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0)
    return client
