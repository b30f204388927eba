"""Restore quotes and the prices of installation tiers, from catalog classes handed in as values."""

from __future__ import annotations

from decimal import Decimal

from tierpilot.pricing.catalogs import shipped_catalogs
from tierpilot.pricing.engine import DAYS_PER_MONTH, GIB, band_cost
from tierpilot.pricing.lifecycle import PriceRef, price_tiers
from tierpilot.pricing.restores import ZERO_COST, RestorePricing, restore_cost, restore_pricing, speeds_offered
from tierpilot.pricing.schemas import SPEEDS

CATALOG = shipped_catalogs()["aws-us-east-1-2026"]


def test_a_restore_pays_per_gib_per_request_retrieval_and_the_copy_for_its_days() -> None:
    pricing = restore_pricing(CATALOG, "GLACIER")
    assert pricing.cls is not None and pricing.copy_class is not None
    entry = pricing.cls.restore["standard"]
    cost = restore_cost(pricing, "standard", objects=2000, nbytes=10 * 2**30, days=3)
    assert cost is not None
    assert cost.restore == 10 * entry.per_gib + 2000 * entry.per_1k_requests / 1000
    assert cost.retrieval == 10 * pricing.cls.retrieval_per_gib
    assert cost.restored_copy == band_cost(pricing.copy_class.storage, Decimal(10)) * 3 / DAYS_PER_MONTH
    assert cost.total == cost.restore + cost.retrieval + cost.restored_copy


def test_a_class_readable_without_restore_costs_nothing_and_an_unpriced_tier_is_unknown() -> None:
    assert restore_cost(restore_pricing(CATALOG, "STANDARD"), "bulk", 10, 2**30, 1) == ZERO_COST
    unpriced = RestorePricing(None, None, "tier x has no price sheet")
    assert restore_cost(unpriced, "bulk", 10, 2**30, 1) is None
    assert speeds_offered(unpriced) == SPEEDS


def test_tiers_are_priced_by_their_reference_and_unknown_references_are_unpriced() -> None:
    catalogs = shipped_catalogs()
    prices = price_tiers(catalogs, [PriceRef(1, "hot", "aws-us-east-1", "STANDARD"),
                                    PriceRef(2, "gone", "no-such-catalog", "STANDARD"),
                                    PriceRef(3, "odd", "aws-us-east-1-2026", "NO_SUCH_CLASS")])
    hot = prices.get(1)
    assert hot is not None and hot.label == "aws-us-east-1-2026:STANDARD"  # undated: the newest catalog
    assert prices.unpriced == ["gone", "odd"]
    assert hot.early_deletion(2**30, 0) == 0


def test_leaving_before_the_minimum_duration_owes_the_remaining_days() -> None:
    price = price_tiers(shipped_catalogs(), [PriceRef(1, "ia", "aws-us-east-1-2026", "STANDARD_IA")]).get(1)
    assert price is not None and price.cls.min_storage_days > 10
    size = 4 * 2**30
    owed = price.early_deletion(size, 10)
    assert owed == Decimal(price.billable_bytes(size)) / GIB * price.per_gib_month() * 10 / DAYS_PER_MONTH
    assert price.transition_requests(1000) == price.cls.transition_per_1k
