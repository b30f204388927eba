"""The audit log: security-relevant events are recorded with their actor, browsed by admins (paged, filtered
by actor, event and time) and exported as CSV; members cannot read it."""

from __future__ import annotations

import csv
import io

from fastapi.testclient import TestClient

from tests.auth.test_accounts import make_tier
from tierpilot.kit.db import utcnow


def _events(client: TestClient, **params: object) -> list[dict[str, object]]:
    r = client.get("/api/audit", params=params)
    assert r.status_code == 200, r.text
    return list(r.json()["events"])


def test_security_events_are_recorded_with_actor_and_target(client: TestClient, app_client: TestClient,
                                                            member_client: TestClient,
                                                            member_user: dict[str, str]) -> None:
    started = utcnow()
    # a failed login is kept although the request answered 401 (its transaction still commits the event)
    from tierpilot.app.api import create_app

    with TestClient(create_app(), base_url="http://127.0.0.1") as anon:
        assert anon.post("/api/auth/login", json={"username": "member", "password": "wrong-pass"}).status_code == 401
    token = member_client.post("/api/auth/tokens", json={"name": "ci"}).json()
    member_client.delete(f"/api/auth/tokens/{token['id']}")
    make_tier(client)
    member_client.post("/api/buckets", json={"name": "audited"})
    member_client.delete("/api/buckets/audited")
    client.put("/api/capacity", json={"read_mbps": 300, "write_mbps": 150})
    client.patch(f"/api/users/{member_user['id']}", json={"role": "admin"})
    client.patch(f"/api/users/{member_user['id']}", json={"disabled": True})

    events = _events(client, since=started.isoformat())
    seen = [(e["event"], e["actor"], e["target"]) for e in reversed(events)]
    for expected in [
        ("auth.login_failed", "member", "user:member"),
        ("auth.token_created", "member", "user:member"),
        ("auth.token_revoked", "member", "user:member"),
        ("tier.created", "admin", "tier:hot-disk"),
        ("bucket.deleted", "member", "bucket:audited"),
        ("capacity.changed", "admin", "pool:default"),
        ("user.role_changed", "admin", "user:member"),
        ("user.disabled", "admin", "user:member"),
    ]:
        assert expected in seen, (expected, seen)
    failed = next(e for e in events if e["event"] == "auth.login_failed")
    assert failed["actor_id"] is None and failed["client"] and failed["detail"] == {"reason": "password"}
    role = next(e for e in events if e["event"] == "user.role_changed")
    assert role["detail"] == {"before": "member", "after": "admin"}
    assert "wrong-pass" not in str(events)  # never a password


def test_browse_filters_and_pages(client: TestClient, member_client: TestClient) -> None:
    for i in range(5):
        member_client.post("/api/auth/tokens", json={"name": f"t{i}"})
    mine = _events(client, actor="member", event="auth.token")
    assert [e["detail"]["name"] for e in mine] == ["t4", "t3", "t2", "t1", "t0"]  # newest first
    first = client.get("/api/audit", params={"actor": "member", "limit": 2}).json()
    second = client.get("/api/audit", params={"actor": "member", "limit": 2,
                                              "before_id": first["next_before_id"]}).json()
    ids = [e["id"] for e in first["events"] + second["events"]]
    assert len(ids) == 4 and ids == sorted(ids, reverse=True)
    assert "auth.login_ok" in first["event_names"]
    assert _events(client, actor="nobody") == []
    assert _events(client, until="2000-01-01T00:00:00Z") == []
    bad = client.get("/api/audit", params={"since": "2030-01-01T00:00:00Z", "until": "2020-01-01T00:00:00Z"})
    assert bad.status_code == 422 and "since" in bad.json()["detail"]
    assert client.get("/api/audit", params={"limit": 100000}).status_code == 422


def test_csv_export_is_complete_and_safe_for_spreadsheets(client: TestClient, member_client: TestClient) -> None:
    member_client.post("/api/auth/tokens", json={"name": "=HYPERLINK(\"http://evil\")"})
    r = client.get("/api/audit.csv", params={"actor": "member"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    assert "attachment" in r.headers["content-disposition"]
    rows = list(csv.reader(io.StringIO(r.text)))
    assert rows[0] == ["id", "at", "event", "actor", "actor_id", "client", "target", "detail"]
    events = [row[2] for row in rows[1:]]
    assert events == ["auth.login_ok", "auth.token_created"]  # oldest first
    assert all(not cell.startswith("=") for row in rows for cell in row)


def test_members_cannot_read_the_audit_log(member_client: TestClient) -> None:
    assert member_client.get("/api/audit").status_code == 403
    assert member_client.get("/api/audit.csv").status_code == 403
