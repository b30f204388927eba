"""Storage prices of tiers, from their price catalog entry (``tier.price_ref``), for previews and metering.

A tier without a price reference (or one naming an unknown catalog or class) costs nothing here; the
preview says which tiers are unpriced rather than guessing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from sqlalchemy.orm import Session

from tierpilot.kit.errors import NotFound
from tierpilot.pricing.catalogs import resolve_catalog_id
from tierpilot.pricing.engine import DAYS_PER_MONTH, GIB, band_cost
from tierpilot.pricing.schemas import Catalog, StorageClass
from tierpilot.tiers.models import Tier

ZERO = Decimal(0)
NANO = Decimal(10**9)


@dataclass(frozen=True)
class TierPrice:
    tier_id: int
    label: str  # "catalog:CLASS"
    cls: StorageClass
    catalog: Catalog

    @property
    def min_billable_bytes(self) -> int:
        return self.cls.min_billable_bytes

    @property
    def own_overhead_bytes(self) -> int:
        return sum((o.bytes for o in self.cls.object_overhead if o.billed_as is None), 0)

    def billable_bytes(self, size: int) -> int:
        """What one object is billed as: at least the class's minimum, plus its per-object overhead."""
        return max(size, self.min_billable_bytes) + self.own_overhead_bytes

    def monthly(self, billable_bytes: int, objects: int) -> Decimal:
        """A month of storage for this much billable volume (volume bands applied), plus overhead billed
        at other classes' rates (Glacier's 8 KiB per object at Standard)."""
        cost = band_cost(self.cls.storage, Decimal(billable_bytes) / GIB)
        for o in self.cls.object_overhead:
            if o.billed_as is not None:
                cost += band_cost(self.catalog.storage_class(o.billed_as).storage, Decimal(objects * o.bytes) / GIB)
        return cost

    def per_gib_month(self) -> Decimal:
        return self.cls.storage[0].price

    def early_deletion(self, size: int, days_short: float) -> Decimal:
        """Storage still owed when an object leaves ``days_short`` days before the minimum duration."""
        if days_short <= 0:
            return ZERO
        month = Decimal(self.billable_bytes(size)) / GIB * self.per_gib_month()
        return month * Decimal(str(round(days_short, 6))) / DAYS_PER_MONTH

    def transition_requests(self, objects: int) -> Decimal:
        return self.cls.transition_per_1k * objects / 1000


@dataclass
class Prices:
    by_tier: dict[int, TierPrice] = field(default_factory=dict)
    unpriced: list[str] = field(default_factory=list)

    def get(self, tier_id: int) -> TierPrice | None:
        return self.by_tier.get(tier_id)


def _catalog(catalogs: Mapping[str, Catalog], catalog_id: str) -> Catalog | None:
    # a price_ref may name a catalog without its date (the newest), as tiers.service accepts it
    try:
        return catalogs[resolve_catalog_id(catalog_id, catalogs)] if catalog_id else None
    except NotFound:
        return None


def tier_prices(session: Session, tiers: Sequence[Tier]) -> Prices:
    """The price of each tier that names a known catalog and class."""
    from tierpilot.pricing.service import all_catalogs

    catalogs: Mapping[str, Catalog] = all_catalogs(session)
    out = Prices()
    for tier in tiers:
        ref = tier.price_ref or {}
        catalog = _catalog(catalogs, str(ref.get("catalog", "")))
        cls_id = str(ref.get("storage_class") or ((tier.storage_classes or ["STANDARD"])[0]))
        if catalog is None:
            out.unpriced.append(tier.name)
            continue
        try:
            cls = catalog.storage_class(cls_id)
        except KeyError:
            out.unpriced.append(tier.name)
            continue
        out.by_tier[tier.id] = TierPrice(tier_id=tier.id, label=f"{catalog.id}:{cls.id}", cls=cls, catalog=catalog)
    return out


def to_nano(amount: Decimal) -> int:
    return int((amount * NANO).to_integral_value())


def from_nano(nano: int) -> Decimal:
    return Decimal(nano) / NANO
