"""The gateway's cache misses under load (issue 18): requests in flight that miss the same key, bucket name and
credentials generation at once share one read in a worker thread instead of each making it; a different
generation, or a confirming read, is never answered by a read begun for another."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

from tierpilot.gateway import auth


def _counting() -> tuple[list[str], Callable[[str], str]]:
    calls: list[str] = []
    lock = threading.Lock()

    def read(name: str) -> str:
        with lock:
            calls.append(name)
        time.sleep(0.05)  # a database read: the other requests arrive while it runs
        return f"row of {name}"

    return calls, read


def test_requests_that_miss_together_share_one_read() -> None:
    calls, read = _counting()

    async def many() -> list[str]:
        return await asyncio.gather(*(auth._once(("credential", "AKIA1", 7), read, "AKIA1")
                                      for _ in range(64)))

    assert asyncio.run(many()) == ["row of AKIA1"] * 64
    assert calls == ["AKIA1"]
    assert not auth._loading  # nothing kept once answered: the next miss reads again


def test_another_generation_or_key_reads_for_itself() -> None:
    calls, read = _counting()

    async def mixed() -> None:
        await asyncio.gather(auth._once(("credential", "AKIA1", 7), read, "AKIA1"),
                             auth._once(("credential", "AKIA1", 8), read, "AKIA1"),
                             auth._once(("credential", "AKIA2", 8), read, "AKIA2"))

    asyncio.run(mixed())
    assert sorted(calls) == ["AKIA1", "AKIA1", "AKIA2"]


def test_a_failed_read_fails_every_request_that_shared_it_and_is_not_kept() -> None:
    def broken(name: str) -> str:
        time.sleep(0.02)
        raise LookupError(name)

    async def failing() -> list[object]:
        return await asyncio.gather(*(auth._once(("bucket", "b"), broken, "b") for _ in range(5)),
                                    return_exceptions=True)

    assert all(isinstance(r, LookupError) for r in asyncio.run(failing()))
    assert not auth._loading
