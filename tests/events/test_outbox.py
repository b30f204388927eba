"""The outbox is written in the transaction of the change: a rolled-back write leaves no event, a bucket without
a configuration gets none, a full outbox drops and alerts; dead letters can be replayed."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import make_user


@pytest.fixture
def setup(db: str) -> Iterator[dict[str, Any]]:
    from tierpilot.catalog import service as catalog
    from tierpilot.events import service
    from tierpilot.events.outbox import directory
    from tierpilot.kit.db import transaction
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.schemas import TierCreate

    tag = uuid.uuid4().hex[:8]
    owner = make_user(f"o-{tag}", "owner-password-1", is_admin=True)
    with transaction(write=True) as s:
        tiers.create(s, TierCreate(name=f"hot-{tag}", driver="posix", config={"path": f"ev-{tag}/hot"},
                                   storage_classes=["STANDARD"]))
        watched = catalog.create_bucket(s, owner_id=int(owner["id"]), name=f"w-{tag}", tier_name=f"hot-{tag}")
        quiet = catalog.create_bucket(s, owner_id=int(owner["id"]), name=f"q-{tag}", tier_name=f"hot-{tag}")
        new = service.add_target(s, f"t-{tag}", "redis", "redis://127.0.0.1:1/0", "s")
        service.put_config(s, watched, [{"kind": "Queue", "id": "all", "arn": new.arn, "events": ["s3:ObjectCreated:*"],
                                         "filter": []}])
        ids = {"watched": watched.id, "quiet": quiet.id, "target": new.target.id, "tier": f"hot-{tag}"}
    directory.forget()
    yield ids
    directory.forget()


def _write(bucket_id: int, key: str) -> None:
    from tierpilot.catalog import service as catalog
    from tierpilot.kit.db import transaction

    with transaction(write=True) as s:
        tier_id = catalog.repository.get_bucket(s, bucket_id).tier_id  # type: ignore[union-attr]
        catalog.record_object(s, bucket_id, key, size=1, etag="e", tier_id=tier_id, storage_class="STANDARD",
                              locator=f"x/{uuid.uuid4().hex}")


def _queued() -> int:
    from tierpilot.events import repository
    from tierpilot.kit.db import transaction

    with transaction() as s:
        return repository.outbox_stats(s)[0]


def test_a_committed_write_records_its_event_and_a_rolled_back_one_none(setup: dict[str, Any]) -> None:
    from tierpilot.catalog import service as catalog
    from tierpilot.kit.db import transaction

    _write(setup["watched"], "a")
    assert _queued() == 1
    with pytest.raises(RuntimeError), transaction(write=True) as s:
        tier_id = catalog.repository.get_bucket(s, setup["watched"]).tier_id  # type: ignore[union-attr]
        catalog.record_object(s, setup["watched"], "b", size=1, etag="e", tier_id=tier_id, storage_class="STANDARD",
                              locator="x/b")
        raise RuntimeError("the write fails after its row")
    assert _queued() == 1


def test_a_bucket_without_configuration_records_nothing(setup: dict[str, Any], monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    from tierpilot.events.outbox import Directory

    def never(*_args: Any) -> None:
        raise AssertionError("record was called for a bucket nobody watches")

    monkeypatch.setattr(Directory, "record", never)
    _write(setup["quiet"], "a")
    assert _queued() == 0


def test_a_full_outbox_drops_new_events_and_tells_admins(setup: dict[str, Any], monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    from tierpilot.events import delivery
    from tierpilot.events.outbox import directory
    from tierpilot.kit.db import transaction
    from tierpilot.kit.settings import get_settings
    from tierpilot.notifications import service as notifications

    monkeypatch.setenv("TIERPILOT_EVENTS_OUTBOX_MAX", "3")
    get_settings.cache_clear()
    directory.forget()
    try:
        for i in range(5):
            _write(setup["watched"], f"k{i}")
        assert _queued() == 3
        assert delivery.housekeep() == {"queued": 3, "full": True}
        with transaction() as s:
            items, _unread = notifications.list_notifications(s, int(_admin_id()), False, 10)
        assert [n.kind for n in items] == ["events.outbox_full"]
    finally:
        monkeypatch.delenv("TIERPILOT_EVENTS_OUTBOX_MAX")
        get_settings.cache_clear()


def _admin_id() -> int:
    from tierpilot.auth import repository
    from tierpilot.kit.db import transaction

    with transaction() as s:
        return next(u.id for u in repository.list_users(s) if u.is_admin)


def test_events_a_target_refuses_become_dead_letters_that_replay_in_order(setup: dict[str, Any],
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from tierpilot.events import delivery, repository, service
    from tierpilot.kit.db import transaction
    from tierpilot.kit.settings import get_settings

    monkeypatch.setenv("TIERPILOT_EVENTS_MAX_ATTEMPTS", "1")
    get_settings.cache_clear()
    try:
        _write(setup["watched"], "a")
        _write(setup["watched"], "a")
        # nothing listens on port 1: each head fails once and is given up on, the next of the key follows
        stats = delivery.drain(budget_s=5)
        assert stats.dead == 2 and _queued() == 0
        with transaction(write=True) as s:
            letters = repository.list_dead_letters(s)
            assert [d.key for d in letters] == ["a", "a"]
            assert service.replay_dead_letters(s) == 2
        assert _queued() == 2
    finally:
        monkeypatch.delenv("TIERPILOT_EVENTS_MAX_ATTEMPTS")
        get_settings.cache_clear()
