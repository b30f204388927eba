from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from tierpilot.kit.db import Base, utcnow


class Scenario(Base):
    """A saved what-if input of the cost planner; `body` follows pricing.schemas.Scenario."""

    __tablename__ = "pricing_scenarios"

    id: Mapped[int] = mapped_column(primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(120))
    body: Mapped[dict[str, Any]] = mapped_column()
    # set when the owner shares the scenario by link; anyone signed in who has it may read it
    share_token: Mapped[str | None] = mapped_column(String(64), unique=True, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class PriceCatalog(Base):
    """A price catalog added by an admin (the shipped ones are YAML files in the repository)."""

    __tablename__ = "price_catalogs"

    id: Mapped[str] = mapped_column(String(80), primary_key=True)
    body: Mapped[dict[str, Any]] = mapped_column()
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
