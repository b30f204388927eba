"""Run Alembic migrations from code (CLI, tests, `tierpilot up`)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

ROOT = Path(__file__).resolve().parents[3]


def alembic_config(url: str | None = None) -> Config:
    cfg = Config(str(ROOT / "alembic.ini"))
    cfg.set_main_option("script_location", str(ROOT / "migrations"))
    if url:
        cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def upgrade(url: str | None = None, revision: str = "head") -> None:
    from sqlalchemy.engine import make_url

    from tierpilot.kit.settings import get_settings

    target = make_url(url or get_settings().sqlalchemy_url)
    if target.get_backend_name() == "sqlite" and target.database:
        Path(target.database).parent.mkdir(parents=True, exist_ok=True)
    command.upgrade(alembic_config(url), revision)
