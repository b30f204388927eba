"""A broker stopped in the middle of a run loses nothing: a throwaway NATS JetStream server of the test's own
(Debian's nats-server, file store in the test's temp dir) is stopped while writes go on and started again."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from botocore.client import BaseClient

from tests.events.conftest import add_target, check_per_key_order, drain_until, keys_and_names, outbox_rows, rule
from tests.servers import free_port, stop, wait_port

NATS = shutil.which("nats-server") or "/usr/sbin/nats-server"


class Nats:
    def __init__(self, store: Path) -> None:
        self.port, self.store = free_port(), store
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen([NATS, "-js", "-sd", str(self.store), "-a", "127.0.0.1", "-p", str(self.port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port, proc=self.proc)

    def stop(self) -> None:
        if self.proc is not None:
            stop(self.proc)
            self.proc = None


@pytest.fixture
def nats_server(tmp_path: Path) -> Iterator[Nats]:
    if not Path(NATS).exists():
        pytest.skip("nats-server is not installed (Debian's nats-server)")
    server = Nats(tmp_path / "jetstream")
    server.start()
    yield server
    server.stop()


def _put_and_delete(s3: BaseClient, bucket: str, keys: list[str], expected: dict[str, list[str]]) -> None:
    for key in keys:
        s3.put_object(Bucket=bucket, Key=key, Body=b"x")
        expected.setdefault(key, []).append("ObjectCreated:Put")
    for key in keys[::3]:
        s3.delete_object(Bucket=bucket, Key=key)
        expected[key].append("ObjectRemoved:Delete")


def test_events_written_while_the_broker_is_down_arrive_once_it_is_back(s3: BaseClient, bucket: str,
                                                                        nats_server: Nats) -> None:
    import nats

    from tierpilot.events import delivery

    tag = uuid.uuid4().hex[:8]
    subject, stream = f"tierpilot.restart.{tag}", f"RESTART_{tag}"
    url = f"nats://127.0.0.1:{nats_server.port}"
    arn, _ = add_target(f"nats-restart-{tag}", "nats", url, subject, stream=stream)
    s3.put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration={
        "QueueConfigurations": [rule(arn, ["s3:ObjectCreated:*", "s3:ObjectRemoved:*"])]})
    expected: dict[str, list[str]] = {}
    _put_and_delete(s3, bucket, [f"before/{i:03d}" for i in range(30)], expected)
    drain_until(lambda: outbox_rows() == 0)

    nats_server.stop()
    _put_and_delete(s3, bucket, [f"before/{i:03d}" for i in range(0, 30, 2)] + [f"during/{i:03d}" for i in range(30)],
                    expected)
    stats = delivery.drain(budget_s=2.0)  # the target is down: nothing goes, the gateway did not wait for it
    assert stats.delivered == 0 and stats.retrying > 0 and outbox_rows() > 0
    nats_server.start()

    async def read() -> list[dict[str, Any]]:
        nc = await nats.connect(url)
        try:
            js = nc.jetstream()
            last = (await js.stream_info(stream)).state.last_seq
            bodies = [(await js.get_msg(stream, seq)).data for seq in range(1, last + 1)]
            return [r for body in bodies for r in json.loads(body)["Records"]]
        finally:
            await nc.close()

    total = sum(len(v) for v in expected.values())
    drain_until(lambda: outbox_rows() == 0, timeout=100)
    got = asyncio.run(read())
    assert len(got) == total
    check_per_key_order(keys_and_names(got), expected)
