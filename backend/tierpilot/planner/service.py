"""The cost planner on this installation: `tier:NAME` candidates priced by their tier's price_ref, and
scenarios prefilled from the buckets' usage. The arithmetic is pricing's; this module hands it the tiers
and the usage it needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.orm import Session

from tierpilot.auth.models import User
from tierpilot.catalog import repository as catalog_repository
from tierpilot.catalog import service as catalog_service
from tierpilot.kit.errors import Invalid
from tierpilot.pricing import service as pricing
from tierpilot.pricing.report import report_csv
from tierpilot.pricing.schemas import InstallationTierOut, Scenario
from tierpilot.tiers import service as tiers_service
from tierpilot.tiers.models import Tier
from tierpilot.tiers.prices import tier_prices

# ---------------------------------------------------------------------------- installation tiers


def _unpriced_reason(tier: Tier) -> str:
    ref = tier.price_ref or {}
    if not ref.get("catalog") or not ref.get("storage_class"):
        return (f"tier {tier.name!r} has no price_ref: an admin sets its price catalog and class "
                "(Settings → Tiers) before it can be priced")
    return (f"tier {tier.name!r}: its price_ref {ref['catalog']}:{ref['storage_class']} names no known "
            "catalog class (was the catalog deleted?)")


def installation_tiers(session: Session) -> list[InstallationTierOut]:
    """Every tier of this installation (all signed-in users list tiers) with the catalog class that
    prices it, or why it cannot be priced."""
    tiers = tiers_service.list_tiers(session)
    prices = tier_prices(session, tiers)
    out = []
    for tier in tiers:
        price = prices.get(tier.id)
        out.append(InstallationTierOut(
            id=tier.id, name=tier.name, ref=f"tier:{tier.name}", priceable=price is not None,
            catalog=price.catalog.id if price else None, storage_class=price.cls.id if price else None,
            class_name=price.cls.name if price else None, offline=tier.offline,
            reason=None if price else _unpriced_reason(tier)))
    return out


def resolve_installation_tiers(session: Session, scenario: Scenario) -> Scenario:
    """The scenario with each `tier:NAME` priced at the catalog class of that tier's price_ref."""
    wanted = [t for t in scenario.tiers if t.tier is not None]
    if not wanted:
        return scenario
    by_name = {t.name: t for t in tiers_service.list_tiers(session)}
    unknown = sorted({str(t.tier) for t in wanted if t.tier not in by_name})
    if unknown:
        raise Invalid(f"no tier named {', '.join(unknown)} in this installation "
                      f"(its tiers: {', '.join(by_name) or 'none'})")
    prices = tier_prices(session, [by_name[str(t.tier)] for t in wanted])
    refs = []
    for ref in scenario.tiers:
        if ref.tier is None:
            refs.append(ref)
            continue
        tier = by_name[ref.tier]
        price = prices.get(tier.id)
        if price is None:
            raise Invalid(_unpriced_reason(tier))
        refs.append(ref.model_copy(update={"catalog": price.catalog.id, "storage_class": price.cls.id}))
    return scenario.model_copy(update={"tiers": refs})


# ---------------------------------------------------------------------------- evaluation


def evaluate(session: Session, scenario: Scenario) -> dict[str, Any]:
    """The report of a scenario (the same JSON as `tierpilot plan --json`), `tier:NAME` candidates included."""
    return pricing.evaluate(session, resolve_installation_tiers(session, scenario))


def evaluate_csv(session: Session, scenario: Scenario) -> str:
    """The report of a scenario as CSV."""
    return report_csv(evaluate(session, scenario))


# ---------------------------------------------------------------------------- from my data


def from_my_data(session: Session, actor: User, bucket_names: Sequence[str] | None, catalog_id: str,
                 now: datetime | None = None) -> dict[str, Any]:
    """A scenario prefilled from the object catalog: volume and sizes of the buckets, and how much of
    the data was read in the last month, by age."""
    catalog = pricing.get_catalog(session, catalog_id)
    buckets = catalog_repository.buckets_named(session, bucket_names, None if actor.is_admin else actor.id)
    if bucket_names:
        for name in sorted(set(bucket_names) - {b.name for b in buckets}):
            # 404 as for a missing bucket, or 403 for one shared with the caller: it prices its owner's data
            catalog_service.owned_bucket(session, name, actor, "pricing its data")
    stats = catalog_repository.iter_object_stats(session, [b.id for b in buckets])
    return pricing.scenario_from_usage(catalog, [b.name for b in buckets], stats, now or datetime.now(UTC))
