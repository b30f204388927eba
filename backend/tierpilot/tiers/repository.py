"""Only this module queries the tiers table (what lives on a tier is the catalog's to count)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from tierpilot.drivers.registry import TierSpec
from tierpilot.kit.db import transaction
from tierpilot.tiers.models import Tier


def list_tiers(session: Session) -> list[Tier]:
    return list(session.scalars(select(Tier).order_by(Tier.id)))


def get(session: Session, tier_id: int) -> Tier | None:
    return session.get(Tier, tier_id)


def get_by_name(session: Session, name: str) -> Tier | None:
    return session.scalar(select(Tier).where(Tier.name == name))


def tiers_by_id(session: Session, ids: Iterable[int] | None = None) -> dict[int, Tier]:
    """Tier id -> tier, of the given ids (those that exist) or of all."""
    q = select(Tier)
    if ids is not None:
        q = q.where(Tier.id.in_(list(set(ids))))
    return {t.id: t for t in session.scalars(q)}


def tier_names(session: Session, ids: Iterable[int] | None = None) -> dict[int, str]:
    """Tier id -> name, of the given ids (those that exist) or of all."""
    q = select(Tier.id, Tier.name)
    if ids is not None:
        q = q.where(Tier.id.in_(list(set(ids))))
    return {k: v for k, v in session.execute(q)}


def online_tiers(session: Session) -> list[Tier]:
    """The tiers that are not offline, by name."""
    return list(session.scalars(select(Tier).where(Tier.offline.is_(False)).order_by(Tier.name)))


def any_tier(session: Session) -> bool:
    """Whether any tier exists."""
    return session.scalar(select(Tier.id).limit(1)) is not None


def add_tiers(session: Session, tiers: Sequence[Tier]) -> None:
    """Insert new tiers (their ids are set on return)."""
    session.add_all(tiers)
    session.flush()


def spec_of(tier: Tier) -> TierSpec:
    """What the data path needs of a tier row, detached from the session."""
    return TierSpec(id=tier.id, name=tier.name, driver=tier.driver, config=dict(tier.config or {}),
                    storage_classes=tuple(str(c) for c in tier.storage_classes or ()), offline=bool(tier.offline),
                    restore_delays=dict(tier.restore_delays or {}), min_storage_days=tier.min_storage_days or 0,
                    price_ref=dict(tier.price_ref or {}))


def load_specs(session: Session | None = None) -> list[TierSpec]:
    """Every tier as a spec: the loader of the process's tier directory (``drivers.registry.tiers``)."""
    if session is not None:
        return [spec_of(t) for t in list_tiers(session)]
    with transaction() as own:
        return [spec_of(t) for t in list_tiers(own)]
