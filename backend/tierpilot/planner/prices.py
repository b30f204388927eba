"""What the installation's tiers cost: each tier's ``price_ref`` turned into the values pricing computes with.

Pricing knows no tiers; this is the one place that reads a tier's price reference and hands it over.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from sqlalchemy.orm import Session

from tierpilot.kit.errors import DomainError
from tierpilot.planner import service as pricing
from tierpilot.pricing.lifecycle import PriceRef, Prices, price_tiers
from tierpilot.pricing.restores import RestorePricing, restore_pricing


class PricedTier(Protocol):
    """What pricing needs of a tier: the tiers domain's row or a ``TierSpec``."""

    @property
    def id(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def price_ref(self) -> Mapping[str, Any]: ...
    @property
    def storage_classes(self) -> Sequence[Any]: ...


def price_ref(tier: PricedTier) -> PriceRef:
    """The tier's reference; without a class it is priced at its first storage class."""
    ref = tier.price_ref or {}
    cls_id = ref.get("storage_class") or (tier.storage_classes or ["STANDARD"])[0]
    return PriceRef(tier_id=tier.id, tier_name=tier.name, catalog=str(ref.get("catalog", "")),
                    storage_class=str(cls_id))


def tier_prices(session: Session, tiers: Sequence[PricedTier]) -> Prices:
    """The storage price of each tier that names a known catalog and class (lifecycle previews and fees)."""
    return price_tiers(pricing.all_catalogs(session), [price_ref(t) for t in tiers])


def tier_restore_pricing(session: Session, tier: PricedTier) -> RestorePricing:
    """The tier's restore price class, or a note saying why it has none (restore previews and estimates)."""
    ref = tier.price_ref or {}
    catalog_id, class_id = ref.get("catalog"), ref.get("storage_class")
    if not catalog_id or not class_id:
        return RestorePricing(None, None, f"tier {tier.name} has no price sheet")
    try:
        return restore_pricing(pricing.catalog_by_ref(session, str(catalog_id)), str(class_id))
    except (DomainError, KeyError) as exc:
        return RestorePricing(None, None, f"tier {tier.name}: price sheet {catalog_id}/{class_id} unusable ({exc})")
