"""Only this module queries the pricing tables."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from tierpilot.planner.models import PriceCatalog, Scenario


def list_scenarios(session: Session, owner_id: int | None) -> list[Scenario]:
    """A user's scenarios, newest first (owner_id None: everybody's)."""
    stmt = select(Scenario).order_by(Scenario.updated_at.desc(), Scenario.id.desc())
    if owner_id is not None:
        stmt = stmt.where(Scenario.owner_id == owner_id)
    return list(session.scalars(stmt))


def get_scenario(session: Session, scenario_id: int) -> Scenario | None:
    return session.get(Scenario, scenario_id)


def get_scenario_by_token(session: Session, token: str) -> Scenario | None:
    return session.scalar(select(Scenario).where(Scenario.share_token == token))


def list_catalogs(session: Session) -> list[PriceCatalog]:
    return list(session.scalars(select(PriceCatalog).order_by(PriceCatalog.id)))


def get_catalog(session: Session, catalog_id: str) -> PriceCatalog | None:
    return session.get(PriceCatalog, catalog_id)
