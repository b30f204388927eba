"""A restore request through the gateway and its completion by the sweep each produce their S3 event."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.client import BaseClient

from tests.events.conftest import add_target, drain_until
from tests.notifications.receiver import Receiver, running_receiver


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running_receiver() as box:
        yield box


def _records(receiver: Receiver) -> list[dict[str, Any]]:
    return [r for body in receiver.received for r in body["Records"]]


def test_restore_request_and_completion_are_events(s3: BaseClient, bucket: str, receiver: Receiver) -> None:
    from tierpilot.restores import sweep

    arn, _ = add_target(f"restore-{uuid.uuid4().hex[:6]}", "webhook", receiver.url)
    s3.put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration={
        "QueueConfigurations": [{"Id": "rs", "QueueArn": arn, "Events": ["s3:ObjectRestore:*"]}]})
    s3.put_object(Bucket=bucket, Key="cold/run.root", Body=b"r" * 5000, StorageClass="GLACIER")
    s3.restore_object(Bucket=bucket, Key="cold/run.root",
                      RestoreRequest={"Days": 1, "GlacierJobParameters": {"Tier": "Expedited"}})

    def completed() -> bool:
        sweep.poll_due(budget_s=2)  # what beat's restores.poll_due does
        return any(r["eventName"] == "ObjectRestore:Completed" for r in _records(receiver))

    drain_until(completed)
    names = [r["eventName"] for r in _records(receiver)]
    assert names == ["ObjectRestore:Post", "ObjectRestore:Completed"]
    done = _records(receiver)[1]
    assert "lifecycleRestorationExpiryTime" in done["glacierEventData"]["restoreEventData"]
