"""Two real gateway processes sharing one Redis (the sharing generation), against the suite's scratch
database, with the gateway tests' tiers and users (alice, bob, root)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import _truncate_all
from tests.gateway.conftest import Gateway, _setup_data, start_gateway, stop


@pytest.fixture(scope="package")
def gateways(db_url: str, data_dir: Path, redis_url: str) -> Iterator[tuple[Gateway, Gateway]]:
    """Gateways A and B; a 60 s cache, so only the generation can make B see A's changes at once. B runs behind
    a trusted proxy at 127.0.0.1 (TIERPILOT_TRUSTED_PROXIES): it believes X-Forwarded-For, A does not."""
    tag = uuid.uuid4().hex[:8]
    users, dirs = _setup_data(tag)
    env = {"TIERPILOT_REDIS_URL": redis_url, "TIERPILOT_GATEWAY_CACHE_S": "60"}
    started: list[Gateway] = []
    try:
        for name in ("a", "b"):
            log = data_dir / f"sharing-{tag}-{name}.log"
            own = {**env, "TIERPILOT_TRUSTED_PROXIES": "127.0.0.1"} if name == "b" else env
            url, proc = start_gateway(db_url, log, own)
            started.append(Gateway(url=url, proc=proc, log=log, users=users, tier_dirs=dirs, env=own))
        yield started[0], started[1]
    finally:
        for gw in started:
            stop(gw.proc)
        _truncate_all()


@pytest.fixture(scope="package")
def gateway(gateways: tuple[Gateway, Gateway]) -> Gateway:
    return gateways[0]


def store_policy_directly(bucket: str, text: str) -> None:
    """Write ``text`` as the bucket's stored policy straight into ``bucket_sharing``, past every check (a policy an
    older version accepted, or an edit in the database); gateways see it once the sharing generation moves."""
    from sqlalchemy import text as sql

    from tierpilot.kit.db import transaction

    with transaction(write=True) as s:
        bucket_id = s.execute(sql("SELECT id FROM buckets WHERE name = :name"), {"name": bucket}).scalar_one()
        changed = s.execute(sql("UPDATE bucket_sharing SET policy = :policy WHERE bucket_id = :id"),
                            {"policy": text, "id": bucket_id})
        if changed.rowcount == 0:  # type: ignore[attr-defined]
            s.execute(sql("INSERT INTO bucket_sharing (bucket_id, policy, object_acls, updated_at) "
                          "VALUES (:id, :policy, false, CURRENT_TIMESTAMP)"), {"policy": text, "id": bucket_id})
