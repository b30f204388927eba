"""Bad input gets a 422 naming the field, never a 500: each known bad input (``BAD_INPUTS``) one by one, then a
bounded schemathesis run against the API's own OpenAPI schema in which no generated request may get a 5xx.

Every operation gets a few schema-conforming and a few schema-violating requests (fixed seed, no shrinking),
sent in-process to the real app on the suite's database as an admin with a bearer token. A request that
takes the admin's access away (a user deleted or disabled, a token revoked) is answered like any other; the
next operation starts with a fresh admin.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from collections import Counter
from typing import Any

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.generation import GenerationMode

from tests.conftest import login, make_user

EXAMPLES = int(os.environ.get("TIERPILOT_FUZZ_EXAMPLES", "6"))


INT64_PAST = "9223372036854775808"  # 2^63
WINDOW = {"direction": "read", "start": "2031-01-01T10:00:00Z", "end": "2031-01-01T11:00:00Z"}
BAD_INPUTS = [
    # (method, path, raw JSON body or None, the field the answer must name)
    ("GET", f"/api/tiers/{INT64_PAST}", None, "path.tier_id"),
    ("GET", "/api/tiers/2147483648", None, "path.tier_id"),  # past PostgreSQL's 32-bit ids
    ("DELETE", f"/api/pricing/scenarios/{INT64_PAST}", None, "path.scenario_id"),
    ("GET", "/api/reservations?offset=1840035119674332020736", None, "query.offset"),
    ("GET", "/api/keys?user_id=-9223372036854775809", None, "query.user_id"),
    ("GET", "/api/reservations/availability?direction=read&start=2031-01-01T10:00:00Z&end=2031-01-01T11:00:00Z"
            "&rate_mbps=1e308", None, "query.rate_mbps"),
    ("GET", "/api/reservations/availability?direction=read&start=2031-01-01T10:00:00Z&end=2031-01-01T11:00:00Z"
            "&rate_mbps=NaN", None, "query.rate_mbps"),
    ("GET", "/api/buckets/fuzz-bucket/objects?prefix=a%00b", None, "query.prefix"),
    ("POST", "/api/buckets", r'{"name": "ab\ud800c"}', "name"),
    ("POST", "/api/buckets", '{"name": "fine-name", "space_bytes": 1e309}', "space_bytes"),
    ("POST", "/api/buckets", '{"name": "fine-name", "space_bytes": "9223372036854775808"}', "space_bytes"),
    ("POST", "/api/buckets", r'{"name": "nul\u0000name"}', "name"),
    ("POST", "/api/reservations", json.dumps({"bucket": "fuzz-bucket", "rate_mbps": 1e308, **WINDOW}), "rate_mbps"),
    ("POST", "/api/reservations", '{"bucket": "fuzz-bucket", "rate_mbps": NaN, "direction": "read", '
                                  '"start": "2031-01-01T10:00:00Z", "end": "2031-01-01T11:00:00Z"}', "rate_mbps"),
    ("POST", "/api/reservations", '{"bucket": "fuzz-bucket", "rate_mbps": "Infinity", "direction": "read", '
                                  '"start": "2031-01-01T10:00:00Z", "end": "2031-01-01T11:00:00Z"}', "rate_mbps"),
    ("PUT", "/api/capacity", '{"read_mbps": -Infinity, "write_mbps": 100}', "read_mbps"),
    ("POST", "/api/tiers", '{"name": "t", "driver": "posix", "config": {"path": "x", "deep": [1, NaN]}}',
     "config.deep.1"),
    ("POST", "/api/tiers", '{"name": "t", "driver": "posix", "config": {"path": "x"}, '
                           '"capacity_bytes": 9223372036854775808}', "capacity_bytes"),
    ("POST", "/api/notifications/read", '{"ids": [1, 2147483648]}', "ids.1"),
]


@pytest.mark.parametrize(("method", "path", "body", "field"), BAD_INPUTS,
                         ids=[f"{m} {p[:60]} {f}" for m, p, _, f in BAD_INPUTS])
def test_bad_input_gets_a_422_naming_the_field_and_changes_nothing(
    client: TestClient, method: str, path: str, body: str | None, field: str
) -> None:
    tier = {"name": "fuzz-hot", "driver": "posix", "config": {"path": "fuzz-hot"}}
    assert client.post("/api/tiers", json=tier).status_code == 201
    assert client.post("/api/buckets", json={"name": "fuzz-bucket", "tier": "fuzz-hot"}).status_code == 201
    before = {p: client.get(p).json() for p in ("/api/tiers", "/api/buckets", "/api/reservations")}
    headers = {"content-type": "application/json"} if body is not None else {}
    r = client.request(method, path, content=body.encode() if body is not None else None, headers=headers)
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert f"{field}:" in detail or f"{field.split('.', 1)[-1]}:" in detail, detail
    assert {p: client.get(p).json() for p in before} == before


def _admin_token(app: Any) -> str:
    """A fresh admin and an API token of theirs, made through the API."""
    name = f"fuzz-{uuid.uuid4().hex[:8]}"
    make_user(name, "fuzz-password-1", is_admin=True)
    with TestClient(app, base_url="http://127.0.0.1") as c:
        login(c, name, "fuzz-password-1")
        r = c.post("/api/auth/tokens", json={"name": "fuzz"})
        assert r.status_code == 201, r.text
        return str(r.json()["token"])


def _fuzz(operation: Any, mode: GenerationMode, token: str, sent: Counter[str], failures: list[str]) -> None:
    """EXAMPLES requests of one kind to one operation; 5xx answers (and exceptions the app let out) recorded."""
    label = operation.label

    @settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    @given(case=operation.as_strategy(generation_mode=mode))
    def run(case: Any) -> None:
        sent[label] += 1
        try:
            status = case.call(headers={"Authorization": f"Bearer {token}"}).status_code
        except Exception as exc:  # the app let an exception out: what a client sees as a 500
            status, label_ = 500, f"{label} raised {type(exc).__name__}: {exc}"[:300]
        else:
            label_ = label
        if status >= 500:
            failures.append(f"{label_} -> {status}: {case.as_curl_command()}"[:700])

    with contextlib.suppress(Unsatisfiable):  # nothing of the operation can violate its schema
        run()


def test_no_generated_request_gets_a_5xx(db: str) -> None:
    from tierpilot.app.api import create_app

    app = create_app()
    schema = schemathesis.openapi.from_asgi("/api/openapi.json", app)
    token = _admin_token(app)
    sent: Counter[str] = Counter()
    failures: list[str] = []
    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1
        with TestClient(app, base_url="http://127.0.0.1") as probe:
            if probe.get("/api/auth/me", headers={"Authorization": f"Bearer {token}"}).status_code != 200:
                token = _admin_token(app)
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            _fuzz(operation, mode, token, sent, failures)
    total = sum(sent.values())
    print(f"\nfuzzed {total} requests on {operations} operations, {len(failures)} answered 5xx")
    assert operations > 50 and total > operations * EXAMPLES
    assert not failures, f"{len(failures)} of {total} requests got a 5xx:\n" + "\n".join(failures[:40])


@pytest.fixture(autouse=True)
def _quiet_hypothesis_output(monkeypatch: pytest.MonkeyPatch) -> None:
    # schemathesis prints nothing of its own here; Hypothesis' "Trying example" lines would flood the log
    monkeypatch.setenv("HYPOTHESIS_VERBOSITY_LEVEL", "quiet")
