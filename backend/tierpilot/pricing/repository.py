"""Only this module queries the pricing tables (and reads the object catalog for "from my data")."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from tierpilot.catalog.models import Bucket, Object
from tierpilot.pricing.models import PriceCatalog, Scenario


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


def list_buckets(session: Session, names: Sequence[str] | None, owner_id: int | None) -> list[Bucket]:
    """Buckets by name (None: all), limited to one owner's unless owner_id is None."""
    stmt = select(Bucket).order_by(Bucket.name)
    if names:
        stmt = stmt.where(Bucket.name.in_(list(names)))
    if owner_id is not None:
        stmt = stmt.where(Bucket.owner_id == owner_id)
    return list(session.scalars(stmt))


def iter_object_stats(session: Session, bucket_ids: Sequence[int]) -> Iterator[tuple[int, datetime, datetime | None]]:
    """(size, created_at, last_access_at) of every object in the buckets, streamed."""
    if not bucket_ids:
        return
    stmt = (select(Object.size, Object.created_at, Object.last_access_at)
            .where(Object.bucket_id.in_(list(bucket_ids))).execution_options(yield_per=10_000))
    for size, created, accessed in session.execute(stmt):
        yield int(size), created, accessed
