"""Events of writes through a real gateway process reach real targets: exactly one per change, in per-key order,
none lost while a target refuses."""

from __future__ import annotations

import json
import urllib.parse
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from botocore.client import BaseClient

from tests.events.conftest import add_target, check_per_key_order, drain_until, keys_and_names, need_broker, rule
from tests.notifications.receiver import Receiver, documented_verify, running_receiver


def _writes(s3: BaseClient, bucket: str, n_keys: int, rounds: int, delete_every: int) -> dict[str, list[str]]:
    """``rounds`` PUTs of each of ``n_keys`` keys (keys written concurrently, each key's writes in order), then a
    DELETE of every ``delete_every``-th key; the events each key must get, in order."""
    keys = [f"data/k{i:04d} é+.csv" for i in range(n_keys)]
    expected: dict[str, list[str]] = {}

    def one_key(key: str) -> None:
        for r in range(rounds):
            s3.put_object(Bucket=bucket, Key=key, Body=f"{key}:{r}".encode())
        if keys.index(key) % delete_every == 0:
            s3.delete_object(Bucket=bucket, Key=key)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(one_key, keys))
    for i, key in enumerate(keys):
        encoded = urllib.parse.quote_plus(key, safe="/")
        expected[encoded] = ["ObjectCreated:Put"] * rounds + (["ObjectRemoved:Delete"] if i % delete_every == 0 else [])
    return expected


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running_receiver() as box:
        yield box


def _records(received: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for body in received for r in body["Records"]]


def test_webhook_gets_one_signed_event_per_put_and_delete_in_key_order(s3: BaseClient, bucket: str,
                                                                       receiver: Receiver) -> None:
    arn, secret = add_target(f"hook-{uuid.uuid4().hex[:6]}", "webhook", receiver.url)
    assert secret is not None
    s3.put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration={
        "QueueConfigurations": [rule(arn, ["s3:ObjectCreated:*", "s3:ObjectRemoved:*"], prefix="data/")]})
    s3.put_object(Bucket=bucket, Key="elsewhere/ignored", Body=b"x")  # outside the prefix: no event
    expected = _writes(s3, bucket, n_keys=40, rounds=3, delete_every=4)
    total = sum(len(v) for v in expected.values())
    drain_until(lambda: len(receiver.received) >= total)
    records = _records(receiver.received)
    check_per_key_order(keys_and_names(records), expected)
    first = records[0]
    assert first["eventVersion"] == "2.1" and first["eventSource"] == "tierpilot:s3"
    assert first["s3"]["bucket"]["name"] == bucket and first["s3"]["configurationId"] == "r1"
    put = next(r for r in records if r["eventName"] == "ObjectCreated:Put")
    assert put["s3"]["object"]["size"] > 0 and len(put["s3"]["object"]["eTag"]) == 32
    verify = documented_verify()
    assert all(verify(secret, h["x-tierpilot-signature"], raw) for raw, h in zip(receiver.raw, receiver.headers,
                                                                                strict=True))


def test_a_refusing_webhook_loses_nothing_and_keeps_key_order(s3: BaseClient, bucket: str, receiver: Receiver
                                                              ) -> None:
    arn, _ = add_target(f"hook-{uuid.uuid4().hex[:6]}", "webhook", receiver.url)
    s3.put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration={
        "QueueConfigurations": [rule(arn, ["s3:ObjectCreated:*", "s3:ObjectRemoved:*"])]})
    receiver.answers.extend([503] * 3)  # down for its first 3 requests: 1 + 2 + 4 s of back-off
    expected = _writes(s3, bucket, n_keys=20, rounds=2, delete_every=2)
    total = sum(len(v) for v in expected.values())
    drain_until(lambda: len(receiver.received) >= total + 3)
    check_per_key_order(keys_and_names(_records(receiver.received[3:])), expected)


def test_amqp_queue_gets_one_event_per_put_and_delete_in_key_order(s3: BaseClient, bucket: str) -> None:
    import pika

    port = need_broker("amqp")
    queue = f"tierpilot-test-{uuid.uuid4().hex[:8]}"
    url = f"amqp://guest:guest@127.0.0.1:{port}/%2F"
    arn, _ = add_target(f"rabbit-{uuid.uuid4().hex[:6]}", "amqp", url, queue)
    s3.put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration={
        "QueueConfigurations": [rule(arn, ["s3:ObjectCreated:Put", "s3:ObjectRemoved:Delete"])]})
    expected = _writes(s3, bucket, n_keys=50, rounds=2, delete_every=5)
    total = sum(len(v) for v in expected.values())
    conn = pika.BlockingConnection(pika.URLParameters(url))
    try:
        channel = conn.channel()
        got: list[dict[str, Any]] = []

        def take() -> bool:
            while True:
                method, _props, body = channel.basic_get(queue, auto_ack=True)
                if method is None:
                    return len(got) >= total
                got.extend(json.loads(body)["Records"])

        drain_until(take)
        check_per_key_order(keys_and_names(got), expected)
    finally:
        conn.channel().queue_delete(queue)
        conn.close()


def test_mqtt_topic_gets_each_event(s3: BaseClient, bucket: str) -> None:
    import paho.mqtt.client as mqtt

    port = need_broker("mqtt")
    topic = f"tierpilot/test/{uuid.uuid4().hex[:8]}"
    got: list[dict[str, Any]] = []
    sub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
    sub.on_message = lambda _c, _u, msg: got.extend(json.loads(msg.payload)["Records"])
    sub.connect("127.0.0.1", port)
    sub.subscribe(topic, qos=1)
    sub.loop_start()
    try:
        arn, _ = add_target(f"mqtt-{uuid.uuid4().hex[:6]}", "mqtt", f"mqtt://127.0.0.1:{port}", topic)
        s3.put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration={
            "QueueConfigurations": [rule(arn, ["s3:ObjectCreated:*", "s3:ObjectRemoved:*"])]})
        expected = _writes(s3, bucket, n_keys=10, rounds=2, delete_every=2)
        drain_until(lambda: len(got) >= sum(len(v) for v in expected.values()))
        check_per_key_order(keys_and_names(got), expected)
    finally:
        sub.loop_stop()
        sub.disconnect()


def test_nats_jetstream_subject_gets_each_event(s3: BaseClient, bucket: str) -> None:
    import asyncio

    import nats

    port = need_broker("nats")
    tag = uuid.uuid4().hex[:8]
    subject, stream = f"tierpilot.test.{tag}", f"TIERPILOT_TEST_{tag}"
    arn, _ = add_target(f"nats-{tag}", "nats", f"nats://127.0.0.1:{port}", subject, stream=stream)
    s3.put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration={
        "QueueConfigurations": [rule(arn, ["s3:ObjectCreated:*", "s3:ObjectRemoved:*"])]})
    expected = _writes(s3, bucket, n_keys=10, rounds=2, delete_every=2)
    total = sum(len(v) for v in expected.values())

    async def read_stream() -> list[dict[str, Any]]:
        nc = await nats.connect(f"nats://127.0.0.1:{port}")
        try:
            js = nc.jetstream()
            info = await js.stream_info(stream)
            records = []
            for seq in range(1, info.state.last_seq + 1):
                msg = await js.get_msg(stream, seq)
                records.extend(json.loads(msg.data)["Records"])
            return records
        finally:
            await nc.close()

    async def drop_stream() -> None:
        nc = await nats.connect(f"nats://127.0.0.1:{port}")
        try:
            await nc.jetstream().delete_stream(stream)
        finally:
            await nc.close()

    got: list[dict[str, Any]] = []

    def have_all() -> bool:
        got[:] = asyncio.run(read_stream())
        return len(got) >= total

    try:
        drain_until(have_all)
        check_per_key_order(keys_and_names(got), expected)
    finally:
        asyncio.run(drop_stream())


def test_redis_stream_gets_each_event(s3: BaseClient, bucket: str, redis_url: str) -> None:
    import redis

    stream = f"tierpilot-test-{uuid.uuid4().hex[:8]}"
    arn, _ = add_target(f"redis-{uuid.uuid4().hex[:6]}", "redis", redis_url, stream)
    s3.put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration={
        "QueueConfigurations": [rule(arn, ["s3:ObjectCreated:*", "s3:ObjectRemoved:*"])]})
    expected = _writes(s3, bucket, n_keys=10, rounds=2, delete_every=2)
    client = redis.Redis.from_url(redis_url)
    got: list[dict[str, Any]] = []

    def have_all() -> bool:
        got[:] = [r for _id, fields in client.xrange(stream) for r in json.loads(fields[b"event"])["Records"]]
        return len(got) >= sum(len(v) for v in expected.values())

    drain_until(have_all)
    check_per_key_order(keys_and_names(got), expected)
    client.delete(stream)
