"""Bytes per reservation per second: counted in the gateway, parked in Redis, rolled up by the worker.

A gateway adds to an in-memory counter per chunk and flushes once a second (one pipelined Redis
transaction: HINCRBY per reservation-second plus a pending-set entry). The worker's roll-up takes
each pending reservation's counters atomically (read + delete + unmark in one script, so a flush
racing with it lands in the next roll-up) and adds them to the database. Without Redis the gateway
writes its counters to the database itself.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from tierpilot.kit.db import transaction
from tierpilot.reservations import service

log = logging.getLogger(__name__)

PENDING_KEY = "tp:meter:pending"
COUNTER_TTL_S = 7 * 86400
MAX_BUFFERED = 200_000  # reservation-seconds kept in memory while neither Redis nor the database answers

TAKE_SCRIPT = """
local rows = redis.call('HGETALL', KEYS[1])
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[1])
return rows
"""

Row = tuple[str, int, int]  # reservation id, Unix second, bytes


def counter_key(reservation_id: str) -> str:
    return f"tp:meter:{reservation_id}"


class Meter:
    """Per-process counters; ``add`` is called per chunk and only touches a dict."""

    def __init__(self) -> None:
        self._counts: dict[tuple[str, int], int] = {}
        self.dropped = 0

    def add(self, reservation_id: str, nbytes: int) -> None:
        key = (reservation_id, int(time.time()))
        self._counts[key] = self._counts.get(key, 0) + nbytes

    def take(self) -> list[Row]:
        counts, self._counts = self._counts, {}
        return [(rid, sec, n) for (rid, sec), n in counts.items()]

    def put_back(self, rows: Sequence[Row]) -> None:
        for rid, sec, n in rows:
            if len(self._counts) >= MAX_BUFFERED:
                self.dropped += n
                continue
            self._counts[(rid, sec)] = self._counts.get((rid, sec), 0) + n


async def push_to_redis(client: Any, rows: Sequence[Row]) -> None:
    pipe = client.pipeline(transaction=True)
    for rid, sec, n in rows:
        pipe.hincrby(counter_key(rid), str(sec), n)
        pipe.expire(counter_key(rid), COUNTER_TTL_S)
        pipe.sadd(PENDING_KEY, rid)
    await pipe.execute()


def write_to_database(rows: Sequence[Row]) -> int:
    """Store counters; returns how many were kept (those of deleted reservations are dropped)."""
    with transaction(write=True) as session:
        return service.record_samples(session, rows)


def rollup(client: Any) -> int:
    """Move every pending counter from Redis into the database; returns reservation-seconds stored.

    ``client`` is a synchronous Redis client. Counters taken but not stored (database error) are
    put back, so a failed roll-up loses nothing.
    """
    take = client.register_script(TAKE_SCRIPT)
    stored = 0
    for raw in client.smembers(PENDING_KEY):
        rid = raw.decode() if isinstance(raw, bytes) else str(raw)
        flat = take(keys=[counter_key(rid), PENDING_KEY], args=[rid])
        rows = [(rid, int(flat[i]), int(flat[i + 1])) for i in range(0, len(flat), 2)]
        if not rows:
            continue
        try:
            stored += write_to_database(rows)
        except Exception:
            pipe = client.pipeline(transaction=True)
            for _, sec, n in rows:
                pipe.hincrby(counter_key(rid), str(sec), n)
            pipe.sadd(PENDING_KEY, rid)
            pipe.execute()
            raise
    return stored
