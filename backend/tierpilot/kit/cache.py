"""The one time-bounded cache: what the hot path reuses for a few seconds instead of querying per request."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class TTLCache(Generic[K, V]):
    """A thread-safe cache whose entries live ``ttl`` seconds from when they were put.

    Misses are not remembered: a new key, bucket or tier works at once. ``timer`` is injectable so
    tests move time instead of sleeping. A plain dict of (expiry, value): a read is one dict lookup and
    one clock read, without a lock (a dict lookup is atomic under the GIL, and reads change nothing), where
    ``cachetools.TTLCache`` took a lock and walked its own bookkeeping (four reads a request were 8 % of a
    small HEAD's CPU). Writes take the lock. An entry put again moves to the end, so with one ``ttl`` the
    dict's order is the order of expiry: a full cache drops its expired entries from the front, then (all
    alive) its oldest entry (cachetools dropped the least recently read one; either way a dropped entry is
    only a miss).
    """

    __slots__ = ("_data", "_lock", "_maxsize", "_timer", "_ttl")

    def __init__(self, ttl: float, maxsize: int = 10_000, timer: Callable[[], float] = time.monotonic) -> None:
        self._data: dict[K, tuple[float, V]] = {}
        self._ttl, self._maxsize, self._timer = ttl, maxsize, timer
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        entry = self._data.get(key)
        if entry is None or entry[0] <= self._timer():  # alive while now < expiry, as cachetools had it
            return None
        return entry[1]

    def __contains__(self, key: object) -> bool:
        entry = self._data.get(key)  # type: ignore[arg-type]
        return entry is not None and entry[0] > self._timer()

    def put(self, key: K, value: V) -> None:
        with self._lock:
            now = self._timer()
            data = self._data
            if data.pop(key, None) is None and len(data) >= self._maxsize:
                self._make_room(now)
            data[key] = (now + self._ttl, value)

    def _make_room(self, now: float) -> None:
        data = self._data
        expired = []
        for key, (expires, _value) in data.items():
            if expires > now:
                break
            expired.append(key)
        for key in expired:
            del data[key]
        while data and len(data) >= self._maxsize:
            del data[next(iter(data))]

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
