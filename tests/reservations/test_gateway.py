"""Reservations enforced by a real gateway process: every rejection, the window, flows paid from their
classes under contention, metering into the database, and the health report (Redis shared and
unreachable). The rates under contention are measured in virtual time here, in wall time by
bench/reservations.py."""

from __future__ import annotations

import asyncio
import concurrent.futures
import shutil
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from tests.clocks import Ticks, run_in_virtual_time
from tests.gateway.conftest import Gateway, _setup_data, start_gateway, stop
from tests.servers import free_port
from tests.waiting import wait_until
from tierpilot.auth.models import User
from tierpilot.kit.db import transaction
from tierpilot.reservations import achieved, service
from tierpilot.reservations.gateway import LOOKUP_TTL_S, Directory, Entry, Pool, ReservationFlow, ReservationPolicy
from tierpilot.reservations.models import Reservation, ReservationSample

MB = 1_000_000
HEADER = "X-Tierpilot-Reservation"


@pytest.fixture(scope="module")
def gw(db_url: str, data_dir: Path, redis_url: str) -> Iterator[Gateway]:
    from tests.conftest import _truncate_all

    tag = uuid.uuid4().hex[:8]
    users, dirs = _setup_data(tag)
    with transaction(write=True) as s:
        service.set_capacity(s, 40 * MB, 40 * MB, 0.1)
    log = data_dir / f"gateway-res-{tag}.log"
    url, proc = start_gateway(db_url, log, {"TIERPILOT_REDIS_URL": redis_url})
    yield Gateway(url=url, proc=proc, log=log, users=users, tier_dirs=dirs)
    stop(proc)
    _truncate_all()


def with_reservation(client: BaseClient, reservation_id: str) -> BaseClient:
    """The boto3 event hook the UI's snippet shows: every request carries the reservation header."""

    def add_header(params: dict[str, Any], **_: Any) -> None:
        params["headers"][HEADER] = reservation_id

    client.meta.events.register("before-call.s3", add_header)
    return client


def book(user_id: int, bucket: str, direction: str = "read", rate_mbps: float = 1,
         start: datetime | None = None, minutes: float = 30) -> str:
    start = start or datetime.now(UTC) - timedelta(seconds=1)
    with transaction(write=True) as s:
        owner = s.get(User, user_id)
        assert owner is not None
        r = service.book(s, owner, bucket=bucket, direction=direction, rate_bps=int(rate_mbps * MB),
                         start=start, end=start + timedelta(minutes=minutes))
        return r.id


def cancel(user_id: int, *rids: str) -> None:
    with transaction(write=True) as s:
        owner = s.get(User, user_id)
        assert owner is not None
        for rid in rids:
            service.cancel(s, owner, rid)


@pytest.fixture(scope="module")
def alice_bucket(gw: Gateway) -> str:
    name = f"res-{uuid.uuid4().hex[:10]}"
    s3 = gw.client("alice")
    s3.create_bucket(Bucket=name)
    s3.put_object(Bucket=name, Key="small", Body=b"x" * 1000)
    return name


def read_concurrently(readers: list[tuple[str, str, dict[str, str], int]], size: int
                      ) -> tuple[dict[str, int], set[str]]:
    """Each reader GETs one third of an object, all at once; returns the bytes read per name and the
    reservation statuses the gateway answered."""
    moved = dict.fromkeys({r[0] for r in readers}, 0)
    statuses: set[str] = set()

    def reader(who: str, url: str, headers: dict[str, str], part: int) -> tuple[str, int, str]:
        third = size // 3
        with httpx.Client(timeout=60) as http:
            rng = f"bytes={part * third}-{(part + 1) * third - 1}"
            with http.stream("GET", url, headers={**headers, "Range": rng}) as r:
                assert r.status_code == 206, r.read()
                got = sum(len(chunk) for chunk in r.iter_bytes(256 * 1024))
                return who, got, r.headers.get("x-tierpilot-reservation-status", "-") + ":" + who

    with concurrent.futures.ThreadPoolExecutor(len(readers)) as pool:
        for who, got, status in pool.map(lambda r: reader(*r), readers):
            moved[who] += got
            statuses.add(status)
    return moved, statuses


def health(url: str) -> dict[str, Any]:
    return dict(httpx.get(f"{url}/_tierpilot/health").json()["reservations"])


def wait_for_snapshot_after(url: str, moment: float) -> None:
    """Wait until the gateway's reservation snapshot was read after ``moment`` (the second refresh after
    it: the first may have begun before)."""

    def refreshed_at() -> float:
        age = health(url)["snapshot_age_s"]
        return time.time() - age if age is not None else 0.0

    wait_until(lambda: refreshed_at() > moment)
    first = refreshed_at()
    wait_until(lambda: refreshed_at() > first + 0.5)


def rejected(fn: Any) -> str:
    with pytest.raises(ClientError) as exc:
        fn()
    err = exc.value.response["Error"]
    assert exc.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert err["Code"] == "InvalidReservation"
    return str(err["Message"])


def test_unknown_id_is_refused(gw: Gateway, alice_bucket: str):
    s3 = with_reservation(gw.client("alice"), "rsv_" + "x" * 32)
    assert "unknown" in rejected(lambda: s3.get_object(Bucket=alice_bucket, Key="small"))
    assert "unknown" in rejected(lambda: s3.put_object(Bucket=alice_bucket, Key="new", Body=b"y"))
    assert [o["Key"] for o in gw.client("alice").list_objects_v2(Bucket=alice_bucket)["Contents"]] == ["small"]


def test_another_users_reservation_is_refused(gw: Gateway, alice_bucket: str):
    bobs_bucket = f"bob-{uuid.uuid4().hex[:10]}"
    gw.client("bob").create_bucket(Bucket=bobs_bucket)
    bobs = book(gw.users["bob"].id, bobs_bucket)
    s3 = with_reservation(gw.client("alice"), bobs)
    assert "another user" in rejected(lambda: s3.get_object(Bucket=alice_bucket, Key="small"))


def test_reservation_for_another_bucket_or_direction_is_refused(gw: Gateway, alice_bucket: str):
    other = f"other-{uuid.uuid4().hex[:10]}"
    gw.client("alice").create_bucket(Bucket=other)
    other_bucket = book(gw.users["alice"].id, other)
    s3 = with_reservation(gw.client("alice"), other_bucket)
    assert other in rejected(lambda: s3.get_object(Bucket=alice_bucket, Key="small"))
    read_only = book(gw.users["alice"].id, alice_bucket, "read", rate_mbps=1)
    s3 = with_reservation(gw.client("alice"), read_only)
    assert "reads" in rejected(lambda: s3.put_object(Bucket=alice_bucket, Key="w", Body=b"y"))
    with pytest.raises(ClientError):
        gw.client("alice").head_object(Bucket=alice_bucket, Key="w")


def test_cancelled_reservation_is_refused(gw: Gateway, alice_bucket: str):
    rid = book(gw.users["alice"].id, alice_bucket, rate_mbps=1)
    s3 = with_reservation(gw.client("alice"), rid)
    assert s3.get_object(Bucket=alice_bucket, Key="small")["Body"].read() == b"x" * 1000
    with transaction(write=True) as s:
        alice = s.get(User, gw.users["alice"].id)
        assert alice is not None
        service.cancel(s, alice, rid)

    def refused() -> bool:
        try:
            s3.get_object(Bucket=alice_bucket, Key="small")
        except ClientError as exc:
            return exc.response["Error"]["Code"] == "InvalidReservation"
        return False

    wait_until(refused, timeout=10)


def test_outside_its_window_is_served_best_effort_with_a_header(gw: Gateway, alice_bucket: str):
    later = book(gw.users["alice"].id, alice_bucket, start=datetime.now(UTC) + timedelta(hours=2))
    s3 = with_reservation(gw.client("alice"), later)
    got = s3.get_object(Bucket=alice_bucket, Key="small")
    assert got["Body"].read() == b"x" * 1000
    status = got["ResponseMetadata"]["HTTPHeaders"]["x-tierpilot-reservation-status"]
    assert status.startswith("outside-window") and "best-effort" in status


def test_a_reservation_keeps_its_rate_against_greedy_best_effort_in_virtual_time() -> None:
    """Capacity 40 MB/s read; a 20 MB/s reservation read by 3 streams while 8 greedy streams read without
    one: the reservation keeps its 20 (sharing per stream would give it 11), best-effort gets the
    remainder, the total stays within capacity, and every reserved byte is metered."""
    chunk = 256 * 1024

    async def main() -> tuple[dict[str, int], float, int, dict[str, Any]]:
        loop = asyncio.get_running_loop()
        policy = ReservationPolicy(redis_url="", clock=loop.time)
        policy.directory.pool = Pool(40 * MB, 40 * MB, 0.1)
        now = time.time()
        alice = Entry("rsv_alice", 1, "b", "read", 20 * MB, now - 1, now + 3600, cancelled=False)
        policy.directory.entries = {alice.id: alice}
        moved = {"alice": 0, "bob": 0}
        stop_at = loop.time() + 10.0

        async def stream(who: str, flow: ReservationFlow) -> None:
            while loop.time() < stop_at:
                await flow.consume(chunk)
                moved[who] += chunk

        flows = [("alice", ReservationFlow(policy, "read", alice, [])) for _ in range(3)]
        flows += [("bob", ReservationFlow(policy, "read", None, [])) for _ in range(8)]
        started = loop.time()
        await asyncio.gather(*(stream(who, flow) for who, flow in flows))
        metered = sum(n for _, _, n in policy.meter.take())
        return moved, loop.time() - started, metered, policy.status()

    moved, seconds, metered, status = run_in_virtual_time(main())
    alice_rate, bob_rate = moved["alice"] / seconds, moved["bob"] / seconds
    assert alice_rate >= 0.97 * 20 * MB, (alice_rate / MB, bob_rate / MB)
    assert bob_rate >= 0.97 * 20 * MB, (alice_rate / MB, bob_rate / MB)
    assert moved["alice"] + moved["bob"] <= 40 * MB * seconds + 2 * (8 << 20)  # one burst per class at most
    assert metered == moved["alice"]
    classes = status["classes"]
    assert classes["read:rsv_alice"]["guaranteed_bytes"] >= 0.97 * 20 * MB * seconds
    assert classes["read:best-effort"]["waited_s"] > 0


def test_an_unknown_id_costs_one_lookup_until_the_cache_forgets_it() -> None:
    ticks = Ticks()
    directory = Directory(clock=ticks)
    fetched: list[str] = []

    def fetch(reservation_id: str) -> Entry | None:
        fetched.append(reservation_id)
        return None

    directory.fetch = fetch  # type: ignore[method-assign]

    async def look(times: int) -> None:
        for _ in range(times):
            assert await directory.lookup("rsv_nope") is None

    asyncio.run(look(5))
    assert fetched == ["rsv_nope"]
    ticks.sleep(LOOKUP_TTL_S)  # a cancellation or a new booking reaches new flows within this
    asyncio.run(look(5))
    assert fetched == ["rsv_nope"] * 2


def test_reserved_and_best_effort_reads_are_paid_from_their_classes_and_metered(
        gw: Gateway, alice_bucket: str, redis_url: str):
    """Alice reads with her reservation (3 parallel ranged GETs) while bob's 8 streams read without one:
    her bytes are paid from her reservation's buckets, his from best-effort's, and the gateway meters
    exactly her bytes into the database."""
    s3 = gw.client("alice")
    size = 10 * MB
    s3.put_object(Bucket=alice_bucket, Key="big", Body=b"a" * size)
    bobs_bucket = f"bob-{uuid.uuid4().hex[:10]}"
    bob = gw.client("bob")
    bob.create_bucket(Bucket=bobs_bucket)
    bob.put_object(Bucket=bobs_bucket, Key="big", Body=b"b" * size)
    rid = book(gw.users["alice"].id, alice_bucket, rate_mbps=20)
    wait_for_snapshot_after(gw.url, time.time())  # the reservation is live there: best-effort contends

    alice_url = s3.generate_presigned_url("get_object", Params={"Bucket": alice_bucket, "Key": "big"})
    bob_url = bob.generate_presigned_url("get_object", Params={"Bucket": bobs_bucket, "Key": "big"})
    readers = [("alice", alice_url, {HEADER: rid}, i) for i in range(3)] + [("bob", bob_url, {}, i % 3)
                                                                          for i in range(8)]
    moved, statuses = read_concurrently(readers, size)
    assert statuses == {"active:alice", "-:bob"}
    assert moved == {"alice": 3 * (size // 3), "bob": 8 * (size // 3)}
    classes = health(gw.url)["classes"]
    paid = {k: v["guaranteed_bytes"] + v["spare_bytes"] for k, v in classes.items()}
    assert paid[f"read:{rid}"] >= moved["alice"]
    assert paid["read:best-effort"] >= moved["bob"]

    # the gateway metered alice's bytes per second; the roll-up stores them and the achieved figures
    client = redis.Redis.from_url(redis_url)

    def metered() -> int:
        with transaction() as s:
            return sum(x.nbytes for x in s.query(ReservationSample).filter_by(reservation_id=rid))

    def rolled_up() -> bool:
        achieved.rollup(client)
        return metered() >= moved["alice"]

    wait_until(rolled_up, timeout=10)
    assert metered() == moved["alice"]
    with transaction() as s:
        r = s.get(Reservation, rid)
        assert r is not None and r.achieved_mean_bps is not None and r.achieved_mean_bps > 0
        assert r.active_seconds >= 1


def test_health_reports_the_shared_limiter(gw: Gateway, alice_bucket: str):
    # a request with a reservation starts the enforcement loops
    gw.client("alice").get_object(Bucket=alice_bucket, Key="small")
    body = httpx.get(f"{gw.url}/_tierpilot/health").json()
    res = body["reservations"]
    assert res["limiter"] == "redis" and res["redis"] == "ok"
    assert res["gateway_processes"] >= 1


def test_unreachable_redis_keeps_serving_with_per_process_limits(gw: Gateway, alice_bucket: str, db_url: str,
                                                                 data_dir: Path):
    log = data_dir / f"gateway-noredis-{uuid.uuid4().hex[:6]}.log"
    url, proc = start_gateway(db_url, log, {"TIERPILOT_REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"})
    try:
        rid = book(gw.users["alice"].id, alice_bucket, rate_mbps=5)
        alice = gw.users["alice"]
        s3 = with_reservation(Gateway(url=url, proc=proc, log=log, users=gw.users, tier_dirs={}).client("alice"),
                              rid)
        assert alice.name == "alice"
        got = s3.get_object(Bucket=alice_bucket, Key="small")
        assert got["Body"].read() == b"x" * 1000
        assert got["ResponseMetadata"]["HTTPHeaders"]["x-tierpilot-reservation-status"] == "active"

        def reported() -> bool:
            res = httpx.get(f"{url}/_tierpilot/health").json()["reservations"]
            return bool(res["limiter"] == "local" and res["redis"].startswith("error"))

        wait_until(reported, timeout=10)
    finally:
        stop(proc)


def test_tierpilot_cp_moves_a_tree_under_reservations_and_reports_a_bad_one(
        gw: Gateway, alice_bucket: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """The CLI snippet the Reservations page offers: `tierpilot cp --reservation` up and down."""
    import filecmp
    import os
    import subprocess
    import sys

    alice = gw.users["alice"]
    env = dict(os.environ, AWS_ACCESS_KEY_ID=alice.access_key_id, AWS_SECRET_ACCESS_KEY=alice.secret_access_key,
               AWS_DEFAULT_REGION="us-east-1")
    src = tmp_path / "src"
    files = {"big.bin": os.urandom(20 * MB + 3), "sub/small.txt": b"run 42\n"}
    for name, data in files.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_bytes(data)

    def cp(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tierpilot.app.cli", "cp", "--endpoint", gw.url, "--quiet", *args],
                              env=env, capture_output=True, text=True, timeout=120)

    up = book(alice.id, alice_bucket, "write", rate_mbps=5, minutes=5)
    down = book(alice.id, alice_bucket, "read", rate_mbps=5, minutes=5)
    request.addfinalizer(lambda: cancel(alice.id, up, down))
    done = cp("--recursive", "--reservation", up, str(src), f"s3://{alice_bucket}/cp/")
    assert done.returncode == 0, done.stderr
    done = cp("--recursive", "--reservation", down, f"s3://{alice_bucket}/cp/", str(tmp_path / "back"))
    assert done.returncode == 0, done.stderr
    for name in files:
        assert filecmp.cmp(src / name, tmp_path / "back" / name, shallow=False), name

    # an upload under a read reservation is refused with the gateway's message, and nothing is written
    refused = cp("--reservation", down, str(src / "sub/small.txt"), f"s3://{alice_bucket}/cp/refused.txt")
    assert refused.returncode == 2 and "InvalidReservation" in refused.stderr, refused.stderr
    with pytest.raises(ClientError):
        gw.client("alice").head_object(Bucket=alice_bucket, Key="cp/refused.txt")


@pytest.mark.skipif(not (shutil.which("rclone") and shutil.which("s3cmd")), reason="rclone or s3cmd missing")
def test_the_rclone_and_s3cmd_snippets_carry_the_reservation(
        gw: Gateway, alice_bucket: str, redis_url: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """The commands the Reservations page shows, run as shown: the gateway meters their bytes to the
    reservation, so the header reached it on every data request (multipart parts too)."""
    import filecmp
    import os
    import subprocess

    alice = gw.users["alice"]
    host = gw.url.removeprefix("http://")
    header = "X-Tierpilot-Reservation: {}"
    local = tmp_path / "local"
    local.mkdir()
    (local / "data.bin").write_bytes(os.urandom(12 * MB))  # above the 5 MiB multipart cut-offs
    (tmp_path / "s3cfg").write_text(f"[default]\naccess_key = {alice.access_key_id}\n"
                                   f"secret_key = {alice.secret_access_key}\nbucket_location = us-east-1\n"
                                   "signature_v2 = False\nmultipart_chunk_size_mb = 5\n")
    env = {k: v for k, v in os.environ.items() if k != "AWS_CA_BUNDLE"}
    env.update(AWS_ACCESS_KEY_ID=alice.access_key_id, AWS_SECRET_ACCESS_KEY=alice.secret_access_key,
               AWS_REGION="us-east-1", HOME=str(tmp_path), RCLONE_CONFIG=str(tmp_path / "rclone.conf"))

    def run(cmd: list[str]) -> None:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert done.returncode == 0, f"{cmd[0]}: {done.stdout[-1500:]}\n{done.stderr[-1500:]}"

    up = book(alice.id, alice_bucket, "write", rate_mbps=5, minutes=5)
    down = book(alice.id, alice_bucket, "read", rate_mbps=5, minutes=5)
    request.addfinalizer(lambda: cancel(alice.id, up, down))
    rclone = ["rclone", "copy", "--s3-provider", "Other", "--s3-env-auth", "--s3-endpoint", gw.url,
              "--s3-upload-cutoff", "5M", "--s3-chunk-size", "5M"]
    run([*rclone, "--header", header.format(up), "./local", f":s3:{alice_bucket}/rclone"])
    run([*rclone, "--header", header.format(down), f":s3:{alice_bucket}/rclone", "./from-rclone"])
    s3cmd = ["s3cmd", "-c", str(tmp_path / "s3cfg"), f"--host={host}", f"--host-bucket={host}", "--no-ssl",
             "--disable-multipart", "--no-progress"]
    run([*s3cmd, f"--add-header={header.format(up)}", "put", "local/data.bin", f"s3://{alice_bucket}/s3cmd/data.bin"])
    assert filecmp.cmp(local / "data.bin", tmp_path / "from-rclone" / "data.bin", shallow=False)
    assert gw.client("alice").head_object(Bucket=alice_bucket, Key="s3cmd/data.bin")["ContentLength"] == 12 * MB

    client = redis.Redis.from_url(redis_url)

    def metered(rid: str) -> int:
        achieved.rollup(client)
        with transaction() as s:
            return sum(x.nbytes for x in s.query(ReservationSample).filter_by(reservation_id=rid))

    # rclone's upload (multipart) and s3cmd's PUT on the write reservation, rclone's ranged reads on the read one
    try:
        wait_until(lambda: metered(up) >= 2 * 12 * MB and metered(down) >= 12 * MB, timeout=15)
    except AssertionError:
        raise AssertionError(f"metered: up {metered(up)}, down {metered(down)}") from None
