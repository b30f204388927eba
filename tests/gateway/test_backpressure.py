"""Backpressure: past its slots a gateway process lets a request wait a bounded time, then answers
503 SlowDown with Retry-After, which S3 clients retry.

The admission rules run on virtual time (``tests.clocks``): every wait is counted exactly, none is slept. A real
gateway with two slots, held by PUTs whose bodies are still coming, then shows the status codes, the header,
the metric, boto3 and Debian's AWS CLI v2 retrying through it, and normal service once the slots come free.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from botocore.exceptions import ClientError

from tests.clocks import run_in_virtual_time
from tests.gateway import rawclient as raw
from tests.gateway.conftest import Gateway, start_gateway, stop
from tests.waiting import wait_until
from tierpilot.gateway.admission import Admission, slow_down

AWS = "/usr/bin/aws"  # Debian's awscli package: AWS CLI v2

# -- the admission rules, on virtual time ---------------------------------------------------------------------


async def _request(gate: Admission, arrive_at: float, hold_s: float, log: list[tuple[str, str, float, float]],
                   name: str) -> None:
    """Arrive at ``arrive_at``, ask for a slot as the gateway does (a free one taken at once, else wait), hold it
    ``hold_s``; log (name, outcome, asked at, answered at)."""
    loop = asyncio.get_running_loop()
    await asyncio.sleep(arrive_at)
    asked = loop.time()
    admitted = gate.take() or await gate.enter()
    log.append((name, "admitted" if admitted else "refused", asked, loop.time()))
    if admitted:
        await asyncio.sleep(hold_s)
        gate.leave()


def test_requests_beyond_the_slots_wait_at_most_the_bound_then_are_refused() -> None:
    async def main() -> tuple[list[tuple[str, str, float, float]], bool, int]:
        gate = Admission(limit=2, wait_s=2.0)
        log: list[tuple[str, str, float, float]] = []
        await asyncio.gather(*(_request(gate, 0.0, 5.0, log, f"r{i}") for i in range(6)))
        after = await gate.enter()  # once the slow ones are done, a newcomer is served at once
        gate.leave()
        return log, after, gate.in_flight + gate.waiting

    log, after, left = run_in_virtual_time(main())
    admitted = [(asked, answered) for _, outcome, asked, answered in log if outcome == "admitted"]
    refused = [(asked, answered) for _, outcome, asked, answered in log if outcome == "refused"]
    assert len(admitted) == 2 and all(answered == asked for asked, answered in admitted)
    assert len(refused) == 4
    assert all(answered - asked == pytest.approx(2.0) for asked, answered in refused), refused
    assert after and left == 0


def test_a_freed_slot_goes_to_the_oldest_waiter_and_a_newcomer_does_not_overtake() -> None:
    async def main() -> list[tuple[str, str, float, float]]:
        gate = Admission(limit=1, wait_s=2.0)
        log: list[tuple[str, str, float, float]] = []
        await asyncio.gather(_request(gate, 0.0, 0.6, log, "a"), _request(gate, 0.1, 0.6, log, "b"),
                             _request(gate, 0.2, 0.6, log, "c"), _request(gate, 0.3, 0.6, log, "d"),
                             _request(gate, 0.35, 0.6, log, "e"), _request(gate, 1.0, 0.6, log, "late"))
        return log

    log = run_in_virtual_time(main())
    answers = {name: (outcome, answered) for name, outcome, _, answered in log}
    assert [name for name, outcome, _, _ in log if outcome == "admitted"] == ["a", "b", "c", "d", "late"]
    for name, at in (("a", 0.0), ("b", 0.6), ("c", 1.2), ("d", 1.8), ("late", 2.4)):
        assert answers[name] == ("admitted", pytest.approx(at)), (name, answers[name])
    # "e" would have had the slot at 2.4, past its 2 s: refused at 0.35 + 2.0; "late" came after it and waited
    assert answers["e"] == ("refused", pytest.approx(2.35))


def test_a_cancelled_waiter_leaks_no_slot() -> None:
    async def main() -> tuple[int, int, bool]:
        gate = Admission(limit=1, wait_s=10.0)
        assert await gate.enter()
        gone = asyncio.ensure_future(gate.enter())  # cancelled while waiting
        handed = asyncio.ensure_future(gate.enter())  # cancelled just after the slot was handed to it
        for _ in range(3):  # both tasks run up to their wait for the slot
            await asyncio.sleep(0)
        gone.cancel()
        for _ in range(3):
            await asyncio.sleep(0)
        gate.leave()  # the slot goes to `handed`...
        handed.cancel()  # ...which is cancelled before it runs: the slot must come back
        for task in (gone, handed):
            with pytest.raises(asyncio.CancelledError):
                await task
        free = await asyncio.wait_for(gate.enter(), timeout=0.01)
        gate.leave()
        return gate.in_flight, gate.waiting, free

    assert run_in_virtual_time(main()) == (0, 0, True)


def test_slow_down_is_a_503_with_retry_after_in_whole_seconds() -> None:
    for wait_s, header in ((0.0, b"1"), (0.5, b"1"), (2.0, b"2"), (2.2, b"3")):
        err = slow_down(wait_s)
        assert (err.code, err.status) == ("SlowDown", 503)
        assert err.headers == [(b"retry-after", header)]


# -- a real gateway with two slots -----------------------------------------------------------------------------

SLOTS = 2
WAIT_S = 0.5


@dataclass
class Narrow:
    gateway: Gateway
    host: str
    port: int


@pytest.fixture(scope="module")
def narrow(gateway: Gateway, db_url: str, data_dir: Path) -> Iterator[Narrow]:
    """A second gateway on the suite's data with two slots and a short wait."""
    log = data_dir / f"gateway-backpressure-{uuid.uuid4().hex[:6]}.log"
    url, proc = start_gateway(db_url, log, {"TIERPILOT_GATEWAY_MAX_INFLIGHT": str(SLOTS),
                                            "TIERPILOT_GATEWAY_QUEUE_WAIT_S": str(WAIT_S)})
    parts = urlsplit(url)
    yield Narrow(Gateway(url=url, proc=proc, log=log, users=gateway.users, tier_dirs=gateway.tier_dirs),
                 parts.hostname or "127.0.0.1", parts.port or 80)
    stop(proc)


def _metric(url: str, name: str) -> float:
    """A gateway metric summed over its samples (this test's gateway is the only one refusing requests)."""
    text = httpx.get(f"{url}/_tierpilot/metrics", timeout=10).text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith(name) and not line.startswith("#"))


class _Holders:
    """PUTs that send their headers and half a body: each holds a slot until ``finish``."""

    def __init__(self, narrow: Narrow, bucket: str, count: int) -> None:
        user = narrow.gateway.users["alice"]
        self.socks: list[socket.socket] = []
        for i in range(count):
            url = raw.url_for(narrow.gateway.url, bucket, f"held-{i}")
            signed = raw.sign("PUT", url, {"content-length": "10"}, "UNSIGNED-PAYLOAD", user.access_key_id,
                              user.secret_access_key)
            head = "".join(f"{k}: {v}\r\n" for k, v in signed.headers.items())
            sock = socket.create_connection((narrow.host, narrow.port))
            sock.sendall(f"PUT /{bucket}/held-{i} HTTP/1.1\r\n{head}\r\n".encode() + b"01234")
            self.socks.append(sock)
        # admitted once the gateway counts them in flight (the suite's other gateway is idle meanwhile)
        wait_until(lambda: _metric(narrow.gateway.url, "tierpilot_gateway_requests_in_flight") >= count)

    def finish(self) -> list[bytes]:
        answers = []
        for sock in self.socks:
            sock.settimeout(10)
            sock.sendall(b"56789")
            answers.append(sock.recv(4096).partition(b"\r\n")[0])
            sock.close()
        return answers


def test_past_its_slots_the_gateway_answers_slow_down_within_the_bound_and_serves_after(narrow: Narrow) -> None:
    s3 = narrow.gateway.client("alice", retries={"mode": "standard", "max_attempts": 1}, max_pool_connections=8)
    bucket = f"t-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="small", Body=b"x" * 1024)
    refused_before = _metric(narrow.gateway.url, "tierpilot_gateway_slowdowns_total")
    holders = _Holders(narrow, bucket, SLOTS)

    def head(_: int) -> tuple[float, str, int, str]:
        started = time.monotonic()
        try:
            s3.head_object(Bucket=bucket, Key="small")
            return time.monotonic() - started, "served", 200, ""
        except ClientError as exc:
            meta = exc.response["ResponseMetadata"]
            return (time.monotonic() - started, exc.response["Error"]["Code"], meta["HTTPStatusCode"],
                    meta["HTTPHeaders"].get("retry-after", ""))

    try:
        with ThreadPoolExecutor(6) as pool:
            waiting = pool.submit(head, 0)
            # a request past the slots is counted as waiting while it waits, and no longer once refused
            wait_until(lambda: _metric(narrow.gateway.url, "tierpilot_gateway_requests_waiting") >= 1)
            assert waiting.result()[2] == 503
            wait_until(lambda: _metric(narrow.gateway.url, "tierpilot_gateway_requests_waiting") == 0)
            answers = list(pool.map(head, range(6)))
        put = httpx.put(f"{narrow.gateway.url}/{bucket}/unsigned", content=b"y", timeout=10)
    finally:
        finished = holders.finish()
    # HEAD has no body: boto3 names the error by the status; the PUT shows S3's code
    assert all((status, retry_after) == (503, "1") for _, _, status, retry_after in answers), answers
    # the queue wait is the behaviour: not refused before it, and refused within a bound any machine meets
    assert all(WAIT_S * 0.9 <= took < WAIT_S + 60.0 for took, _, _, _ in answers), answers
    assert (put.status_code, raw.error_code(put), put.headers.get("retry-after")) == (503, "SlowDown", "1")
    assert finished == [b"HTTP/1.1 200 OK"] * SLOTS
    assert _metric(narrow.gateway.url, "tierpilot_gateway_slowdowns_total") >= refused_before + 8
    # the slots are free again: normal requests are served, the held PUTs stored whole
    assert s3.get_object(Bucket=bucket, Key="held-0")["Body"].read() == b"0123456789"
    s3.put_object(Bucket=bucket, Key="after", Body=b"fine")
    assert s3.get_object(Bucket=bucket, Key="after")["Body"].read() == b"fine"


def test_boto3_and_the_aws_cli_retry_slow_down_until_a_slot_is_free(narrow: Narrow, tmp_path: Path) -> None:
    user = narrow.gateway.users["alice"]
    s3 = narrow.gateway.client("alice", retries={"mode": "standard", "max_attempts": 10})
    bucket = f"t-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket)
    refused = threading.Event()
    s3.meta.events.register("needs-retry.s3.PutObject", lambda response=None, **_: refused.set()
                            if response and response[1].get("Error", {}).get("Code") == "SlowDown" else None)
    holders = _Holders(narrow, bucket, SLOTS)
    source = tmp_path / "cli.txt"
    source.write_bytes(b"from the cli")
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, AWS_ACCESS_KEY_ID=user.access_key_id, AWS_SECRET_ACCESS_KEY=user.secret_access_key,
               AWS_DEFAULT_REGION="us-east-1", HOME=str(home), AWS_CONFIG_FILE=str(home / "config"),
               AWS_SHARED_CREDENTIALS_FILE=str(home / "credentials"), AWS_PAGER="", AWS_RETRY_MODE="standard",
               AWS_MAX_ATTEMPTS="10")
    debug = tmp_path / "aws-debug.log"
    cli: subprocess.Popen[bytes] | None = None
    result: dict[str, Any] = {}
    uploader = threading.Thread(target=lambda: result.update(s3.put_object(Bucket=bucket, Key="boto3", Body=b"b3")))
    try:
        # the CLI first (it takes a while to start), then boto3; the slots come free once both were refused,
        # before their backoff grows long
        if Path(AWS).exists():
            with open(debug, "wb") as err:
                cli = subprocess.Popen([AWS, "--endpoint-url", narrow.gateway.url, "--debug", "s3api", "put-object",
                                        "--bucket", bucket, "--key", "cli", "--body", str(source)], env=env,
                                       stdout=subprocess.DEVNULL, stderr=err)
            wait_until(lambda: b"<Code>SlowDown</Code>" in debug.read_bytes(), timeout=60)
        uploader.start()
        wait_until(refused.is_set)
    finally:
        finished = holders.finish()
        if uploader.ident is not None:
            uploader.join(timeout=60)
        if cli is not None:
            cli.wait(timeout=60)
    assert finished == [b"HTTP/1.1 200 OK"] * SLOTS
    assert result["ResponseMetadata"]["RetryAttempts"] >= 1
    assert s3.get_object(Bucket=bucket, Key="boto3")["Body"].read() == b"b3"
    if cli is not None:
        assert cli.returncode == 0, debug.read_text()[-3000:]
        assert s3.get_object(Bucket=bucket, Key="cli")["Body"].read() == b"from the cli"
