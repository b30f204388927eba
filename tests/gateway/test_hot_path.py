"""The small-request hot path's shortcuts answer exactly what the long way did: the sub-resource a query selects,
query unquoting, HMAC-SHA256 with pre-hashed key states, canonical header values; and a finished request leaves
no reference cycle for the cyclic collector."""

from __future__ import annotations

import asyncio
import gc
import hashlib
import hmac
import random
import re
from typing import Any
from urllib.parse import unquote

import pytest

from tierpilot.app import wiring
from tierpilot.gateway import app, sigv4
from tierpilot.gateway.http import Request
from tierpilot.gateway.routes import SUBRESOURCES, subresource
from tierpilot.kit.tracing import Recorder


def test_subresource_is_the_first_of_the_list_present_whatever_the_query_order() -> None:
    rng = random.Random(7)
    names = [*SUBRESOURCES, "X-Amz-Date", "prefix", "versionId", "partNumber", "max-keys"]
    for _ in range(2000):
        query = {name: "" for name in rng.sample(names, rng.randint(0, 6))}
        assert subresource(query) == next((s for s in SUBRESOURCES if s in query), "")


def test_split_query_unquotes_as_unquote_does_and_remembers_only_short_escaped_values() -> None:
    app._unquote_short.cache_clear()
    credential = "AKIAEXAMPLE%2F20261129%2Fus-east-1%2Fs3%2Faws4_request"
    long_value = "%41" * 50
    raw = f"X-Amz-Credential={credential}&a%20b=c%2Fd&plain=x&empty=&{long_value}=1&=v".encode()
    for _ in range(2):  # the second time from the remembered values
        assert app._split_query(raw) == [("X-Amz-Credential", unquote(credential)), ("a b", "c/d"),
                                         ("plain", "x"), ("empty", ""), ("A" * 50, "1"), ("", "v")]
    info = app._unquote_short.cache_info()
    assert (info.currsize, info.hits) == (3, 3)  # the credential, "a%20b" and "c%2Fd"; not the plain or long ones
    assert info.maxsize is not None and info.maxsize <= 4096  # bounded


@pytest.mark.parametrize("key_size", [0, 1, 32, 63, 64, 65, 200])
def test_hmac_sha256_with_prehashed_key_states_is_hmac(key_size: int) -> None:
    rng = random.Random(key_size)
    key = rng.randbytes(key_size)
    mac = sigv4.HmacSha256(key)
    for size in (0, 1, 55, 64, 1000):
        message = rng.randbytes(size)
        assert mac.hexdigest(message) == hmac.new(key, message, hashlib.sha256).hexdigest()
        assert mac.hexdigest(message) == mac.hexdigest(message)  # its states are copied, never consumed


def test_canonical_header_values_are_trimmed_with_inner_runs_of_space_made_one() -> None:
    spaces = re.compile(r"\s+")
    rng = random.Random(3)
    alphabet = [" ", "\t", "\x0b", "\x0c", "\r", "\n", "\x1c", "\x85", "\xa0", "\u2028", "\u3000", "a", "b", "é", ","]
    for _ in range(5000):
        value = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))
        signed = sigv4.SignedRequest("AK", "20261129T000000Z", "20261129", "us-east-1", "s3", ("host", "x-amz-a"),
                                     "", sigv4.UNSIGNED_PAYLOAD, presigned=False)
        expected = f"host:{spaces.sub(' ', value.strip())}\nx-amz-a:\n"
        assert sigv4.canonical_headers(signed, {"host": value}) == expected


async def _receive() -> dict[str, Any]:
    return {"type": "http.request", "body": b"", "more_body": False}


async def _send(message: Any) -> None:
    return None


def test_a_closed_request_leaves_no_reference_cycle() -> None:
    """``track_body`` wraps receive and send in the request's own bound methods; ``close`` undoes it, so a request
    and everything it holds are freed by reference counting when it goes (no work for the cyclic collector)."""
    gc.collect()
    gc.disable()
    try:
        req = Request(scope={"type": "http"}, receive=_receive, send=_send, method="GET", raw_path="/b/k",
                      bucket="b", key="k", query={}, query_pairs=[], headers={"host": "h"}, request_id="R")
        req.track_body(5.0)
        assert req.receive != _receive and req.send != _send
        req.close()
        assert req.receive is _receive and req.send is _send
        del req
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_the_request_stamps_its_trace_at_the_last_body_byte_and_the_response_start() -> None:
    """The trace's transfer and response phases start where the request reads its last body message and sends its
    status line (stamped by the request itself: no wrapper around receive and send)."""
    messages = [{"type": "http.request", "body": b"ab", "more_body": True},
                {"type": "http.request", "body": b"c", "more_body": False}]

    async def receive() -> dict[str, Any]:
        return messages.pop(0)

    async def main() -> tuple[int, int, int, int]:
        rec = Recorder()
        req = Request(scope={"type": "http"}, receive=receive, send=_send, method="PUT", raw_path="/b/k",
                      bucket="b", key="k", query={}, query_pairs=[], headers={"content-length": "3"},
                      request_id="R", recorder=rec)
        req.track_body(5.0)
        await req.receive()
        mid = rec.body_end
        await req.receive()
        body_end = rec.body_end
        await req.start(200, [])
        first = rec.resp_start
        await req.start(500, [])  # a second start (never sent by the handlers) keeps the first stamp
        req.close()
        return mid, body_end, first, rec.resp_start

    mid, body_end, first, resp_start = asyncio.run(main())
    assert mid == 0 and body_end > 0
    assert first >= body_end and resp_start == first


def test_start_up_takes_what_it_built_out_of_the_cyclic_collectors_sight(db_url: str) -> None:
    """A full collection walked every object start-up made (~145,000: 78 ms of CPU each ~5 s under 64 PUT
    clients, every request in flight waiting); the gateway's start-up freezes them."""
    async def start_and_stop() -> int:
        gateway = app.Gateway(wiring.GATEWAY_EXTENSIONS, wiring.install)
        await gateway.startup()
        try:
            return gc.get_freeze_count()
        finally:
            await gateway.shutdown()

    gc.unfreeze()
    try:
        assert asyncio.run(start_and_stop()) > 10_000
    finally:
        gc.unfreeze()
