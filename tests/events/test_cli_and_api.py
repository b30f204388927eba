"""`tierpilot events …` and ``/api/events``: targets with their ARNs, a test event, deliveries, dead letters."""

from __future__ import annotations

import json
import uuid

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from tests.notifications.receiver import running_receiver
from tierpilot.app.cli import app


def test_cli_adds_lists_targets_and_replays_dead_letters(db: str) -> None:
    runner = CliRunner()
    name = f"rabbit-{uuid.uuid4().hex[:6]}"
    added = runner.invoke(app, ["events", "targets", "add", name, "--type", "amqp", "--url",
                                "amqp://guest:secret-pw@127.0.0.1:5672/%2F", "--topic", "bucket-events"])
    assert added.exit_code == 0, added.output
    assert added.stdout.strip() == f"arn:tierpilot:sqs::{name}:amqp"
    listed = runner.invoke(app, ["events", "targets", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    [row] = [r for r in json.loads(listed.stdout) if r["name"] == name]
    assert row == {"name": name, "type": "amqp", "url": "amqp://guest:***@127.0.0.1:5672/%2F",
                   "topic": "bucket-events", "arn": f"arn:tierpilot:sqs::{name}:amqp"}
    assert "secret-pw" not in listed.stdout
    refused = runner.invoke(app, ["events", "targets", "add", "x", "--type", "kafka", "--url", "kafka://h"])
    assert refused.exit_code == 2
    replayed = runner.invoke(app, ["events", "deadletters", "--replay"])
    assert replayed.exit_code == 0 and replayed.stdout.strip() == "0 replayed"


def test_admin_api_adds_a_webhook_target_and_sends_it_a_test_event(client: TestClient) -> None:
    with running_receiver() as receiver:
        name = f"hook-{uuid.uuid4().hex[:6]}"
        r = client.post("/api/events/targets", json={"name": name, "type": "webhook", "url": receiver.url})
        assert r.status_code == 201, r.text
        assert r.json()["arn"] == f"arn:tierpilot:sqs::{name}:webhook" and r.json()["secret"].startswith("whsec_")
        tested = client.post(f"/api/events/targets/{name}/test")
        assert tested.json() == {"ok": True, "error": None}
        assert receiver.received[0]["Event"] == "s3:TestEvent"
        receiver.answers.append(500)
        assert client.post(f"/api/events/targets/{name}/test").json() == {"ok": False, "error": "HTTP 500"}
    assert client.get("/api/events/metrics").json() == {"queued": 0, "retrying": 0, "dead_letters": 0,
                                                        "oldest_age_s": None}
    assert [t["name"] for t in client.get("/api/events/targets").json()] == [name]


def test_a_webhook_target_on_an_inside_address_is_refused_unless_allowed(client: TestClient) -> None:
    r = client.post("/api/events/targets", json={"name": "inside", "type": "webhook",
                                                 "url": "http://127.0.0.1:9/hook"})
    assert r.status_code == 422 and "TIERPILOT_WEBHOOK_ALLOW_HOSTS" in r.text


def test_members_may_not_manage_targets(member_client: TestClient) -> None:
    assert member_client.get("/api/events/targets").status_code == 403
