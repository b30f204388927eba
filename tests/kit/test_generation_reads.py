"""How a process reads the generation counters from Redis (kit/generations.py, ``_Counters``): requests asking
at about the same time share one MGET of every counter of the URL, but never one that was already sent when
they asked, since a writer may have moved the counter and answered in between.

Each test puts a TCP proxy of its own between the reader and the test's Redis server: it counts the MGETs
that pass and can hold Redis's replies, so "a read is in flight" is a state the test makes, not a race."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from sqlalchemy.engine import make_url

from tierpilot.kit import generations
from tierpilot.kit.generations import GenerationCache


class Proxy:
    """127.0.0.1:<port> -> the Redis server; counts the MGET commands sent through it and holds replies while
    ``held`` (those already received from Redis are kept in ``parked`` until ``release``)."""

    def __init__(self, upstream: str) -> None:
        url = make_url(upstream.replace("redis://", "postgresql://", 1))
        self.host, self.port, self.db = url.host or "127.0.0.1", url.port or 6379, url.database or "0"
        self.mgets = 0
        self.connections = 0
        self.parked = 0  # bytes of replies held back
        self.held = False
        self._open = asyncio.Event()
        self._open.set()
        self._changed = asyncio.Condition()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"redis://127.0.0.1:{self._server.sockets[0].getsockname()[1]}/{self.db}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def hold(self) -> None:
        self.held = True
        self._open.clear()

    async def release(self) -> None:
        self.held = False
        self._open.set()
        await asyncio.sleep(0)

    async def until(self, check: Callable[[], bool]) -> None:
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(check), 5)

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        self.connections += 1
        upstream_r, upstream_w = await asyncio.open_connection(self.host, self.port)
        for pump in (self._requests(client_r, upstream_w), self._replies(upstream_r, client_w)):
            task = asyncio.ensure_future(pump)
            self._tasks.add(task)

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def _requests(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.closing(writer):
            while data := await reader.read(65536):
                self.mgets += data.upper().count(b"\r\nMGET\r\n")
                writer.write(data)
                await self._notify()

    async def _replies(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.closing(writer):
            while data := await reader.read(65536):
                if self.held:
                    self.parked += len(data)
                    await self._notify()
                    await self._open.wait()
                    self.parked -= len(data)
                writer.write(data)


@contextlib.asynccontextmanager
async def proxied(redis_url: str) -> AsyncIterator[Proxy]:
    proxy = Proxy(redis_url)
    await proxy.start()
    try:
        yield proxy
    finally:
        await proxy.stop()


def _name() -> str:
    return f"test:{uuid.uuid4().hex[:8]}"


def _started(url: str, timeout: float = 10.0) -> GenerationCache[str, str]:
    """A cache reading through ``url``, whose reads wait up to ``timeout`` (a held reply is not a failure)."""
    cache: GenerationCache[str, str] = GenerationCache(_name(), 60)
    cache.start(url)
    generations._counters[url].TIMEOUT_S = timeout
    return cache


def _run(scenario: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(asyncio.wait_for(scenario(), 30))


def test_callers_asking_together_share_one_read_of_every_counter_of_the_url(redis_url: str) -> None:
    async def scenario() -> None:
        async with proxied(redis_url) as proxy:
            credentials, sharing = _started(proxy.url), _started(proxy.url)
            moved = generations.bump(redis_url, sharing.name)
            answers = await asyncio.gather(*(cache.generation() for _ in range(50) for cache in (credentials, sharing)))
            assert proxy.mgets == 1  # 100 callers, two counters: one round trip
            assert set(answers[0::2]) == {0} and set(answers[1::2]) == {moved}
            await credentials.stop()
            await sharing.stop()

    _run(scenario)


def test_one_request_checking_several_counters_waits_for_one_read(redis_url: str) -> None:
    # a request's caller, its bucket's sharing state and the object it reads: one Seen, one read, sent after the
    # request began; a request after a change reads again with a Seen of its own
    async def scenario() -> None:
        async with proxied(redis_url) as proxy:
            credentials, sharing = _started(proxy.url), _started(proxy.url)
            await credentials.generation()  # connected
            seen = generations.Seen()
            first = [await credentials.generation(seen), await sharing.generation(seen),
                     await credentials.generation(seen)]
            assert proxy.mgets == 2
            moved = generations.bump(redis_url, sharing.name)
            assert await sharing.generation(seen) == first[1] != moved  # this request began before the change
            assert await sharing.generation(generations.Seen()) == moved and proxy.mgets == 3
            await credentials.stop()
            await sharing.stop()

    _run(scenario)


def test_callers_that_ask_while_a_read_is_in_flight_share_the_next_one(redis_url: str) -> None:
    async def scenario() -> None:
        async with proxied(redis_url) as proxy:
            cache = _started(proxy.url)
            await cache.generation()  # connected
            proxy.hold()
            first = asyncio.ensure_future(cache.generation())
            await proxy.until(lambda: proxy.mgets == 2 and proxy.parked > 0)
            later = [asyncio.ensure_future(cache.generation()) for _ in range(64)]
            await asyncio.sleep(0)
            assert proxy.mgets == 2  # none of them was sent while one is in flight
            await proxy.release()
            await asyncio.gather(first, *later)
            assert proxy.mgets == 3  # the 64 later callers: one read, sent when the first returned
            await cache.stop()

    _run(scenario)


def test_a_caller_asking_after_a_change_gets_the_moved_counter_even_while_an_older_read_is_in_flight(
        redis_url: str) -> None:
    async def scenario() -> None:
        async with proxied(redis_url) as proxy:
            cache = _started(proxy.url)
            before = await cache.generation()
            proxy.hold()
            in_flight = asyncio.ensure_future(cache.generation())
            # Redis has answered the read (with the counter as it was) and the answer is on its way back
            await proxy.until(lambda: proxy.parked > 0)
            moved = generations.bump(redis_url, cache.name)  # a writer moves the counter, then answers its client
            after_the_answer = asyncio.ensure_future(cache.generation())  # a request that starts after that
            await asyncio.sleep(0)
            await proxy.release()
            assert await in_flight == before
            assert await after_the_answer == moved != before
            cache.put("key", "read before the change", before)  # what the in-flight request would cache
            assert cache.get("key", moved) is None
            await cache.stop()

    _run(scenario)


def test_while_redis_does_not_answer_readers_get_none_at_once_then_try_again(redis_url: str) -> None:
    class Clock:
        now = 1000.0

        def __call__(self) -> float:
            return self.now

    async def scenario() -> None:
        async with proxied(redis_url) as proxy:
            cache = _started(proxy.url)
            counters = generations._counters[proxy.url]
            counters.clock = clock = Clock()
            value = await cache.generation()
            cache.put("key", "value", value)
            counters.TIMEOUT_S = 0.05
            proxy.hold()  # Redis stops answering
            assert await cache.generation() is None  # after TIMEOUT_S
            assert cache.get("key", None) is None
            assert proxy.mgets == 2 and proxy.connections == 1
            await proxy.release()  # the late reply reaches a connection the reader has closed
            clock.now += generations.RETRY_S - 0.01
            assert await cache.generation() is None  # no wait, no read within RETRY_S
            assert proxy.mgets == 2
            clock.now += 0.02
            assert await cache.generation() == value  # a new connection, not the late reply of the old one
            assert proxy.mgets == 3 and proxy.connections == 2
            await cache.stop()

    _run(scenario)


def test_a_process_holds_one_reader_per_url_while_any_cache_uses_it(redis_url: str) -> None:
    async def scenario() -> None:
        first: GenerationCache[str, str] = GenerationCache(_name(), 60)
        second: GenerationCache[str, str] = GenerationCache(_name(), 60)
        first.start(redis_url)
        second.start(redis_url)
        assert generations._counters[redis_url].keys.keys() == {generations.PREFIX + first.name,
                                                                generations.PREFIX + second.name}
        await first.generation()
        await first.stop()
        assert await second.generation() == 0
        await second.stop()
        assert redis_url not in generations._counters

    _run(scenario)
