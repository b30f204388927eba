"""Restore quotes: what restoring objects of a tier costs per speed, from the tier's catalog class.

A tier's ``price_ref`` names a price catalog and class (``{"catalog": "aws-us-east-1-2026",
"storage_class": "GLACIER"}``); the class's restore entry per speed gives $/GiB, $/1,000 requests
and the typical recall time. The restored copy is billed at its copy class's storage rate for the
restore's days. Without a price sheet the cost is unknown (None), never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from tierpilot.pricing.engine import DAYS_PER_MONTH, GIB, THOUSAND, band_cost
from tierpilot.pricing.schemas import SPEEDS, Catalog, Speed, StorageClass


@dataclass(frozen=True)
class Cost:
    restore: Decimal
    retrieval: Decimal
    restored_copy: Decimal

    @property
    def total(self) -> Decimal:
        return self.restore + self.retrieval + self.restored_copy

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.restore + other.restore, self.retrieval + other.retrieval,
                    self.restored_copy + other.restored_copy)


ZERO_COST = Cost(Decimal(0), Decimal(0), Decimal(0))


@dataclass(frozen=True)
class RestorePricing:
    """A tier's price class (None: no usable price sheet) and the note saying why not."""

    cls: StorageClass | None
    copy_class: StorageClass | None
    note: str | None = None


def restore_pricing(catalog: Catalog, class_id: str) -> RestorePricing:
    """The class and its restored-copy class; KeyError when the catalog lacks either."""
    cls = catalog.storage_class(class_id)
    copy = catalog.storage_class(cls.restored_copy_class) if cls.restored_copy_class else None
    return RestorePricing(cls, copy)


def restore_cost(pricing: RestorePricing, speed: str, objects: int, nbytes: int, days: int) -> Cost | None:
    """Cost of restoring ``objects`` objects of ``nbytes`` in total at ``speed`` kept ``days`` days."""
    if pricing.cls is None:
        return None
    if not pricing.cls.restore:
        return ZERO_COST  # readable without a restore: nothing to pay for one
    entry = pricing.cls.restore.get(speed)  # type: ignore[call-overload]
    if entry is None:
        return None
    gib = Decimal(nbytes) / GIB
    copy = ZERO_COST.restored_copy
    if pricing.copy_class is not None:
        copy = band_cost(pricing.copy_class.storage, gib) * Decimal(days) / DAYS_PER_MONTH
    return Cost(restore=gib * entry.per_gib + Decimal(objects) * entry.per_1k_requests / THOUSAND,
                retrieval=gib * pricing.cls.retrieval_per_gib, restored_copy=copy)


def typical_hours(pricing: RestorePricing, speed: str) -> Decimal | None:
    """How long the price sheet says a recall at ``speed`` usually takes (None: it does not say)."""
    if pricing.cls is None or speed not in pricing.cls.restore:
        return None
    return pricing.cls.restore[speed].typical_hours  # type: ignore[index]


def speeds_offered(pricing: RestorePricing) -> tuple[Speed, ...]:
    """Speeds the tier's class offers (all when unpriced or restore-free)."""
    if pricing.cls is None or not pricing.cls.restore:
        return SPEEDS
    return tuple(s for s in SPEEDS if s in pricing.cls.restore)
