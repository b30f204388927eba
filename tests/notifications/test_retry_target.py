"""A webhook retry goes where the user's webhook points now: a changed URL gets it, a cleared one drops it."""

from __future__ import annotations

from sqlalchemy import update

from tests.notifications.receiver import allow_listed, running_receiver
from tierpilot.kit.db import transaction, utcnow
from tierpilot.notifications import service
from tierpilot.notifications.models import Notification


def _notify(user_id: int) -> int:
    with transaction(write=True) as s:
        return service.notify(s, user_id, "restore.ready", "Batch ready", link="/restores/7").id


def _time_passes(note_id: int) -> None:
    with transaction(write=True) as s:
        s.execute(update(Notification).where(Notification.id == note_id).values(webhook_next_at=utcnow()))


def _set_url(user_id: int, url: str | None) -> None:
    with transaction(write=True) as s:
        service.set_webhook(s, user_id, url)


def test_a_retry_goes_to_the_url_the_user_set_since(member_user: dict[str, str]) -> None:
    user_id = int(member_user["id"])
    with allow_listed("127.0.0.1"), running_receiver(allow=False) as old, running_receiver(allow=False) as new:
        _set_url(user_id, old.url)
        old.answers = [500]
        note_id = _notify(user_id)
        assert service.deliver_due() == service.DeliveryStats(retrying=1)
        _set_url(user_id, new.url)
        _time_passes(note_id)
        assert service.deliver_due() == service.DeliveryStats(delivered=1)
        assert (len(old.received), len(new.received)) == (1, 1)


def test_a_retry_is_dropped_when_the_user_cleared_the_url(member_user: dict[str, str]) -> None:
    user_id = int(member_user["id"])
    with allow_listed("127.0.0.1"), running_receiver(allow=False) as receiver:
        _set_url(user_id, receiver.url)
        receiver.answers = [500]
        note_id = _notify(user_id)
        assert service.deliver_due() == service.DeliveryStats(retrying=1)
        _set_url(user_id, None)
        _time_passes(note_id)
        assert service.deliver_due() == service.DeliveryStats()
        assert len(receiver.received) == 1
        with transaction() as s:
            row = s.get(Notification, note_id)
            assert row is not None
            assert (row.webhook_state, row.webhook_next_at) == ("none", None)
            assert row.webhook_last_error == "the webhook URL was cleared; not sent"
        assert service.deliver_due() == service.DeliveryStats()
