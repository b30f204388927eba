"""What a restore costs and how long it takes, per tier and speed (from the tier's price sheet).

A tier's ``price_ref`` names a price catalog and class (``{"catalog": "aws-us-east-1-2026",
"storage_class": "GLACIER"}``); the class's restore entry per speed gives $/GiB, $/1,000 requests
and the typical recall time. The restored copy is billed at its copy class's storage rate for the
restore's days. Without a price sheet the cost is unknown (None), never guessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy.orm import Session

from tierpilot.drivers.offline import DEFAULT_RESTORE_DELAYS
from tierpilot.kit.errors import DomainError
from tierpilot.pricing import repository as pricing_repository
from tierpilot.pricing.catalogs import resolve_catalog_id, shipped_catalogs, validate_catalog
from tierpilot.pricing.engine import DAYS_PER_MONTH, GIB, THOUSAND, band_cost
from tierpilot.pricing.schemas import Catalog, StorageClass
from tierpilot.restores.models import SPEEDS
from tierpilot.restores.schedule import PollSchedule
from tierpilot.tiers.models import Tier

# Field measurements of archive restores (Glacier: Standard ≈ 200 min, Bulk ≈ 330 min); expedited as
# AWS documents it (1-5 minutes). Used when a tier has neither known delays nor a price sheet.
MEASURED_TYPICAL_S: dict[str, float] = {"expedited": 5 * 60.0, "standard": 200 * 60.0, "bulk": 330 * 60.0}


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
class TierPricing:
    """A tier's price class (None: no usable price sheet) and the note saying why not."""

    cls: StorageClass | None
    copy_class: StorageClass | None
    note: str | None = None


def _catalog(session: Session, catalog_id: str) -> Catalog:
    shipped = shipped_catalogs()
    added = pricing_repository.get_catalog(session, catalog_id) if catalog_id not in shipped else None
    if added is not None:
        return validate_catalog(added.body)
    return shipped[resolve_catalog_id(catalog_id, shipped)]


def tier_pricing(session: Session, tier: Tier) -> TierPricing:
    ref = tier.price_ref or {}
    catalog_id, class_id = ref.get("catalog"), ref.get("storage_class")
    if not catalog_id or not class_id:
        return TierPricing(None, None, f"tier {tier.name} has no price sheet")
    try:
        catalog = _catalog(session, str(catalog_id))
        cls = catalog.storage_class(str(class_id))
        copy = catalog.storage_class(cls.restored_copy_class) if cls.restored_copy_class else None
    except (DomainError, KeyError) as exc:
        return TierPricing(None, None, f"tier {tier.name}: price sheet {catalog_id}/{class_id} unusable ({exc})")
    return TierPricing(cls, copy)


def restore_cost(pricing: TierPricing, speed: str, objects: int, nbytes: int, days: int) -> Cost | None:
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


def typical_seconds(tier: Tier, pricing: TierPricing, speed: str) -> float:
    """How long a recall usually takes on this tier: its configured delay (offline posix), else its
    price sheet's typical time, else the field measurements."""
    if tier.driver == "posix":
        delays: dict[str, float] = {str(k): v for k, v in DEFAULT_RESTORE_DELAYS.items()}
        delays.update(tier.restore_delays or {})
        return float(delays[speed])
    if pricing.cls is not None and speed in pricing.cls.restore:
        return float(pricing.cls.restore[speed].typical_hours) * 3600.0  # type: ignore[index]
    return MEASURED_TYPICAL_S[speed]


def expected_ready_s(tier: Tier, pricing: TierPricing, schedules: Mapping[str, PollSchedule], speed: str) -> float:
    """Seconds from the request until the poll that sees a typical recall finished."""
    return schedules[speed].first_offset_at_or_after(typical_seconds(tier, pricing, speed))


def speeds_offered(pricing: TierPricing) -> tuple[str, ...]:
    """Speeds the tier's class offers (all when unpriced or restore-free)."""
    if pricing.cls is None or not pricing.cls.restore:
        return SPEEDS
    return tuple(s for s in SPEEDS if s in pricing.cls.restore)
