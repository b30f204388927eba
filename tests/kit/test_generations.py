"""The one generation-guarded cache (kit/generations.py) that the gateway's S3 credentials and buckets' sharing
states both use, against a real Redis: an entry is used only under the generation it was read under, so a
value read before a change can never be served after it, whatever the interleaving."""

from __future__ import annotations

import asyncio
import uuid

import redis

from tierpilot.kit import generations
from tierpilot.kit.generations import GenerationCache


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _cache(redis_url: str, clock: Clock, ttl: float = 60.0) -> tuple[GenerationCache[str, str], str]:
    name = f"test:{uuid.uuid4().hex[:8]}"
    cache: GenerationCache[str, str] = GenerationCache(name, ttl, timer=clock)
    cache.start(redis_url)
    return cache, name


def test_an_entry_is_used_only_under_the_generation_it_was_read_under(redis_url: str) -> None:
    async def scenario() -> None:
        clock = Clock()
        cache, name = _cache(redis_url, clock)
        g1 = await cache.generation()
        cache.put("key", "old", g1)
        assert cache.get("key", await cache.generation()) == "old"
        # a request read the generation, then the change committed and moved it, then the request stored
        # what it had read before the change: the next request must not see it
        before = await cache.generation()
        assert generations.bump(redis_url, name) is not None
        cache.put("key", "read-before-the-change", before)
        now = await cache.generation()
        assert now != before and cache.get("key", now) is None
        assert cache.get("key", now, stale_ok=True) is None  # dropped when the generation moved
        cache.put("key", "new", now)
        assert cache.get("key", now) == "new"
        clock.now += 61  # the TTL bounds every entry
        assert cache.get("key", now, stale_ok=True) is None
        await cache.stop()

    asyncio.run(scenario())


def test_an_entry_read_while_the_generation_is_unknown_serves_only_callers_accepting_stale(redis_url: str) -> None:
    async def scenario() -> None:
        clock = Clock()
        cache, _ = _cache(redis_url, clock)
        g = await cache.generation()
        cache.put("bucket", "state", None)  # read while Redis did not answer
        assert await cache.generation() == g
        assert cache.get("bucket", g) is None  # a grantee's request reads the state again
        assert cache.get("bucket", None) is None
        assert cache.get("bucket", None, stale_ok=True) == "state"  # the owner's own requests may reuse it
        await cache.stop()

    asyncio.run(scenario())


def test_a_redis_that_lost_its_data_cannot_bring_back_a_generation_readers_hold(redis_url: str) -> None:
    name = f"test:{uuid.uuid4().hex[:8]}"
    client = redis.Redis.from_url(redis_url)
    seen = {0}  # a missing key reads as 0
    for _ in range(20):
        value = generations.bump(redis_url, name)
        assert value is not None and value not in seen
        seen.add(value)
        client.delete(generations.PREFIX + name)  # what a restart without persistence does
    client.close()
