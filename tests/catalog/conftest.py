"""Posix tiers on the scratch database (created through the tiers service, removed with the test's data)."""

from __future__ import annotations

import uuid

import pytest

from tierpilot.drivers import registry
from tierpilot.tiers.models import Tier


@pytest.fixture
def tiers(db: str) -> dict[str, Tier]:
    from tierpilot.kit.db import transaction
    from tierpilot.tiers import service
    from tierpilot.tiers.schemas import TierCreate

    tag = uuid.uuid4().hex[:8]
    out: dict[str, Tier] = {}
    with transaction(write=True) as s:
        for name, classes, offline in (("hot-disk", ["STANDARD"], False), ("infrequent", ["STANDARD_IA"], False),
                                       ("archive", ["GLACIER"], True)):
            tier = service.create(s, TierCreate(name=name, driver="posix", config={"path": f"cat-{tag}/{name}"},
                                                storage_classes=classes, offline=offline))
            s.flush()
            s.expunge(tier)
            out[name] = tier
    registry.tiers.invalidate()
    return out
