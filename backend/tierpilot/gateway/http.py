"""One S3 request as the handlers see it, and the ways to answer it."""

from __future__ import annotations

import contextlib
import time
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime
from functools import lru_cache
from typing import Any

from tierpilot.auth.service import Credential
from tierpilot.gateway.errors import S3Error
from tierpilot.gateway.sigv4 import SignedRequest
from tierpilot.gateway.xmlio import error_document
from tierpilot.kit.flow import Flow
from tierpilot.kit.generations import Seen
from tierpilot.kit.httpserver import lost
from tierpilot.kit.settings import get_settings
from tierpilot.kit.streaming import ClientDisconnected, IdleReceive, Receive, ReceiveTimeout, Send
from tierpilot.kit.tracing import Recorder, now_ns

Headers = list[tuple[bytes, bytes]]
# an error answered before its request's body was read reads and drops at most this much of the rest
DRAIN_LIMIT = 64 << 20


@dataclass(slots=True)
class Request:
    scope: dict[str, Any]
    receive: Receive
    send: Send
    method: str
    raw_path: str
    bucket: str
    key: str
    query: dict[str, str]
    query_pairs: list[tuple[str, str]]
    headers: dict[str, str]
    request_id: str
    recorder: Recorder | None = None  # the request's trace: the last body byte and the response's start stamped here
    caller: Credential | None = None
    signed: SignedRequest | None = None
    signing_key: bytes | None = None
    seen: Seen = field(default_factory=Seen)  # the generation counters read for this request (one read a URL)
    status: int = 0
    flows: list[Flow] = field(default_factory=list)
    bytes_in: int = 0
    bytes_out: int = 0
    body_consumed: bool = False
    _receive_raw: Receive | None = None
    _send_raw: Send | None = None
    _body_timer: IdleReceive | None = None  # made at the first receive of a body (GET and HEAD never make one)
    _body_timeout_s: float | None = None
    # the minimum body rate: bytes a body must bring in each ``_rate_window_s`` of the time it keeps the
    # gateway waiting (time the gateway spends elsewhere, e.g. throttling the flow, is not the client's)
    _rate_window_s: float = 0.0
    _rate_min_bytes: float = 0.0
    _waited_s: float = 0.0
    _window_bytes: int = 0

    @property
    def user(self) -> Credential:
        assert self.caller is not None, "handler ran before authentication"
        return self.caller

    async def _receive_tracked(self) -> MutableMapping[str, Any]:
        if self.body_consumed or self._body_timeout_s is None:  # past the body only a disconnect can come
            assert self._receive_raw is not None
            return await self._receive_raw()
        timer = self._body_timer
        if timer is None:
            assert self._receive_raw is not None
            timer = self._body_timer = IdleReceive(self._receive_raw, self._body_timeout_s)
        began = time.monotonic()
        try:
            message = await timer()
        except ReceiveTimeout:
            raise request_timeout() from None
        if message["type"] != "http.request" or not message.get("more_body", False):
            self.body_consumed = True
            if message["type"] == "http.request" and self.recorder is not None:
                self.recorder.body_end = now_ns()
        elif self._rate_window_s:
            self._waited_s += time.monotonic() - began
            self._window_bytes += len(message.get("body", b""))
            if self._waited_s >= self._rate_window_s:
                if self._window_bytes < self._rate_min_bytes * self._waited_s / self._rate_window_s:
                    raise request_timeout()
                self._waited_s, self._window_bytes = 0.0, 0
        return message

    async def _send_checked(self, message: MutableMapping[str, Any]) -> None:
        assert self._send_raw is not None
        await self._send_raw(message)
        # cut by the send time-out (kit/httpserver.py) with more to come: stop reading and paying for the rest
        if message.get("more_body") and lost(self.scope):
            raise ClientDisconnected("the client stopped reading the response")

    def track_body(self, idle_timeout_s: float) -> None:
        """Note when the request body has been read to its end (see ``start``), answer RequestTimeout when it
        sends nothing for ``idle_timeout_s`` or less than the minimum rate, and end the request when the server
        dropped its connection (a client that stopped reading the response)."""
        self._receive_raw = self.receive
        self._body_timeout_s = idle_timeout_s
        self.receive = self._receive_tracked
        self._send_raw = self.send
        self.send = self._send_checked
        settings = get_settings()
        if settings.gateway_body_min_rate_bps:
            self._rate_window_s = settings.gateway_body_rate_window_s
            self._rate_min_bytes = settings.gateway_body_min_rate_bps * settings.gateway_body_rate_window_s

    def close(self) -> None:
        """The request is over: release its body timer, and the wrappers ``track_body`` put in place.

        Those are bound methods of the request held by the request (a cycle): left in place, the request and all
        it holds (its scope, headers, query, recorder, ...) would wait for the cyclic collector, whose runs were
        4-14 µs of each small GET/HEAD's CPU; the plain receive and send free them when the request goes.
        """
        if self._body_timer is not None:
            self._body_timer.close()
        if self._receive_raw is not None:
            self.receive, self._receive_raw = self._receive_raw, None
        if self._send_raw is not None:
            self.send, self._send_raw = self._send_raw, None

    def _unread_body(self) -> bool:
        if self.body_consumed:
            return False
        length = self.headers.get("content-length", "0").strip()
        return "transfer-encoding" in self.headers or (length != "0" and length != "")

    def header(self, name: str, default: str | None = None) -> str | None:
        return self.headers.get(name, default)

    @property
    def resource(self) -> str:
        return "/" + self.bucket + ("/" + self.key if self.key else "")

    def base_headers(self) -> Headers:
        rid = self.request_id.encode()
        return [(b"x-amz-request-id", rid), (b"x-amz-id-2", rid), (b"server", b"tierpilot")]

    async def start(self, status: int, headers: Headers, content_length: int | None = None) -> None:
        """Send the status line and headers (the body follows with ``body`` or a stream)."""
        out = self.base_headers()
        for flow in self.flows:
            out.extend(flow.headers)
        out.extend(headers)
        if content_length is not None:
            out.append((b"content-length", str(content_length).encode()))
        if self._unread_body():
            # answered before the body was read (an error, or a client waiting for 100-continue that never
            # came): the connection cannot carry another request, the server closes it
            out.append((b"connection", b"close"))
        self.status = status
        if self.recorder is not None and not self.recorder.resp_start:
            self.recorder.resp_start = now_ns()
        await self.send({"type": "http.response.start", "status": status, "headers": out})

    async def respond(self, status: int = 200, body: bytes = b"", headers: Headers | None = None,
                      content_type: bytes | None = b"application/xml") -> None:
        hdrs = list(headers or [])
        if body and content_type:
            hdrs.append((b"content-type", content_type))
        await self.start(status, hdrs, content_length=len(body))
        await self.send({"type": "http.response.body", "body": b"" if self.method == "HEAD" else body})
        self.bytes_out += len(body)

    async def respond_error(self, err: S3Error) -> None:
        body = b"" if self.method == "HEAD" else error_document(err, self.resource, self.request_id)
        if not self._drains_after(err):
            await self.respond(err.status, body, err.headers)
            return
        # a client still sending its body reads the answer only once it has sent it all, and a connection closed
        # on unread bytes is reset by the kernel, the answer lost with it: answer, drop the rest of the body
        # (bounded), then end the response (and the connection)
        await self.start(err.status, [*err.headers, (b"content-type", b"application/xml")], content_length=len(body))
        await self.send({"type": "http.response.body", "body": body, "more_body": True})
        self.bytes_out += len(body)
        with contextlib.suppress(S3Error, ClientDisconnected):
            await self._discard_body(DRAIN_LIMIT)
        await self.send({"type": "http.response.body", "body": b""})

    def _drains_after(self, err: S3Error) -> bool:
        if not self._unread_body() or err.status >= 500 or err.code == "RequestTimeout":
            return False
        if "100-continue" in self.headers.get("expect", "").lower():  # told not to send it: it will not
            return False
        length = self.headers.get("content-length", "").strip()
        return not length.isdigit() or int(length) <= DRAIN_LIMIT

    async def _discard_body(self, limit: int) -> None:
        dropped = 0
        while not self.body_consumed and dropped <= limit:
            message = await self.receive()
            if message["type"] != "http.request" or not message.get("more_body", False):
                return
            dropped += len(message.get("body", b""))


def request_timeout() -> S3Error:
    return S3Error("RequestTimeout", "Your socket connection to the server was not read from or written to "
                   "within the timeout period. Idle connections will be closed.", 400)


@lru_cache(maxsize=4096)  # an object's Last-Modified, the same in every read of it
def http_date(moment: datetime) -> str:
    return format_datetime(moment.astimezone(UTC).replace(microsecond=0), usegmt=True)


def parse_http_date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
