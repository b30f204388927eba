"""Helpers of the events tests: targets, rules, brokers found on this machine, and a drain the test runs.

The gateway tests (``gateway/``) share one gateway process; they sit apart from the tests that empty the database
after each test. The machine's RabbitMQ (5672), Mosquitto (1883) and NATS JetStream (4222) are used when they
answer; a test needing one that does not answer is skipped, naming it. Deliveries run in the test process
(``events.delivery.drain``, what beat's ``events.deliver`` calls), so a test decides when the outbox is drained.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

import pytest

from tests.waiting import wait_until

BROKERS = {"amqp": 5672, "mqtt": 1883, "nats": 4222}


def broker_answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0):
            return True
    except OSError:
        return False


def need_broker(kind: str) -> int:
    port = BROKERS[kind]
    if not broker_answers(port):
        pytest.skip(f"no {kind} broker answers on 127.0.0.1:{port} (this machine kind runs RabbitMQ, Mosquitto and "
                    "NATS JetStream from boot; start one to run this test)")
    return port


def add_target(name: str, type_: str, url: str, topic: str = "", **options: str) -> tuple[str, str | None]:
    """(ARN, webhook secret) of a new target."""
    from tierpilot.events import service
    from tierpilot.kit.db import transaction

    with transaction(write=True) as session:
        new = service.add_target(session, name, type_, url, topic, dict(options))
    return new.arn, new.secret


def rule(arn: str, events: list[str], prefix: str | None = None, suffix: str | None = None,
         id_: str = "r1") -> dict[str, Any]:
    rules = ([{"Name": "prefix", "Value": prefix}] if prefix is not None else []) + (
        [{"Name": "suffix", "Value": suffix}] if suffix is not None else [])
    out: dict[str, Any] = {"Id": id_, "QueueArn": arn, "Events": events}
    if rules:
        out["Filter"] = {"Key": {"FilterRules": rules}}
    return out


def drain_until(done: Callable[[], bool], timeout: float = 90.0) -> None:
    """Drain the outbox (as beat's events.deliver does) until ``done``."""
    from tierpilot.events import delivery

    def step() -> bool:
        delivery.drain(budget_s=2.0)
        return done()

    wait_until(step, timeout=timeout, step=0.05)


def outbox_rows() -> int:
    from tierpilot.events import repository
    from tierpilot.kit.db import transaction

    with transaction() as session:
        return repository.outbox_stats(session)[0]


def keys_and_names(records: list[dict[str, Any]]) -> list[tuple[str, str, int]]:
    """(key, event name, sequencer) of each S3 event record received."""
    return [(r["s3"]["object"]["key"], r["eventName"], int(r["s3"]["object"]["sequencer"], 16)) for r in records]


def check_per_key_order(events: list[tuple[str, str, int]], expected: dict[str, list[str]]) -> None:
    """Every key got exactly its expected events, in order, with growing sequencers."""
    got: dict[str, list[tuple[str, int]]] = {}
    for key, name, seq in events:
        got.setdefault(key, []).append((name, seq))
    assert {k: [n for n, _ in v] for k, v in got.items()} == expected
    for seqs in got.values():
        assert [s for _, s in seqs] == sorted(s for _, s in seqs)
