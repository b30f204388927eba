"""A tier's egress destination: where its reads leave the provider, kept in its price_ref."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

REF = {"catalog": "aws-ap-northeast-1-2026", "storage_class": "STANDARD_IA"}


def _tier(client: TestClient, name: str, price_ref: dict[str, str]) -> Any:
    return client.post("/api/tiers", json={"name": name, "driver": "posix", "config": {"path": f"egress-{name}"},
                                           "price_ref": price_ref})


def test_egress_destination_is_stored_in_the_price_ref_and_shown_in_the_tier_answer(client: TestClient) -> None:
    r = _tier(client, "peered", {**REF, "egress": "research-network"})
    assert r.status_code == 201, r.text
    tier = r.json()
    assert tier["price_ref"] == {**REF, "egress": "research-network"}
    r = client.patch(f"/api/tiers/{tier['id']}", json={"price_ref": {**REF, "egress": "same-region"}})
    assert r.status_code == 200, r.text
    assert client.get(f"/api/tiers/{tier['id']}").json()["price_ref"]["egress"] == "same-region"
    # without the key the tier's reads leave over the internet, as before
    assert _tier(client, "plain", REF).json()["price_ref"] == REF


def test_an_unknown_egress_destination_is_a_422_naming_the_field(client: TestClient) -> None:
    r = _tier(client, "bad", {**REF, "egress": "moon"})
    assert r.status_code == 422 and "price_ref" in r.json()["detail"] and "price_ref.egress must be one of" in (
        r.json()["detail"]), r.text
    tier = _tier(client, "good", REF).json()
    for ref, message in (({**REF, "egress": "inter-region"}, "price_ref.egress must be one of"),
                         ({"egress": "internet"}, "price_ref.egress: needs a catalog")):
        r = client.patch(f"/api/tiers/{tier['id']}", json={"price_ref": ref})
        assert r.status_code == 422 and message in r.json()["detail"], r.text
    assert client.get(f"/api/tiers/{tier['id']}").json()["price_ref"] == REF
