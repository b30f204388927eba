"""kit/cache.py's TTLCache: entries live ``ttl`` seconds from their put (on an injected clock), misses are not
remembered, and a full cache makes room by dropping expired entries first, then the oldest."""

from __future__ import annotations

from tierpilot.kit.cache import TTLCache


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_an_entry_lives_ttl_seconds_from_its_put() -> None:
    clock = Clock()
    cache: TTLCache[str, int] = TTLCache(2.0, timer=clock)
    cache.put("a", 1)
    clock.now += 1.999
    assert cache.get("a") == 1 and "a" in cache
    clock.now += 0.001  # alive while now < put + ttl
    assert cache.get("a") is None and "a" not in cache
    cache.put("a", 2)  # put again: a new life
    clock.now += 1.5
    assert cache.get("a") == 2


def test_falsy_values_are_hits_and_loads_are_not_remembered_when_missing() -> None:
    clock = Clock()
    cache: TTLCache[str, int] = TTLCache(5.0, timer=clock)
    cache.put("zero", 0)
    assert "zero" in cache and cache.get("zero") == 0
    loads = []
    assert cache.get_or_load("k", lambda: loads.append(1) or 7) == 7  # type: ignore[func-returns-value]
    assert cache.get_or_load("k", lambda: loads.append(1) or 8) == 7  # type: ignore[func-returns-value]
    assert loads == [1]
    cache.pop("k")
    assert cache.get("k") is None
    cache.clear()
    assert "zero" not in cache


def test_a_full_cache_drops_expired_entries_first_then_the_oldest() -> None:
    clock = Clock()
    cache: TTLCache[str, int] = TTLCache(10.0, maxsize=3, timer=clock)
    cache.put("old", 1)
    clock.now += 6
    cache.put("b", 2)
    cache.put("c", 3)
    clock.now += 5  # "old" expired
    cache.put("d", 4)
    assert [cache.get(k) for k in ("old", "b", "c", "d")] == [None, 2, 3, 4]
    cache.put("b", 20)  # put again: now the newest
    cache.put("e", 5)  # full, none expired: the oldest ("c") goes
    assert [cache.get(k) for k in ("b", "c", "d", "e")] == [20, None, 4, 5]


def test_a_cache_of_size_one_keeps_the_last_put() -> None:
    cache: TTLCache[str, int] = TTLCache(10.0, maxsize=1, timer=Clock())
    cache.put("all", 1)
    cache.put("all", 2)
    assert cache.get("all") == 2
    cache.put("other", 3)
    assert cache.get("all") is None and cache.get("other") == 3
