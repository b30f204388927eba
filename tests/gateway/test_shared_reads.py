"""The gateway's cache misses under load: requests in flight that miss the same key, bucket name and
credentials generation at once share one read in a worker thread instead of each making it; a different
generation, or a confirming read, is never answered by a read begun for another."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

from tests.waiting import DEADLINE_S
from tierpilot.gateway import auth

T = TypeVar("T")


def _counting() -> tuple[list[str], Callable[[str], str], threading.Event]:
    """A read that is counted and runs until the test releases it: the other requests arrive while it runs."""
    calls: list[str] = []
    lock = threading.Lock()
    release = threading.Event()

    def read(name: str) -> str:
        with lock:
            calls.append(name)
        assert release.wait(DEADLINE_S)
        return f"row of {name}"

    return calls, read, release


async def _all_asked(requests: Awaitable[T], release: threading.Event) -> T:
    """Await ``requests`` (a gather), letting the held reads go only once every request has asked: the gather's
    tasks each run up to their first wait in the loop's turn that this one yields."""
    pending = asyncio.ensure_future(requests)
    await asyncio.sleep(0)
    release.set()
    return await pending


def test_requests_that_miss_together_share_one_read() -> None:
    calls, read, release = _counting()

    async def many() -> list[str]:
        return await _all_asked(asyncio.gather(*(auth._once(("credential", "AKIA1", 7), read, "AKIA1")
                                                 for _ in range(64))), release)

    assert asyncio.run(many()) == ["row of AKIA1"] * 64
    assert calls == ["AKIA1"]
    assert not auth._loading  # nothing kept once answered: the next miss reads again


def test_another_generation_or_key_reads_for_itself() -> None:
    calls, read, release = _counting()

    async def mixed() -> None:
        await _all_asked(asyncio.gather(auth._once(("credential", "AKIA1", 7), read, "AKIA1"),
                                        auth._once(("credential", "AKIA1", 8), read, "AKIA1"),
                                        auth._once(("credential", "AKIA2", 8), read, "AKIA2")), release)

    asyncio.run(mixed())
    assert sorted(calls) == ["AKIA1", "AKIA1", "AKIA2"]


def test_a_failed_read_fails_every_request_that_shared_it_and_is_not_kept() -> None:
    _, read, release = _counting()

    def broken(name: str) -> str:
        read(name)
        raise LookupError(name)

    async def failing() -> list[object]:
        return await _all_asked(asyncio.gather(*(auth._once(("bucket", "b"), broken, "b") for _ in range(5)),
                                               return_exceptions=True), release)

    assert all(isinstance(r, LookupError) for r in asyncio.run(failing()))
    assert not auth._loading
