"""How long spend's restore read (``restores.repository.items_for_spend``) takes over many restore items, on
SQLite: the table as it is, with indexes on ``requested_at`` and ``expires_at`` (made in the scratch file only),
the same SQL through the bare DB-API cursor (no SQLAlchemy types), and the whole of spend's restore pricing over
six months (``spend.service._restores``, the read included), medians of 5 runs each.

Usage: ``.venv/bin/python bench/spend_restores.py [ROWS] [DIR]`` (default 1,000,000 items requested evenly over
two years, each ready after 4 h and kept 7 days; a six-month window, as ``GET /api/spend`` reads).
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session

import tierpilot.app.models  # noqa: F401  (every table on the metadata: the foreign keys name them)
from bench.figures import Run, record
from tierpilot.pricing.catalogs import shipped_catalogs
from tierpilot.restores import repository
from tierpilot.restores.models import RestoreItem
from tierpilot.spend import service
from tierpilot.spend.stored import Month, Priced, month_end, shift

N = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
PATH = Path(sys.argv[2] if len(sys.argv) > 2 else tempfile.gettempdir()) / f"spend-restores-{N}.db"
NOW = datetime(2026, 11, 28, tzinfo=UTC)
SINCE = datetime(2026, 6, 1, tzinfo=UTC)
SQL = ("select bucket, tier_id, speed, size, days, requested_at, ready_at, expires_at, state from restore_items "
       "where requested_at is not null and requested_at < :u and (requested_at >= :s or (ready_at is not null and "
       "ready_at < :u and (expires_at is null or expires_at >= :s)))")
engine = create_engine(f"sqlite:///{PATH}")
TOTALS: list[float] = []  # what the restores cost (USD), per priced run: the same on both sides of an A/B


def fill() -> None:
    RestoreItem.metadata.create_all(engine, tables=[RestoreItem.__table__])
    with engine.begin() as c:
        c.execute(text("drop index if exists bench_requested_at"))
        c.execute(text("drop index if exists bench_expires_at"))
        if c.execute(text("select count(*) from restore_items")).scalar():
            return
        rng = random.Random(17)
        rows = []
        for i in range(N):
            asked = NOW - timedelta(seconds=rng.randrange(0, 2 * 365 * 86400))
            ready = asked + timedelta(hours=4)
            rows.append(dict(owner_id=1, bucket="b", key=f"k{i}", tier_id=1, locator=f"l{i}", speed="bulk", days=7,
                             size=1 << 20, state="expired", requested_at=asked, ready_at=ready,
                             expires_at=ready + timedelta(days=7)))
            if len(rows) == 50_000:
                c.execute(RestoreItem.__table__.insert(), rows)
                rows = []
        if rows:
            c.execute(RestoreItem.__table__.insert(), rows)


def through_repository() -> int:
    with Session(engine) as s:
        return sum(1 for _ in repository.items_for_spend(s, SINCE, NOW))


def bare() -> int:
    raw = engine.raw_connection()
    try:
        fmt = "%Y-%m-%d %H:%M:%S.%f"
        cur = raw.cursor()
        until, since = NOW.strftime(fmt), SINCE.strftime(fmt)
        cur.execute(SQL.replace(":u", "?").replace(":s", "?"), (until, since, until, since))
        return sum(1 for _ in cur)
    finally:
        raw.close()


def priced() -> int:
    tokyo = shipped_catalogs()["aws-ap-northeast-1-2026"]
    prices = {1: Priced(tokyo, tokyo.storage_class("GLACIER"))}
    months = []
    first = SINCE.date()
    while first <= NOW.date():
        stop = month_end(first) + timedelta(days=1)
        months.append(Month(first, datetime(first.year, first.month, 1, tzinfo=UTC),
                            datetime(stop.year, stop.month, 1, tzinfo=UTC), prices))
        first = shift(first, 1)
    with Session(engine) as s:
        out = service._restores(s, {"b": 1}, months, NOW)
    TOTALS.append(float(sum((r.fees + r.copy for r in out.values()), Decimal(0))))
    return len(out)


def median_s(fn: Callable[[], int]) -> tuple[float, int]:
    runs = []
    n = 0
    for _ in range(5):
        t = time.perf_counter()
        n = fn()
        runs.append(time.perf_counter() - t)
    return statistics.median(runs), n


def plan() -> list[str]:
    with engine.connect() as c:
        return [str(p[-1]) for p in c.execute(text("explain query plan " + SQL), {"u": NOW, "s": SINCE})]


def main() -> None:
    run = Run()
    fill()
    medians: dict[str, tuple[float, int]] = {}
    for label, fn in (("through the repository, table as it is", through_repository),
                      ("bare SQL, table as it is", bare),
                      ("priced by spend over six months (read included)", priced)):
        seconds, n = medians[label] = median_s(fn)
        print(f"{label}: {N} items, {n} returned, median {seconds * 1000:.0f} ms, plan {plan()}")
    with engine.begin() as c:
        c.execute(text("create index bench_requested_at on restore_items(requested_at)"))
        c.execute(text("create index bench_expires_at on restore_items(expires_at)"))
        c.execute(text("analyze"))
    print(f"restores priced at {TOTALS[-1]:.6f} USD")
    seconds, n = median_s(through_repository)
    print(f"through the repository, with the indexes: {n} returned, median {seconds * 1000:.0f} ms, plan {plan()}")
    through, returned = medians["through the repository, table as it is"]
    cursor = medians["bare SQL, table as it is"][0]
    record([run.row("spend.restores_read", f"spend's read of six months' restores, {returned:,} of {N:,} items, SQLite",
                    through, "s", "the same SQL through the bare DB-API cursor", cursor)])


if __name__ == "__main__":
    main()
