"""A finished restore batch reaches its owner's webhook as a signed POST: the sweep completes the batch,
the worker's delivery task posts to a real receiver on 127.0.0.1, and the documented recipe verifies it."""

from __future__ import annotations

import pytest

from tests.clocks import WallClock
from tests.notifications.receiver import documented_verify, running_receiver
from tests.restores.conftest import Archive
from tierpilot.kit.db import transaction
from tierpilot.notifications import service as notifications
from tierpilot.notifications.tasks import deliver_webhooks
from tierpilot.restores import service, sweep


def test_a_ready_batch_is_posted_to_the_webhook_signed_with_the_owners_secret(
        archive: Archive, clock: WallClock, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(notifications, "utcnow", clock)  # the delivery sweep reads the sweeps' clock
    member = archive.user("member")
    keys = ["run/a.dat", "run/b.dat"]
    archive.put(archive.buckets["member"], keys)
    with running_receiver() as receiver:
        with transaction(write=True) as s:
            secret = notifications.set_webhook(s, member.id, receiver.url).new_secret
            batch_id = service.create_batch(s, member, service.Selection(archive.buckets["member"], keys),
                                            "expedited", 1).id
        assert secret is not None
        sweep.poll_due(clock=clock)
        clock.advance(seconds=1.1)  # past the expedited delay
        assert sweep.poll_due(clock=clock).batches_done == [batch_id]

        assert deliver_webhooks() == {"delivered": 1, "retrying": 0, "failed": 0}

    [body], [headers] = receiver.raw, receiver.headers
    assert documented_verify()(secret, headers["x-tierpilot-signature"], body)
    assert headers["x-tierpilot-event"] == "restore.ready"
    assert receiver.received[0]["payload"]["batch_id"] == batch_id
    assert headers["x-tierpilot-delivery"] == str(receiver.received[0]["id"])
