"""The one time-bounded cache: what the hot path reuses for a few seconds instead of querying per request."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

import cachetools

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class TTLCache(Generic[K, V]):
    """A thread-safe cache whose entries live ``ttl`` seconds (``cachetools.TTLCache`` underneath).

    Misses are not remembered: a new key, bucket or tier works at once. ``timer`` is injectable so
    tests move time instead of sleeping.
    """

    def __init__(self, ttl: float, maxsize: int = 10_000, timer: Callable[[], float] = time.monotonic) -> None:
        self._data: cachetools.TTLCache[K, V] = cachetools.TTLCache(maxsize=maxsize, ttl=ttl, timer=timer)
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            return self._data.get(key)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._data

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._data[key] = value

    def get_or_load(self, key: K, load: Callable[[], V]) -> V:
        """The cached value, or ``load()``'s (stored); concurrent misses may load more than once."""
        value = self.get(key)
        if value is None:
            value = load()
            self.put(key, value)
        return value

    def pop(self, key: K) -> None:
        with self._lock:
            self._data.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
