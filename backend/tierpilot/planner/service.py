"""Price catalogs (shipped and added), scenario evaluation, saved scenarios, and scenarios from usage.

Pricing knows no other domain: callers hand it the prices and tiers they hold (``tierpilot.planner``
resolves the installation's `tier:NAME` references and reads the buckets' usage).
Services flush; the caller (the API's session dependency or `transaction()`) commits.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any, Literal

from pydantic import ValidationError
from sqlalchemy.orm import Session

from tierpilot.auth.models import User
from tierpilot.kit.db import utcnow
from tierpilot.kit.errors import Conflict, Forbidden, Invalid, NotFound
from tierpilot.planner import repository
from tierpilot.planner.models import PriceCatalog
from tierpilot.planner.models import Scenario as ScenarioRow
from tierpilot.pricing.catalogs import resolve_catalog_id, shipped_catalogs, validate_catalog
from tierpilot.pricing.engine import DAYS_PER_MONTH, GIB
from tierpilot.pricing.importers import import_aws_price_list, import_azure_retail_prices
from tierpilot.pricing.lifecycle import fit_decay
from tierpilot.pricing.report import build_report
from tierpilot.pricing.schemas import Catalog, CatalogSummary, ImportFormat, Scenario

# ---------------------------------------------------------------------------- catalogs


def all_catalogs(session: Session) -> dict[str, Catalog]:
    """Shipped catalogs plus the ones admins added (a shipped id always wins)."""
    out = {row.id: validate_catalog(row.body) for row in repository.list_catalogs(session)}
    out.update(shipped_catalogs())
    return out


def _summary(c: Catalog, origin: Literal["shipped", "added"]) -> CatalogSummary:
    return CatalogSummary(id=c.id, provider=c.provider, region=c.region, currency=c.currency,
                          valid_from=c.valid_from, source=c.source, classes=[k.id for k in c.classes],
                          has_estimates=bool(c.estimated or any(k.estimated for k in c.classes)), origin=origin)


def list_catalogs(session: Session) -> list[CatalogSummary]:
    shipped = shipped_catalogs()
    return sorted((_summary(c, "shipped" if c.id in shipped else "added") for c in all_catalogs(session).values()),
                  key=lambda s: (s.provider, s.region, s.valid_from, s.id))


def get_catalog(session: Session, catalog_id: str) -> Catalog:
    catalogs = all_catalogs(session)
    return catalogs[resolve_catalog_id(catalog_id, catalogs)]


def catalog_by_ref(session: Session, catalog_id: str) -> Catalog:
    """The catalog a tier's price_ref names, reading at most one added row (restore quotes run per sweep):
    an added catalog by its exact id, else a shipped one (an id without its date: the newest shipped)."""
    shipped = shipped_catalogs()
    added = repository.get_catalog(session, catalog_id) if catalog_id not in shipped else None
    if added is not None:
        return validate_catalog(added.body)
    return shipped[resolve_catalog_id(catalog_id, shipped)]


def add_catalog(session: Session, actor: User, catalog: Catalog) -> CatalogSummary:
    """Store an admin's catalog (validated already); ids are never reused."""
    if not actor.is_admin:
        raise Forbidden("only admins add price catalogs")
    if catalog.id in shipped_catalogs() or repository.get_catalog(session, catalog.id) is not None:
        raise Conflict(f"a price catalog {catalog.id!r} exists already; give the new one another id or date")
    session.add(PriceCatalog(id=catalog.id, body=catalog.model_dump(mode="json"), created_by=actor.id))
    session.flush()
    return _summary(catalog, "added")


def delete_catalog(session: Session, actor: User, catalog_id: str) -> None:
    if not actor.is_admin:
        raise Forbidden("only admins delete price catalogs")
    if catalog_id in shipped_catalogs():
        raise Conflict(f"{catalog_id} ships with tierpilot and cannot be deleted")
    row = repository.get_catalog(session, catalog_id)
    if row is None:
        raise NotFound(f"no added price catalog {catalog_id!r}")
    session.delete(row)
    session.flush()


def import_catalog(fmt: ImportFormat, docs: Sequence[Any], region: str | None = None,
                   catalog_id: str | None = None, valid_from: date | None = None) -> Catalog:
    """A catalog converted from a provider's price list files (not stored)."""
    if fmt == "aws-price-list":
        return import_aws_price_list(docs, region=region, catalog_id=catalog_id, valid_from=valid_from)
    return import_azure_retail_prices(docs, region=region, catalog_id=catalog_id, valid_from=valid_from)


# ---------------------------------------------------------------------------- evaluation


def evaluate(session: Session, scenario: Scenario) -> dict[str, Any]:
    """The report of a scenario whose `tier:NAME` references are resolved (the JSON of `tierpilot plan --json`)."""
    return build_report(scenario, all_catalogs(session))


def parse_scenario(body: Any) -> Scenario:
    """A stored or uploaded scenario body, or Invalid with what is wrong."""
    try:
        return Scenario.model_validate(body)
    except ValidationError as exc:
        parts = [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:5]]
        raise Invalid(f"scenario is invalid: {'; '.join(parts)}") from exc


# ---------------------------------------------------------------------------- saved scenarios


def _body(scenario: Scenario) -> dict[str, Any]:
    return scenario.model_dump(mode="json", exclude_none=True)


def list_scenarios(session: Session, actor: User, everyone: bool = False) -> list[ScenarioRow]:
    """The actor's own scenarios (admins may ask for everybody's)."""
    if everyone and not actor.is_admin:
        raise Forbidden("only admins list everybody's scenarios")
    return repository.list_scenarios(session, None if everyone else actor.id)


def get_scenario(session: Session, actor: User, scenario_id: int) -> ScenarioRow:
    row = repository.get_scenario(session, scenario_id)
    # someone else's scenario is reported missing, not forbidden: ids must not leak
    if row is None or (row.owner_id != actor.id and not actor.is_admin):
        raise NotFound(f"no scenario {scenario_id}")
    return row


def create_scenario(session: Session, actor: User, name: str, scenario: Scenario) -> ScenarioRow:
    row = ScenarioRow(owner_id=actor.id, name=name.strip(), body=_body(scenario))
    session.add(row)
    session.flush()
    return row


def update_scenario(session: Session, actor: User, scenario_id: int, name: str | None,
                    scenario: Scenario | None) -> ScenarioRow:
    row = get_scenario(session, actor, scenario_id)
    if name is not None:
        row.name = name.strip()
    if scenario is not None:
        row.body = _body(scenario)
    row.updated_at = utcnow()
    session.flush()
    return row


def delete_scenario(session: Session, actor: User, scenario_id: int) -> None:
    session.delete(get_scenario(session, actor, scenario_id))
    session.flush()


def duplicate_scenario(session: Session, actor: User, scenario_id: int, name: str | None = None) -> ScenarioRow:
    """A copy owned by the actor (never shared: a copy gets its own link when shared)."""
    source = get_scenario(session, actor, scenario_id)
    return create_scenario(session, actor, name or f"{source.name} (copy)"[:120], parse_scenario(source.body))


def share_scenario(session: Session, actor: User, scenario_id: int) -> ScenarioRow:
    """Give the scenario a link token (kept when it has one already)."""
    row = get_scenario(session, actor, scenario_id)
    if row.share_token is None:
        row.share_token = secrets.token_urlsafe(24)
        session.flush()
    return row


def unshare_scenario(session: Session, actor: User, scenario_id: int) -> None:
    row = get_scenario(session, actor, scenario_id)
    row.share_token = None
    session.flush()


def get_shared(session: Session, token: str) -> ScenarioRow:
    row = repository.get_scenario_by_token(session, token) if token else None
    if row is None:
        raise NotFound("this link does not lead to a shared scenario (it may have been unshared)")
    return row


# ---------------------------------------------------------------------------- scenarios from usage


def _measured(x: Decimal | float) -> float:
    """A measured rate to three significant digits: the access log's precision, and what a person can read."""
    return float(f"{x:.3g}")


def scenario_from_usage(catalog: Catalog, buckets: Sequence[str],
                        objects: Iterable[tuple[int, datetime, datetime | None]], now: datetime,
                        own_tiers: Sequence[str] = ()) -> dict[str, Any]:
    """A scenario prefilled from stored objects, given as (size, created_at, last_access_at): volume and sizes,
    and how much of the data was read in the last month, by age (the access-decay curve is fitted to that).
    `own_tiers` (`tier:NAME` references) come first, then every class of the catalog to compare them with."""
    recent = now - timedelta(days=30)
    month = timedelta(days=float(DAYS_PER_MONTH))
    bins: dict[int, list[int]] = {}
    by_age: dict[int, list[int]] = {}  # age month -> [bytes, bytes read in the last 30 days]
    for size, created, accessed in objects:
        acc = bins.setdefault(max(size, 1).bit_length() - 1, [0, 0])
        acc[0] += 1
        acc[1] += size
        age = by_age.setdefault(max(0, int((now - created) / month)), [0, 0])
        age[0] += size
        if accessed is not None and accessed >= recent:
            age[1] += size
    total_bytes = sum(b for _, b in bins.values())
    count = sum(c for c, _ in bins.values())
    read_bytes = sum(r for _, r in by_age.values())
    body: dict[str, Any] = {"catalog": catalog.id, "tiers": [*own_tiers, *(c.id for c in catalog.classes)]}
    if count == 0:
        body.update(volume_gib=0, objects=0)
    else:
        # each power-of-two size class is represented by its mean object size
        body["size_histogram"] = [{"size_bytes": max(1, b // c), "count": c} for _, (c, b) in sorted(bins.items())]
    reads = Decimal(read_bytes) / Decimal(total_bytes) if total_bytes else Decimal(0)
    body["reads_per_month"] = _measured(reads)
    samples = [(Decimal(age), Decimal(r) / Decimal(b)) for age, (b, r) in sorted(by_age.items()) if b > 0]
    if any(rate > 0 for _, rate in samples):
        decay = fit_decay(samples)
        decay = decay.model_copy(update={
            "initial_reads_per_month": Decimal(str(_measured(decay.initial_reads_per_month))),
            "half_life_months": Decimal(str(_measured(decay.half_life_months)))})
        body["lifecycle"] = {"initial_gib": float(Decimal(total_bytes) / GIB),
                             "decay": decay.model_dump(mode="json", exclude={"table"})}
    scenario = parse_scenario(body)
    return {
        "scenario": scenario.model_dump(mode="json", exclude_none=True),
        "basis": {"buckets": list(buckets), "objects": count, "bytes": total_bytes,
                  "volume_gib": float(Decimal(total_bytes) / GIB), "read_last_30_days_bytes": read_bytes,
                  "read_share_by_age_month": {str(a): float(r) for a, r in samples}},
    }
