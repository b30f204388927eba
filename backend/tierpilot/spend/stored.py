"""Stored bytes as spend bills them: the pieces of storage the catalog and its history hold, the tier prices of a
month, and stored byte-seconds per month (the live window of ``GET /api/spend``) or per day (the roll-up).

A piece is ``versions`` versions of ``nbytes`` in all on one bucket's tier over [start, end): the versions the
catalog holds (from when their bytes came to their tier: creation, or the last lifecycle move), a correction for
versions moved since (their current tier holds them only from the move), and every span the catalog's history
says ended (deleted, overwritten or moved away), which also owes what leaving before the class's minimum storage
duration leaves unpaid, in the month it left.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import NamedTuple

from sqlalchemy.orm import Session

from tierpilot.catalog import repository as catalog_repository
from tierpilot.planner import service as pricing
from tierpilot.pricing.engine import DAYS_PER_MONTH, own_overhead_bytes
from tierpilot.pricing.schemas import Catalog, StorageClass
from tierpilot.spend import repository
from tierpilot.tiers import repository as tiers_repository


@dataclass(frozen=True)
class Priced:
    catalog: Catalog
    cls: StorageClass


def catalog_of_month(catalogs: Mapping[str, Catalog], ref: str, last_day: date) -> Catalog | None:
    """The catalog a tier's price_ref names, as it stood in a month: of the same provider and region, the
    newest valid by the month's last day (the referenced one when none was)."""
    named = catalogs.get(ref)
    base = ref[:-5] if named is not None and re.search(r"-\d{4}$", ref) else ref
    dated = [c for c in catalogs.values()
             if (c.id == base or (c.id.startswith(base + "-") and c.id[len(base) + 1:].isdigit()))
             and c.valid_from <= last_day]
    if dated:
        return max(dated, key=lambda c: (c.valid_from, c.id))
    if named is not None:
        return named
    undated = [c for c in catalogs.values() if c.id.startswith(base + "-") and c.id[len(base) + 1:].isdigit()]
    return min(undated, key=lambda c: (c.valid_from, c.id)) if undated else None


def tier_prices(session: Session, tier_ids: Iterable[int], last_day: date,
                catalogs: Mapping[str, Catalog] | None = None) -> tuple[dict[int, Priced], dict[int, str]]:
    """Each tier's catalog class as it stood on a month's last day (tiers without a usable price_ref are left out)
    and every tier's name."""
    catalogs = pricing.all_catalogs(session) if catalogs is None else catalogs
    tiers = tiers_repository.tiers_by_id(session, tier_ids)
    out: dict[int, Priced] = {}
    names = {t.id: t.name for t in tiers.values()}
    for tier in tiers.values():
        ref = tier.price_ref or {}
        catalog = catalog_of_month(catalogs, str(ref.get("catalog") or ""), last_day) if ref.get("catalog") else None
        class_id = str(ref.get("storage_class") or (tier.storage_classes or ["STANDARD"])[0])
        if catalog is None:
            continue
        try:
            out[tier.id] = Priced(catalog, catalog.storage_class(class_id))
        except KeyError:
            continue
    return out, names


def month_end(first: date) -> date:
    return shift(first, 1) - timedelta(days=1)


def shift(first: date, months: int) -> date:
    index = first.year * 12 + first.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


@dataclass(frozen=True)
class Month:
    first: date
    start: datetime
    stop: datetime  # the next month's start
    prices: dict[int, Priced]

    def overlap_s(self, since: datetime, until: datetime) -> int:
        """Whole seconds of [since, until) inside the month."""
        return max(0, int((min(until, self.stop) - max(since, self.start)).total_seconds()))

    def billing(self, tier_id: int) -> tuple[int, int]:
        """(minimum billable size, own overhead per object) of the tier's class this month."""
        p = self.prices.get(tier_id)
        return (0, 0) if p is None else (p.cls.min_billable_bytes, own_overhead_bytes(p.cls))

    def min_storage_s(self, tier_id: int) -> int:
        p = self.prices.get(tier_id)
        return 0 if p is None else p.cls.min_storage_days * 86400


def month_of(session: Session, first: date, tier_ids: Iterable[int],
             catalogs: Mapping[str, Catalog] | None = None) -> Month:
    stop = shift(first, 1)
    prices, _ = tier_prices(session, tier_ids, month_end(first), catalogs)
    return Month(first, datetime(first.year, first.month, 1, tzinfo=UTC),
                 datetime(stop.year, stop.month, 1, tzinfo=UTC), prices)


@dataclass
class Stored:
    """Stored bytes of one bucket on one tier over a month or a day (integers: summed per piece, priced once)."""

    byte_s: int | Decimal = 0  # bytes x seconds stored
    billable_byte_s: int | Decimal = 0
    short_byte_s: int | Decimal = 0  # billable bytes x seconds still owed for leaving before the minimum duration
    object_s: int | Decimal = 0  # versions x seconds: overhead billed at another class's rate is per object


class Piece(NamedTuple):
    bucket_id: int
    tier_id: int
    nbytes: int
    versions: int
    size: int | None  # each version's size; None: all at least every class's minimum billable size
    start: int  # epoch seconds
    end: int
    ended: bool  # a span of the history: leaving before the minimum duration owes the rest


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def pieces(session: Session, bucket_ids: Sequence[int], since: datetime, now: datetime,
           exact_below: int, held: Held | None = None) -> Iterator[Piece]:
    """What the buckets stored from ``since`` to ``now`` (starts before ``since`` are summed as ``since`` in the
    database, except the history's spans, whose true start the minimum duration needs). ``held``: also filled with
    what they store now (``Held``), from the same rows: one grouped read of the buckets' objects, not two."""
    until = int(now.timestamp())
    floor = int(since.timestamp())
    now_held: dict[tuple[int, int, int | None], list[int]] = {}
    for bucket_id, tier_id, at, n, nbytes, size in catalog_repository.stored_totals(session, bucket_ids, since,
                                                                                     exact_below):
        if held is not None:
            acc = now_held.setdefault((bucket_id, tier_id, size), [0, 0])
            acc[0] += n
            acc[1] += nbytes
        yield Piece(bucket_id, tier_id, nbytes, n, size, int(_aware(at).timestamp()), until, False)
    if held is not None:
        _hold(held, now_held)
    # a lifecycle move keeps a version's creation time: its current tier holds it only since the move
    for noncurrent, moved in enumerate(repository.last_moves(session, bucket_ids, since)):
        ids = sorted(moved)
        for chunk in range(0, len(ids), 500):
            for row_id, bucket_id, tier_id, size, created in catalog_repository.stored_objects(
                    session, ids[chunk:chunk + 500], noncurrent=bool(noncurrent)):
                counted = max(int(_aware(created).timestamp()), floor)
                yield Piece(bucket_id, tier_id, -size, -1, size, counted, int(_aware(moved[row_id]).timestamp()),
                            False)
    for bucket_id, tier_id, size, start, ended_at in repository.ended_span_seconds(session, bucket_ids, since,
                                                                                    now + timedelta(days=1)):
        yield Piece(bucket_id, tier_id, size, 1, size, start, min(ended_at, until), True)


def exact_below(catalogs: Iterable[Catalog]) -> int:
    """Sizes below the largest minimum billable size are summed apart: each bills as at least that minimum."""
    return 1 + max((c.min_billable_bytes for cat in catalogs for c in cat.classes), default=0)


def by_month(session: Session, bucket_ids: Sequence[int], months: Sequence[Month], since: datetime,
             now: datetime, held: Held | None = None, exact: int = 0) -> dict[tuple[int, int, int], Stored]:
    """(month index, bucket, tier) -> stored bytes from ``since`` (at the earliest the first month's start) to
    ``now``, with what leaving before the class's minimum duration still owes, in the month the bytes left.

    ``held`` is filled with what the buckets store now, sizes below ``exact`` summed apart (a bound above the
    months' own only splits their groups finer, which bills the same)."""
    out: dict[tuple[int, int, int], Stored] = {}
    floor = int(since.timestamp())
    bounds = [(max(int(m.start.timestamp()), floor), int(m.stop.timestamp())) for m in months]
    if not months or bounds[-1][0] >= bounds[-1][1]:
        if held is not None:
            _hold(held, _held_groups(session, bucket_ids, now, exact))
        return out
    rules: list[dict[int, tuple[int, int]]] = [{} for _ in months]
    catalogs = [p.catalog for m in months for p in m.prices.values()]
    for bucket_id, tier_id, nbytes, count, size, start, end, ended in pieces(
            session, bucket_ids, max(since, months[0].start), now, max(exact, exact_below(catalogs)), held):
        for i, (lo, hi) in enumerate(bounds):
            seconds = (end if end < hi else hi) - (start if start > lo else lo)
            if seconds > 0:
                rule = rules[i].get(tier_id)
                if rule is None:
                    rule = rules[i][tier_id] = months[i].billing(tier_id)
                acc = out.get((i, bucket_id, tier_id))
                if acc is None:
                    acc = out[(i, bucket_id, tier_id)] = Stored()
                billable = nbytes if size is None else count * max(size, rule[0])
                acc.byte_s += nbytes * seconds
                acc.billable_byte_s += (billable + count * rule[1]) * seconds
                acc.object_s += count * seconds
            if ended and lo <= end < hi:
                short = months[i].min_storage_s(tier_id) - (end - start)
                if short > 0:
                    minimum, overhead = months[i].billing(tier_id)
                    acc = out.setdefault((i, bucket_id, tier_id), Stored())
                    acc.short_byte_s += (max(nbytes, minimum) + overhead) * short
    return out


# bucket -> tier -> [(versions, bytes, each one's size or None)] of what the buckets store now
Held = dict[int, dict[int, list[tuple[int, int, int | None]]]]
MONTH_S = DAYS_PER_MONTH * 86400


def _held_groups(session: Session, bucket_ids: Sequence[int], now: datetime, exact: int
                 ) -> dict[tuple[int, int, int | None], list[int]]:
    """Every version the buckets store now, current and noncurrent (delete markers hold no bytes), by bucket, tier
    and (below ``exact`` bytes) size: (versions, bytes)."""
    out: dict[tuple[int, int, int | None], list[int]] = {}
    for bucket_id, tier_id, _, n, nbytes, size in catalog_repository.stored_totals(session, bucket_ids, now, exact):
        acc = out.setdefault((bucket_id, tier_id, size), [0, 0])
        acc[0] += n
        acc[1] += nbytes
    return out


def _hold(held: Held, groups: Mapping[tuple[int, int, int | None], Sequence[int]]) -> None:
    for (bucket_id, tier_id, size), (n, nbytes) in groups.items():
        held.setdefault(bucket_id, {}).setdefault(tier_id, []).append((n, nbytes, size))


def month_held(groups: Iterable[tuple[int, int, int | None]], rule: tuple[int, int]) -> Stored:
    """A month of what one bucket's tier holds now, billed as the month's actual storage is: each version at least
    the class's minimum billable size, plus its per-object overhead (``rule``: ``Month.billing``)."""
    minimum, overhead = rule
    acc = Stored()
    for n, nbytes, size in groups:
        billable = nbytes if size is None else n * max(size, minimum)
        acc.byte_s += nbytes * MONTH_S
        acc.billable_byte_s += (billable + n * overhead) * MONTH_S
        acc.object_s += n * MONTH_S
    return acc
