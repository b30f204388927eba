"""The daily roll-up of stored bytes: finished UTC days closed once, so ``GET /api/spend`` prices them from a few
rows per day, bucket and tier instead of from every version and span of the catalog.

A day is closed as the catalog and its history stand after it ended: its versions, the corrections of those
moved since and the spans that ended, cut into days (a piece adds its rate to every whole day it covers through
a running sum, and its seconds to its first and last day), with the minimum billable size, per-object overhead
and minimum storage duration of each tier's class in the day's month. The first run closes every day since the
oldest stored byte (the backfill of an installation that had data before the roll-up); later runs close the days
since the last one. Today is always computed live.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, timedelta

from sqlalchemy.orm import Session

from tierpilot.catalog import repository as catalog_repository
from tierpilot.kit.db import transaction, utcnow
from tierpilot.kit.settings import get_settings
from tierpilot.planner import service as pricing
from tierpilot.spend import repository
from tierpilot.spend.repository import DayRow
from tierpilot.spend.stored import Month, month_of, pieces
from tierpilot.spend.stored import exact_below as exact_size_below
from tierpilot.tiers import repository as tiers_repository

log = logging.getLogger(__name__)
DAY = 86400
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
PRUNE_BATCH = 5000



def _day(moment: datetime) -> date:
    return moment.astimezone(UTC).date()


def close_finished_days(session: Session, since: str | None, now: datetime) -> tuple[str, list[DayRow]]:
    """The rows of the finished days from ``since`` (None: from the oldest stored byte) to the start of ``now``'s
    day, and that day (the new mark)."""
    today = _day(now)
    until = int(datetime(today.year, today.month, today.day, tzinfo=UTC).timestamp())
    floor_at = EPOCH if since is None else datetime.fromisoformat(since).replace(tzinfo=UTC)
    floor = int(floor_at.timestamp())
    if floor >= until:
        return today.isoformat(), []
    catalogs = pricing.all_catalogs(session)
    tier_ids = set(tiers_repository.tiers_by_id(session, None))
    months: dict[date, Month] = {}

    def month(day_index: int) -> Month:
        first = date.fromordinal(EPOCH.date().toordinal() + day_index).replace(day=1)
        m = months.get(first)
        if m is None:
            m = months[first] = month_of(session, first, tier_ids, catalogs)
        return m

    # per (bucket, tier): the rates that start and stop on whole days, and the seconds of partial days
    steps: dict[tuple[int, int], dict[int, list[int]]] = defaultdict(dict)
    partial: dict[tuple[int, int], dict[int, list[int]]] = defaultdict(dict)

    def add(into: dict[int, list[int]], day_index: int, values: Sequence[int]) -> None:
        acc = into.get(day_index)
        if acc is None:
            into[day_index] = list(values)
        else:
            for k in range(4):
                acc[k] += values[k]

    bucket_ids = [b.id for b in catalog_repository.buckets_named(session, None, None)]
    for p in pieces(session, bucket_ids, floor_at, now, exact_size_below(catalogs.values())):
        key = (p.bucket_id, p.tier_id)
        start, end = max(p.start, floor), min(p.end, until)
        # a month's rules hold from its first day: cut the piece at month starts
        while start < end:
            first_day = start // DAY
            m = month(first_day)
            stop = min(end, int(m.stop.timestamp()))
            minimum, overhead = m.billing(p.tier_id)
            billable = p.nbytes if p.size is None else p.versions * max(p.size, minimum)
            rate = (p.nbytes, billable + p.versions * overhead, 0, p.versions)
            last_day = (stop - 1) // DAY
            if first_day == last_day:
                add(partial[key], first_day, tuple(v * (stop - start) for v in rate))
            else:
                add(partial[key], first_day, tuple(v * ((first_day + 1) * DAY - start) for v in rate))
                add(partial[key], last_day, tuple(v * (stop - last_day * DAY) for v in rate))
                if last_day > first_day + 1:
                    add(steps[key], first_day + 1, rate)
                    add(steps[key], last_day, tuple(-v for v in rate))
            start = stop
        if p.ended and floor <= p.end < until:
            m = month(p.end // DAY)
            short = m.min_storage_s(p.tier_id) - (p.end - p.start)
            if short > 0:
                minimum, overhead = m.billing(p.tier_id)
                add(partial[key], p.end // DAY, (0, 0, (max(p.nbytes, minimum) + overhead) * short, 0))
    rows: list[DayRow] = []
    for key in sorted(set(steps) | set(partial)):
        running = [0, 0, 0, 0]
        step, part = steps.get(key, {}), partial.get(key, {})
        days = sorted(set(step) | set(part))
        if not days:
            continue
        for day_index in range(days[0], days[-1] + 1):
            change = step.get(day_index)
            if change is not None:
                for k in range(4):
                    running[k] += change[k]
            seconds = part.get(day_index, (0, 0, 0, 0))
            values = [running[k] * DAY + seconds[k] for k in range(4)]
            if any(values):
                day = date.fromordinal(EPOCH.date().toordinal() + day_index).isoformat()
                rows.append((day, key[0], key[1], values[0], values[1], values[2], values[3]))
    return today.isoformat(), rows


def roll_up(clock: Callable[[], datetime] = utcnow) -> int:
    """Close the finished days not closed yet (safe to deliver twice: a run that finds the mark moved meanwhile
    stores nothing), then prune the history the roll-up no longer needs; returns how many rows were stored."""
    now = clock()
    # computed outside the write lock: a finished day's figures do not change while the catalog changes now
    with transaction() as session:
        since = repository.rollup_until(session)
        until, rows = close_finished_days(session, since, now)
    if since is not None and since >= until:
        return 0
    with transaction(write=True) as session:
        if not repository.store_days(session, since, until, rows):
            return 0
    log.info("spend roll-up: closed the days from %s to %s (%d rows)", since or "the oldest stored byte", until,
             len(rows))
    before = prune_before(now, until)
    pruned = 0
    while True:
        with transaction(write=True) as session:
            deleted = repository.prune_history(session, before, PRUNE_BATCH)
        pruned += deleted
        if deleted < PRUNE_BATCH:
            break
    if pruned:
        log.info("spend roll-up: pruned %d storage history rows that ended before %s", pruned, before)
    return len(rows)


def prune_before(now: datetime, until: str) -> datetime:
    """History rows that ended before this go: within the closed days and past the retention period (the rows
    stay ``TIERPILOT_SPEND_HISTORY_RETENTION_DAYS`` for the triggers' since-when lookups and for audits)."""
    keep = now - timedelta(days=get_settings().spend_history_retention_days)
    return min(keep, datetime.fromisoformat(until).replace(tzinfo=UTC))
