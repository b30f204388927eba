"""The reservations API: booking, every rejection, visibility between users, capacity."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fastapi.testclient import TestClient

from tests.reservations.conftest import iso, soon
from tierpilot.kit.db import transaction
from tierpilot.reservations import service
from tierpilot.reservations.models import Reservation, ReservationSample


def set_capacity(client: TestClient, read: float = 300, write: float = 150, share: float = 0.1) -> None:
    r = client.put("/api/capacity", json={"read_mbps": read, "write_mbps": write, "unbookable_share": share})
    assert r.status_code == 200, r.text


def count_reservations() -> int:
    with transaction() as s:
        return s.query(Reservation).count()


# ---------------------------------------------------------------- capacity


def test_capacity_defaults_then_admin_sets_it(client: TestClient):
    r = client.get("/api/capacity")
    assert r.status_code == 200
    assert r.json()["unbookable_share"] == 0.1
    set_capacity(client, 300, 150)
    body = client.get("/api/capacity").json()
    assert (body["read_mbps"], body["write_mbps"]) == (300, 150)
    assert (body["bookable_read_mbps"], body["bookable_write_mbps"]) == (270, 135)


def test_members_read_but_cannot_set_capacity(client: TestClient, member_client: TestClient):
    set_capacity(client, 300, 150)
    assert member_client.get("/api/capacity").json()["read_mbps"] == 300
    r = member_client.put("/api/capacity", json={"read_mbps": 1, "write_mbps": 1})
    assert r.status_code == 403
    assert client.get("/api/capacity").json()["read_mbps"] == 300


def test_capacity_rejects_bad_figures(client: TestClient):
    for body in ({"read_mbps": 0, "write_mbps": 10}, {"read_mbps": 10, "write_mbps": -1},
                 {"read_mbps": 10, "write_mbps": 10, "unbookable_share": 1.0}, {"read_mbps": 10}):
        assert client.put("/api/capacity", json=body).status_code == 422, body
    assert client.get("/api/capacity").json()["read_mbps"] == 1000


def test_lowering_capacity_below_bookings_reports_the_overbooking(client: TestClient, book):
    set_capacity(client)
    assert book(rate_mbps=200).status_code == 201
    r = client.put("/api/capacity", json={"read_mbps": 100, "write_mbps": 150})
    assert r.status_code == 200
    over = r.json()["overbooked"]
    assert over and over[0]["direction"] == "read" and over[0]["booked_mbps"] == 200
    assert over[0]["bookable_mbps"] == 90


def test_capacity_needs_sign_in(app_client: TestClient):
    assert app_client.get("/api/capacity").status_code == 401


# ---------------------------------------------------------------- booking


def test_booking_returns_an_opaque_id(client: TestClient, book):
    set_capacity(client)
    start = soon(30)
    r = book(rate_mbps=90, start=start, minutes=240, note="belle2 reprocessing")
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["id"].startswith("rsv_") and len(body["id"]) >= 32
    assert body["state"] == "booked" and body["rate_mbps"] == 90 and body["owner"] == "admin"
    assert datetime.fromisoformat(body["start"]) == start
    assert client.get(f"/api/reservations/{body['id']}").json()["note"] == "belle2 reprocessing"
    other = book(rate_mbps=1, start=start, minutes=5).json()["id"]
    assert other != body["id"]


def test_a_booking_starting_now_is_active(client: TestClient, book):
    r = book(start=datetime.now(UTC), minutes=10)
    assert r.status_code == 201 and r.json()["state"] == "active"


def test_booking_that_does_not_fit_gets_409_with_largest_rate_and_earliest_start(client: TestClient, book):
    set_capacity(client)
    start = soon()
    assert book(rate_mbps=200, start=start, minutes=60).status_code == 201
    r = book(rate_mbps=200, start=start + timedelta(minutes=30), minutes=60)
    assert r.status_code == 409
    body = r.json()
    assert body["max_rate_mbps"] == 70
    assert datetime.fromisoformat(body["earliest_start"]) == start + timedelta(minutes=60)
    assert "does not fit" in body["detail"]
    assert count_reservations() == 1


def test_rate_above_bookable_capacity_has_no_earliest_start(client: TestClient, book):
    set_capacity(client)
    r = book(rate_mbps=271)
    assert r.status_code == 409
    assert r.json()["max_rate_mbps"] == 270 and r.json()["earliest_start"] is None


def test_directions_are_booked_independently(client: TestClient, book):
    set_capacity(client)
    start = soon()
    assert book(rate_mbps=270, start=start).status_code == 201
    assert book(rate_mbps=135, start=start, direction="write").status_code == 201
    assert book(rate_mbps=1, start=start, direction="write").status_code == 409


def test_edge_touching_bookings_both_fit(client: TestClient, book):
    set_capacity(client)
    start = soon()
    assert book(rate_mbps=270, start=start, minutes=60).status_code == 201
    assert book(rate_mbps=270, start=start + timedelta(minutes=60), minutes=60).status_code == 201
    assert book(rate_mbps=270, start=start - timedelta(minutes=60), minutes=60).status_code == 201


def test_invalid_bookings_are_rejected_and_store_nothing(client: TestClient, book):
    now = datetime.now(UTC)
    cases = [
        dict(direction="sideways"),
        dict(rate_mbps=0),
        dict(rate_mbps=-5),
        dict(minutes=0),
        dict(minutes=-10),
        dict(start=now - timedelta(hours=2), minutes=60),
        dict(minutes=32 * 24 * 60),
        dict(start=now + timedelta(days=400)),
        dict(bucket="Not_A_Bucket"),
        dict(bucket="ab"),
        dict(note="x" * 501),
    ]
    for case in cases:
        r = book(**case)
        assert r.status_code == 422, (case, r.text)
        assert r.json()["detail"]
    r = client.post("/api/reservations", json={"bucket": "bench", "direction": "read", "rate_mbps": 1,
                                               "start": "tomorrow", "end": "later"})
    assert r.status_code == 422
    assert count_reservations() == 0


def test_booking_needs_sign_in_and_csrf(client: TestClient, book):
    from tierpilot.app.api import create_app

    with TestClient(create_app(), base_url="http://127.0.0.1") as anonymous:
        assert book(anonymous).status_code == 401
    token = client.headers.pop("X-CSRF-Token")
    try:
        assert book().status_code == 403
    finally:
        client.headers["X-CSRF-Token"] = token
    assert count_reservations() == 0


def test_members_cannot_book_another_users_bucket(client: TestClient, member_client: TestClient, book,
                                                  make_bucket, admin_user):
    make_bucket("admins-data", int(admin_user["id"]))
    r = book(member_client, bucket="admins-data")
    # answered as for a bucket that does not exist: a member does not learn that another's name is taken
    missing = book(member_client, bucket="nobodys-data")
    assert r.status_code == missing.status_code == 422
    assert r.json() == {**missing.json(), "detail": missing.json()["detail"].replace("nobodys-data", "admins-data")}
    assert book(client, bucket="admins-data").status_code == 201


def test_a_booking_for_a_missing_bucket_gets_422_naming_the_bucket_and_stores_nothing(
        client: TestClient, member_client: TestClient, book, make_bucket, admin_user):
    make_bucket("admins-data", int(admin_user["id"]))
    for c in (client, member_client):
        r = book(c, bucket="no-such-bucket")
        assert r.status_code == 422, r.text
        assert r.json()["detail"].startswith("bucket:") and "no-such-bucket" in r.json()["detail"]
    # the availability check takes no bucket, so it still answers for a window alone
    start = soon()
    assert client.get("/api/reservations/availability", params={
        "direction": "read", "start": iso(start), "end": iso(start + timedelta(hours=1))}).status_code == 200
    assert count_reservations() == 0
    # once the bucket exists its owner (and an admin) may book it
    assert book(client, bucket="admins-data").status_code == 201


def test_naive_times_are_utc(client: TestClient, make_bucket, admin_user):
    make_bucket("naive-times", int(admin_user["id"]))
    start = soon().replace(tzinfo=None)
    r = client.post("/api/reservations", json={
        "bucket": "naive-times", "direction": "read", "rate_mbps": 5, "start": start.isoformat(),
        "end": (start + timedelta(hours=1)).isoformat()})
    assert r.status_code == 201
    assert datetime.fromisoformat(r.json()["start"]) == start.replace(tzinfo=UTC)


# ---------------------------------------------------------------- visibility and cancelling


def test_members_see_only_their_own_reservations(client: TestClient, member_client: TestClient, book):
    admins = book(client).json()["id"]
    mine = book(member_client).json()["id"]
    assert [r["id"] for r in member_client.get("/api/reservations").json()] == [mine]
    assert member_client.get(f"/api/reservations/{admins}").status_code == 404
    assert member_client.get(f"/api/reservations/{admins}/throughput").status_code == 404
    assert member_client.delete(f"/api/reservations/{admins}").status_code == 404
    assert client.get(f"/api/reservations/{admins}").json()["state"] == "booked"
    # admins see everyone's, and can narrow to one owner
    assert {r["id"] for r in client.get("/api/reservations").json()} == {admins, mine}
    assert [r["id"] for r in client.get("/api/reservations", params={"owner": "member"}).json()] == [mine]
    assert client.get("/api/reservations", params={"owner": "nobody"}).json() == []
    # the owner filter does not widen a member's view
    assert [r["id"] for r in member_client.get("/api/reservations", params={"owner": "admin"}).json()] == [mine]


def test_unknown_reservation_is_404(client: TestClient):
    assert client.get("/api/reservations/rsv_nope").status_code == 404
    assert client.delete("/api/reservations/rsv_nope").status_code == 404


def test_cancel_frees_the_window(client: TestClient, book):
    set_capacity(client)
    start = soon()
    rid = book(rate_mbps=270, start=start).json()["id"]
    assert book(rate_mbps=10, start=start).status_code == 409
    assert client.delete(f"/api/reservations/{rid}").status_code == 204
    assert client.get(f"/api/reservations/{rid}").json()["state"] == "cancelled"
    assert client.delete(f"/api/reservations/{rid}").status_code == 204  # repeating is harmless
    assert book(rate_mbps=270, start=start).status_code == 201


def test_admin_cancels_a_members_reservation(client: TestClient, member_client: TestClient, book):
    rid = book(member_client).json()["id"]
    assert client.delete(f"/api/reservations/{rid}").status_code == 204
    assert member_client.get(f"/api/reservations/{rid}").json()["state"] == "cancelled"


def insert_reservation(owner_id: int, start: datetime, end: datetime, rate_mbps: float = 10,
                       direction: str = "read", bucket: str = "bench") -> str:
    with transaction(write=True) as s:
        r = Reservation(id=service.new_reservation_id(), owner_id=owner_id, bucket=bucket, direction=direction,
                        rate_bps=service.bps_of(rate_mbps), start_at=start, end_at=end)
        s.add(r)
        return r.id


def test_finished_reservations_cannot_be_cancelled(client: TestClient, admin_user):
    now = datetime.now(UTC)
    rid = insert_reservation(int(admin_user["id"]), now - timedelta(hours=2), now - timedelta(hours=1))
    r = client.delete(f"/api/reservations/{rid}")
    assert r.status_code == 409
    assert client.get(f"/api/reservations/{rid}").json()["state"] == "finished"


def test_list_filters_by_state_and_direction(client: TestClient, book, admin_user):
    now = datetime.now(UTC)
    finished = insert_reservation(int(admin_user["id"]), now - timedelta(hours=2), now - timedelta(hours=1))
    active = insert_reservation(int(admin_user["id"]), now - timedelta(minutes=5), now + timedelta(hours=1),
                                direction="write")
    booked = book().json()["id"]
    cancelled = book(start=soon(120)).json()["id"]
    client.delete(f"/api/reservations/{cancelled}")

    def ids(**params):
        r = client.get("/api/reservations", params=params)
        assert r.status_code == 200, r.text
        return {x["id"] for x in r.json()}

    assert ids(state="finished") == {finished}
    assert ids(state="active") == {active}
    assert ids(state="booked") == {booked}
    assert ids(state="cancelled") == {cancelled}
    assert ids(state=["booked", "active"]) == {booked, active}
    assert ids(direction="write") == {active}
    assert ids() == {finished, active, booked, cancelled}
    assert client.get("/api/reservations", params={"state": "lost"}).status_code == 422


# ---------------------------------------------------------------- availability, timeline, throughput


def test_availability_reports_free_rate_and_earliest_window(client: TestClient, book):
    set_capacity(client)
    start = soon()
    book(rate_mbps=200, start=start, minutes=60)
    params = {"direction": "read", "start": iso(start + timedelta(minutes=30)),
              "end": iso(start + timedelta(minutes=90))}
    body = client.get("/api/reservations/availability", params=params).json()
    assert body["max_rate_mbps"] == 70 and body["booked_peak_mbps"] == 200
    assert body["capacity_mbps"] == 300 and body["bookable_mbps"] == 270 and body["fits"] is None
    body = client.get("/api/reservations/availability", params={**params, "rate_mbps": 100}).json()
    assert body["fits"] is False
    assert datetime.fromisoformat(body["earliest_start"]) == start + timedelta(minutes=60)
    assert datetime.fromisoformat(body["earliest_end"]) == start + timedelta(minutes=120)
    body = client.get("/api/reservations/availability", params={**params, "rate_mbps": 70}).json()
    assert body["fits"] is True
    assert datetime.fromisoformat(body["earliest_start"]) == start + timedelta(minutes=30)
    # write is untouched
    body = client.get("/api/reservations/availability", params={**params, "direction": "write"}).json()
    assert body["max_rate_mbps"] == 135


def test_availability_rejects_bad_queries(client: TestClient):
    start = soon()
    good = {"direction": "read", "start": iso(start), "end": iso(start + timedelta(hours=1))}
    for bad in ({"direction": "up"}, {"end": iso(start)}, {"rate_mbps": 0}, {"start": "soon"}):
        assert client.get("/api/reservations/availability", params={**good, **bad}).status_code == 422, bad
    assert client.get("/api/reservations/availability", params={"direction": "read"}).status_code == 422


def test_member_sees_everyones_load_but_only_own_bars_on_the_timeline(client: TestClient,
                                                                       member_client: TestClient, book):
    set_capacity(client)
    start = soon()
    book(client, rate_mbps=100, start=start, minutes=60)
    mine = book(member_client, rate_mbps=50, start=start + timedelta(minutes=30), minutes=60).json()["id"]
    body = member_client.get("/api/reservations/timeline", params={
        "start": iso(start - timedelta(hours=1)), "end": iso(start + timedelta(hours=3))}).json()
    read = next(d for d in body["directions"] if d["direction"] == "read")
    assert read["capacity_mbps"] == 300 and read["bookable_mbps"] == 270
    assert [(datetime.fromisoformat(s["at"]), s["booked_mbps"]) for s in read["steps"]] == [
        (start - timedelta(hours=1), 0), (start, 100), (start + timedelta(minutes=30), 150),
        (start + timedelta(minutes=60), 50), (start + timedelta(minutes=90), 0)]
    assert [r["id"] for r in body["reservations"]] == [mine]
    assert len(client.get("/api/reservations/timeline").json()["reservations"]) == 2


def test_timeline_rejects_an_inverted_or_huge_span(client: TestClient):
    start = soon()
    assert client.get("/api/reservations/timeline", params={
        "start": iso(start), "end": iso(start - timedelta(hours=1))}).status_code == 422
    assert client.get("/api/reservations/timeline", params={
        "start": iso(start), "end": iso(start + timedelta(days=100))}).status_code == 422


def test_throughput_series_from_metering(client: TestClient, admin_user):
    now = datetime.now(UTC).replace(microsecond=0)
    start = now - timedelta(seconds=20)
    rid = insert_reservation(int(admin_user["id"]), start, now + timedelta(minutes=10), rate_mbps=50)
    first = int(start.timestamp())
    with transaction(write=True) as s:
        service.record_samples(s, [(rid, first + i, 50_000_000) for i in range(2, 12)]
                               + [("rsv_unknown", first, 1)])
    body = client.get(f"/api/reservations/{rid}/throughput").json()
    assert body["booked_mbps"] == 50 and body["state"] == "active" and body["step_s"] == 1
    values = {datetime.fromisoformat(p["at"]): p["achieved_mbps"] for p in body["points"]}
    assert values[start + timedelta(seconds=5)] == 50 and values[start] == 0
    assert len(body["points"]) >= 20
    assert body["achieved_mean_mbps"] == 50 and body["achieved_p5_mbps"] == 50
    with transaction() as s:
        assert s.query(ReservationSample).count() == 10
