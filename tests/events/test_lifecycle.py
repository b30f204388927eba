"""A lifecycle transition and an expiration each produce their S3 event."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.events.conftest import add_target, drain_until
from tests.lifecycle.conftest import World, age, put, set_rules, world  # noqa: F401,F811  (the lifecycle fixture)
from tests.notifications.receiver import Receiver, running_receiver


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running_receiver() as box:
        yield box


def _records(receiver: Receiver) -> list[dict[str, Any]]:
    return [r for body in receiver.received for r in body["Records"]]


def test_lifecycle_transition_and_expiration_are_events(world: World,  # noqa: F811
                                                        receiver: Receiver) -> None:
    from tierpilot.catalog import service as catalog_service
    from tierpilot.events import service
    from tierpilot.events.outbox import directory
    from tierpilot.kit.db import transaction
    from tierpilot.lifecycle.runner import run_now

    arn, _ = add_target(f"lc-{world.tag}", "webhook", receiver.url)
    with transaction(write=True) as s:
        service.put_config(s, catalog_service.get_bucket(s, world.bucket), [
            {"kind": "Queue", "id": "lc", "arn": arn, "events": ["s3:LifecycleTransition",
                                                                 "s3:LifecycleExpiration:*"], "filter": []}])
    directory.forget()
    put(world, "raw/a", b"a" * (200 << 10))
    put(world, "tmp/b", b"b" * 1000)
    set_rules(world, [{"id": "ia", "filter": {"prefix": "raw/"},
                       "transitions": [{"days": 30, "storage_class": "STANDARD_IA"}]},
                      {"id": "tmp", "filter": {"prefix": "tmp/"}, "expiration": {"days": 7}}])
    age(world, days=31)
    assert run_now(world.bucket_id).by_action == {"transition": 1, "expiration": 1}
    drain_until(lambda: len(receiver.received) >= 2)
    by_key = {r["s3"]["object"]["key"]: r for r in _records(receiver)}
    assert by_key["raw/a"]["eventName"] == "LifecycleTransition"
    assert by_key["raw/a"]["lifecycleEventData"] == {"transitionEventData": {"destinationStorageClass":
                                                                             "STANDARD_IA"}}
    assert by_key["tmp/b"]["eventName"] == "LifecycleExpiration:Delete"
    assert len(receiver.received) == 2
