"""The cost planner on this installation: `tier:NAME` candidates priced by their tier's price_ref, and
scenarios prefilled from the buckets' usage. The arithmetic is pricing's; this module hands it the tiers
and the usage it needs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from sqlalchemy.orm import Session

from tierpilot.auth.models import User
from tierpilot.catalog import repository as catalog_repository
from tierpilot.catalog import service as catalog_service
from tierpilot.kit.errors import Invalid
from tierpilot.planner import service as pricing
from tierpilot.planner.prices import tier_prices
from tierpilot.planner.schemas import PlanUsageOut
from tierpilot.pricing import engine
from tierpilot.pricing.report import report_csv
from tierpilot.pricing.schemas import Catalog, InstallationTierOut, Scenario, Speed
from tierpilot.tiers import service as tiers_service
from tierpilot.tiers.models import Tier

# ---------------------------------------------------------------------------- installation tiers

ONPREM_PROVIDER = "onprem"  # the provider of on-premises catalogs (onprem-example-2026 and a site's own)


def _unpriced_reason(tier: Tier) -> str:
    ref = tier.price_ref or {}
    if not ref.get("catalog") or not ref.get("storage_class"):
        return (f"tier {tier.name!r} has no price_ref: an admin sets its price catalog and class "
                "(Settings → Tiers) before it can be priced")
    return (f"tier {tier.name!r}: its price_ref {ref['catalog']}:{ref['storage_class']} names no known "
            "catalog class (was the catalog deleted?)")


def _price_warning(tier: Tier, catalog: Catalog, class_id: str) -> str | None:
    """Why an on-premises tier's figures may mislead: it is priced as a cloud's class (the planner then compares a
    cloud with the clouds, not this site)."""
    if tier.driver != "posix" or catalog.provider == ONPREM_PROVIDER:
        return None
    return (f"{tier.name} is an on-premises (posix) tier priced as a cloud class ({class_id} of {catalog.id}): its "
            "figures are that cloud's, not this site's; an admin can price it from an on-premises catalog "
            "(Settings → Tiers)")


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
            class_name=price.cls.name if price else None, offline=tier.offline, driver=tier.driver,
            reason=None if price else _unpriced_reason(tier),
            warning=_price_warning(tier, price.catalog, price.cls.id) if price else None))
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


# ---------------------------------------------------------------------------- a bucket's plan


def _whole(value: Decimal) -> int:
    return int(value.to_integral_value(ROUND_HALF_UP))


def plan_usage(session: Session, scenario: Scenario) -> PlanUsageOut:
    """The scenario's month at its read frequency as a bucket's planned usage: the quantities the engine prices
    (objects, GETs per read with ranged GETs, read share and read-ahead, raw request counts per month), which the
    Spend view then prices with the bucket's own tiers. Nothing is saved."""
    s = resolve_installation_tiers(session, scenario)
    usage = engine.scenario_usage(s)
    objects, f, share = usage.objects, s.reads_per_month, s.read_fraction
    raw = s.requests
    gets = objects.requests_per_read(usage.get_part_bytes) * share * f + (raw.reads if raw else 0)
    puts = s.writes_per_month * objects.count + (raw.writes if raw else 0)
    read_gib = objects.volume_gib * share * f
    archives = [p.label for p in engine.resolve_tiers(s, pricing.all_catalogs(session)) if p.restore is not None]
    basis = [
        f"reads: {f} reads a month of {share:.0%} of {objects.volume_gib:.6g} GiB"
        + (f", {s.read_amplification}× read-ahead" if s.read_amplification != 1 else ""),
        f"GET-class: the reads' GETs ({objects.count:.6g} objects)"
        + (f" in {s.get_part_size_mib} MiB ranges" if s.get_part_size_mib else "")
        + (" and the GET and HEAD counts" if raw and raw.reads else ""),
        f"PUT-class: {s.writes_per_month} overwrites a month" + (" and the PUT, COPY, POST and LIST counts"
                                                                 if raw and raw.writes else ""),
        f"restores: what the reads restore from {', '.join(archives)}" if archives
        else "restores: none (no tier of the scenario is an archive)",
    ]
    return PlanUsageOut(
        reads_gib=round(float(read_gib * s.read_amplification), 6), read_requests=_whole(gets),
        write_requests=_whole(puts), restores_gib=round(float(read_gib), 6) if archives else 0.0,
        restore_speed=s.restore_speed, basis=basis)


@dataclass(frozen=True)
class PlanMonth:
    """A one-tier scenario's month at its read frequency: the planner's own breakdown and the counts behind it."""

    priced_as: str  # "GLACIER (aws-us-east-1-2026)", "archive@bulk (onprem-example-2026:TAPE)"
    monthly: engine.Breakdown
    volume_gib: Decimal
    objects: Decimal
    read_gib: Decimal  # transferred by the reads (read share and read-ahead included)
    read_requests: int
    write_requests: int
    restored_gib: Decimal
    restore_requests: int
    restore_speed: Speed | None  # None: the class needs no restore
    copy_days: Decimal


def plan_scenario(scenario: Scenario) -> Scenario:
    """The scenario as a bucket's plan: one tier (the plan is priced at it), no lifecycle or hybrid what-ifs."""
    if len(scenario.tiers) != 1:
        raise Invalid(f"a plan is priced at one of the scenario's tiers: keep one of "
                      f"{', '.join(t.label for t in scenario.tiers)}", field="scenario.tiers")
    return scenario.model_copy(update={"lifecycle": None, "hybrid": []})


def plan_month(session: Session, scenario: Scenario, catalogs: Mapping[str, Catalog] | None = None) -> PlanMonth:
    """What a one-tier scenario costs in a month, computed as the planner computes its monthly figure (the same
    tier model at the same frequency), so a plan saved from it and the planner agree to the cent."""
    s = resolve_installation_tiers(session, plan_scenario(scenario))
    (price,) = engine.resolve_tiers(s, catalogs if catalogs is not None else pricing.all_catalogs(session))
    usage = engine.scenario_usage(s)
    model = engine.TierModel(price, usage)
    f, share, objects, raw = s.reads_per_month, s.read_fraction, usage.objects, s.requests
    gets = objects.requests_per_read(usage.get_part_bytes) * share * f + (raw.reads if raw else 0)
    puts = s.writes_per_month * objects.count + (raw.writes if raw else 0)
    restores = price.restore is not None
    ref = s.tiers[0]
    source = f"{price.catalog.id}:{price.cls.id}" if ref.tier is not None else price.catalog.id
    return PlanMonth(
        priced_as=f"{price.label} ({source})", monthly=model.at(f), volume_gib=objects.volume_gib,
        objects=objects.count, read_gib=model.transfer_gib * f, read_requests=_whole(gets), write_requests=_whole(puts),
        restored_gib=model.read_gib * f if restores else Decimal(0),
        restore_requests=_whole(objects.count * share * f) if restores else 0, restore_speed=price.speed,
        copy_days=s.restored_copy_days)


# ---------------------------------------------------------------------------- from my data


def from_my_data(session: Session, actor: User, bucket_names: Sequence[str] | None, catalog_id: str,
                 now: datetime | None = None) -> dict[str, Any]:
    """A scenario prefilled from the object catalog: the installation's priceable tiers beside the catalog's
    classes, volume and sizes of the buckets, and how much of the data was read in the last month, by age."""
    catalog = pricing.get_catalog(session, catalog_id)
    buckets = catalog_repository.buckets_named(session, bucket_names, None if actor.is_admin else actor.id)
    if bucket_names:
        for name in sorted(set(bucket_names) - {b.name for b in buckets}):
            # 404 as for a missing bucket, or 403 for one shared with the caller: it prices its owner's data
            catalog_service.owned_bucket(session, name, actor, "pricing its data")
    stats = catalog_repository.iter_object_stats(session, [b.id for b in buckets])
    # the installation's own tiers stay candidates: the question is what they cost at this access, against the
    # catalog's classes
    own = [t.ref for t in installation_tiers(session) if t.priceable]
    return pricing.scenario_from_usage(catalog, [b.name for b in buckets], stats, now or datetime.now(UTC), own)
