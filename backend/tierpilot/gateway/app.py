"""The gateway's ASGI application: parse, authenticate, route, answer S3 errors as XML.

A raw ASGI app (no framework) keeps the per-request overhead to what S3 needs. Served by uvicorn
(``tierpilot gateway``); each process runs one event loop plus worker threads for DB and tier I/O.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from random import getrandbits
from types import ModuleType
from typing import Any
from urllib.parse import quote, unquote, unquote_to_bytes

from sqlalchemy.orm import configure_mappers

from tierpilot.catalog import hotread, store
from tierpilot.catalog.errors import CatalogError
from tierpilot.drivers.base import TierError, TierUnavailable
from tierpilot.gateway import (  # noqa: F401  (importing the operation modules registers their routes)
    ops_buckets,
    ops_cors,
    ops_multipart,
    ops_objects,
    ops_post,
    ops_versions,
)
from tierpilot.gateway.admission import Admission, slow_down
from tierpilot.gateway.auth import authenticate, credentials, forget_bucket
from tierpilot.gateway.errors import S3Error
from tierpilot.gateway.http import Request
from tierpilot.gateway.routes import Level, find, signed
from tierpilot.kit import flow as kitflow
from tierpilot.kit import metrics
from tierpilot.kit.errors import DomainError, database_unreachable, no_space
from tierpilot.kit.flow import Flow, FlowRequest
from tierpilot.kit.proxies import TrustedProxies
from tierpilot.kit.settings import get_settings
from tierpilot.kit.streaming import ClientDisconnected, Receive, Send, run
from tierpilot.kit.tracing import TRACE_HEADER, Recorder, now_ns
from tierpilot.kit.tracing import current as current_trace
from tierpilot.traces import otel
from tierpilot.traces import service as traces

log = logging.getLogger("tierpilot.gateway")
access = logging.getLogger("tierpilot.gateway.access")

MAX_HEADER_BYTES = 8192  # S3's limit for the request header section
HEALTH_PATH = "/_tierpilot/health"
METRICS_PATH = "/_tierpilot/metrics"
ACCESS_FLUSH_S = 5.0
TRACE_FLUSH_S = 2.0
WAIT_FLOOR_NS = 50_000


def _request_id() -> str:
    # 16 upper-case hex digits as before (os.urandom(8).hex().upper()), without a system call: an id names a
    # request in logs and traces, it guards nothing (random reseeds in a forked worker)
    return f"{getrandbits(64):016X}"


_unquote_short = lru_cache(maxsize=4096)(unquote)  # short escaped names and values: a presigned URL's credential


def _unquote(text: str) -> str:
    # most names and values of a presigned URL have no escapes: unquote's own test, without its call; the
    # X-Amz-Credential of a key and day is the same in each of its requests (unquote is a visible share of a HEAD),
    # remembered as sigv4 remembers its credentials and MACs; a long value is not worth keeping
    if "%" not in text:
        return text
    return _unquote_short(text) if len(text) <= 128 else unquote(text)


def _split_query(raw: bytes) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    if not raw:
        return pairs
    for item in raw.decode("latin-1").split("&"):
        if not item:
            continue
        name, _, value = item.partition("=")
        pairs.append((_unquote(name), _unquote(value)) if "%" in item else (name, value))
    return pairs


def _headers(raw: list[tuple[bytes, bytes]]) -> tuple[dict[str, str], int]:
    out: dict[str, str] = {}
    size = 0
    for name, value in raw:
        size += len(name) + len(value) + 4
        n, v = name.decode("latin-1").lower(), value.decode("latin-1")
        out[n] = f"{out[n]},{v}" if n in out else v
    return out, size


def _locate(path: str, host: str, domain: str) -> tuple[str, str]:
    """(bucket, key) from a virtual-hosted ``bucket.domain`` host or a path-style ``/bucket/key`` path."""
    hostname = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    if domain and hostname.endswith("." + domain):
        return hostname[: -len(domain) - 1], path[1:]
    bucket, _, key = path[1:].partition("/")
    return bucket, key


class _TimedFlow:
    """A request's flow whose waits are added to the request's trace (the limiter wait phase)."""

    __slots__ = ("_flow", "_recorder", "headers")

    def __init__(self, flow: Flow, recorder: Recorder) -> None:
        self._flow, self._recorder, self.headers = flow, recorder, flow.headers

    async def consume(self, nbytes: int) -> None:
        started = now_ns()
        await self._flow.consume(nbytes)
        took = now_ns() - started
        if took > WAIT_FLOOR_NS:  # a call that did not wait is the transfer's, not the limiter's
            self._recorder.waited += took

    async def close(self) -> None:
        await self._flow.close()


class _TimedPolicy:
    """Stamps admission (the flow policy's ``open``) on the request's trace."""

    def __init__(self, policy: kitflow.FlowPolicy) -> None:
        self.inner = policy

    async def open(self, request: FlowRequest) -> Flow:
        recorder = current_trace.get()
        if recorder is None:
            return await self.inner.open(request)
        recorder.admit_start = now_ns()
        flow = await self.inner.open(request)
        recorder.admit_end = now_ns()
        return _TimedFlow(flow, recorder)


def _metrics_path(path: str, headers: list[tuple[bytes, bytes]], query: bytes) -> bool:
    """``/_tierpilot/metrics``, or ``/metrics`` when unsigned (a signed ``/metrics`` is the bucket "metrics")."""
    if path == METRICS_PATH:
        return True
    if path != "/metrics" or b"X-Amz-Signature" in query:
        return False
    return not any(name == b"authorization" and not value.startswith(b"Bearer ") for name, value in headers)


class Gateway:
    """The S3 gateway as an ASGI callable."""

    def __init__(self, extensions: Sequence[ModuleType] = (), install: Callable[[], None] = lambda: None) -> None:
        """``extensions``: the domains' gateway modules (their S3 operations are registered when imported);
        ``install``: fills the lower layers' hooks at start-up (``tierpilot.app.wiring`` gives both)."""
        settings = get_settings()
        self._plugins, self._install = tuple(extensions), install
        self.domain = settings.gateway_domain
        self.body_timeout_s = settings.gateway_body_timeout_s
        self._extensions: list[Any] = []
        self._on_finish: list[Any] = []  # the extensions' `finished(req, op, status)` hooks (spend counts requests)
        self._flusher: asyncio.Task[None] | None = None
        self._trace_flusher: asyncio.Task[None] | None = None
        self.sampler = traces.Sampler.from_settings()
        self._observer = metrics.RequestObserver()
        self.admission = Admission(settings.gateway_max_inflight, settings.gateway_queue_wait_s)

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "lifespan":
            await self._lifespan(receive, send)

    # lifespan ------------------------------------------------------------------------------------------

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.startup()
                except Exception as exc:
                    log.exception("gateway start-up failed")
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def startup(self) -> None:
        metrics.configure("gateway")
        self.sampler.export = otel.exporter()
        self._install()
        credentials.start(get_settings().redis_url)
        hotread.watch_changes(get_settings().redis_url)
        for module in self._plugins:
            self._extensions.append(module)
            hook = getattr(module, "startup", None)
            if hook is not None:
                await hook()
            if getattr(module, "finished", None) is not None:
                self._on_finish.append(module.finished)
        if not isinstance(kitflow.get_policy(), _TimedPolicy):
            kitflow.set_policy(_TimedPolicy(kitflow.get_policy()))
        self._flusher = asyncio.ensure_future(self._flush_access_times())
        self._trace_flusher = asyncio.ensure_future(self._flush_traces())
        settle_heap()

    async def shutdown(self) -> None:
        for task in (self._flusher, self._trace_flusher):
            if task is not None:
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        with contextlib.suppress(Exception):
            await run(traces.store, self.sampler.take())
        if isinstance(self.sampler.export, otel.OtlpExport):
            with contextlib.suppress(Exception):
                await run(self.sampler.export.shutdown)
        policy = kitflow.get_policy()
        if isinstance(policy, _TimedPolicy):
            kitflow.set_policy(policy.inner)
        for module in reversed(self._extensions):
            hook = getattr(module, "shutdown", None)
            if hook is not None:
                with contextlib.suppress(Exception):
                    await hook()
        with contextlib.suppress(Exception):
            await run(store.access_log.flush)
        hotread.close_readers()
        metrics.flush()
        await credentials.stop()
        await hotread.stop_watching()

    async def _flush_access_times(self) -> None:
        while True:
            await asyncio.sleep(ACCESS_FLUSH_S)
            try:
                await run(store.access_log.flush)
            except Exception:
                log.warning("could not record last-access times", exc_info=True)

    async def _flush_traces(self) -> None:
        while True:
            await asyncio.sleep(TRACE_FLUSH_S)
            try:
                rows = self.sampler.take()
                if rows:
                    await run(traces.store, rows)
            except Exception:
                log.warning("could not store request traces", exc_info=True)

    # requests ------------------------------------------------------------------------------------------

    def _parse(self, scope: dict[str, Any], receive: Receive, send: Send, request_id: str, rec: Recorder) -> Request:
        raw_path_b: bytes | None = scope.get("raw_path")
        raw_path = raw_path_b.decode("latin-1") if raw_path_b else quote(scope.get("path", "/"))
        raw_path = raw_path.partition("?")[0] or "/"
        pairs = _split_query(scope.get("query_string", b""))
        headers, header_bytes = _headers(scope.get("headers", []))
        req = Request(scope=scope, receive=receive, send=send, method=scope["method"], raw_path=raw_path,
                      bucket="", key="", query=dict(reversed(pairs)), query_pairs=pairs, headers=headers,
                      request_id=request_id, recorder=rec)
        req.track_body(self.body_timeout_s)
        # the catalog's text holds no NUL (PostgreSQL refuses it): an upload id, marker or token with one names
        # nothing, so it is refused here for every operation alike
        if any("\x00" in name or "\x00" in value for name, value in pairs):
            raise S3Error("InvalidArgument", "Query parameters must not contain the NUL character.", 400)
        if header_bytes > MAX_HEADER_BYTES:
            raise S3Error("RequestHeaderSectionTooLarge", "Your request header section exceeds the maximum allowed "
                          "size.", 400, MaxSizeAllowed=str(MAX_HEADER_BYTES))
        if "%" not in raw_path and raw_path.isascii():  # nothing to decode: the path is what was sent
            path = raw_path
        else:
            try:
                path = unquote_to_bytes(raw_path).decode("utf-8")
            except UnicodeDecodeError:
                raise S3Error("InvalidURI", "Couldn't parse the specified URI.", 400) from None
        req.bucket, req.key = _locate(path, headers.get("host", ""), self.domain)
        return req

    async def _http(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        path = scope.get("path")
        if path == HEALTH_PATH:
            await _health(send, self._extensions)
            return
        if scope["method"] == "GET" and _metrics_path(path or "", scope.get("headers", []),
                                                      scope.get("query_string", b"")):
            await _metrics(scope, send)
            return
        rec = Recorder()
        current_trace.set(rec)  # each request runs in its own task: the flow policy finds its recorder here
        # backpressure before any work: a wait for a slot is the trace's "queue" phase (stamped only when there
        # was one: the fast path takes no time, and a stamp after it would time the OS scheduler)
        admitted = self.admission.take()
        if not admitted:
            metrics.count(metrics.GATEWAY_WAITING)
            try:
                admitted = await self.admission.enter()
            finally:
                metrics.count(metrics.GATEWAY_WAITING, -1)
            rec.queued = now_ns()
        metrics.count(metrics.GATEWAY_IN_FLIGHT)
        request_id = _request_id()
        req: Request | None = None
        op = "-"
        try:
            req = self._parse(scope, receive, send, request_id, rec)
            rec.parsed = now_ns()
            level: Level = "object" if req.key else ("bucket" if req.bucket else "service")
            handler, sub = find(req.method, level, req.query)
            op = f"{req.method} {level}{'?' + sub if sub else ''}"
            if not admitted:
                metrics.count(metrics.GATEWAY_SLOWDOWNS)
                raise slow_down(self.admission.wait_s)
            if "origin" in req.headers:  # browsers need CORS headers on errors too
                await ops_cors.decorate(req)
            if signed(handler):
                await authenticate(req)
            rec.authed = now_ns()
            if handler is None:
                if sub:
                    raise S3Error("NotImplemented", f"The {sub} sub-resource is not implemented by this gateway",
                                  501)
                raise S3Error("MethodNotAllowed", "The specified method is not allowed against this resource.", 405,
                              Method=req.method, ResourceType=level.upper())
            await handler(req)
        except ClientDisconnected:
            return
        except Exception as exc:
            if req is None:
                req = Request(scope=scope, receive=receive, send=send, method=scope.get("method", "GET"),
                              raw_path="/", bucket="", key="", query={}, query_pairs=[], headers={},
                              request_id=request_id, recorder=rec)
            await self._fail(req, exc)
        finally:
            if admitted:
                self.admission.leave()
            rec.end = now_ns()
            metrics.count(metrics.GATEWAY_IN_FLIGHT, -1)
            if req is not None:
                req.close()
                for flow in req.flows:
                    with contextlib.suppress(Exception):
                        await flow.close()
                self._finish(req, op, rec)

    def _finish(self, req: Request, op: str, rec: Recorder) -> None:
        """Histograms for every request, the access log line, and a trace if the sampler keeps one."""
        status = req.status or 499  # 499: the client went away before an answer
        for hook in self._on_finish:
            hook(req, op, status)
        total_ns = rec.end - rec.t0
        self._observer.observe(op, status, total_ns, rec.phases(), req.bytes_in, req.bytes_out,
                               rec.waited if rec.admit_start else None)
        if access.isEnabledFor(logging.INFO):
            user = req.caller.username if req.caller else "-"
            access.info("%s %s %s %s %s %d in=%d out=%d %.1fms", req.request_id, user, op, req.raw_path[:200],
                        req.bucket or "-", status, req.bytes_in, req.bytes_out, total_ns / 1e6)
        sampler = self.sampler
        if sampler.enabled:  # the trace's record is made only for a request the sampler keeps
            headers = req.headers
            reason = sampler.decide(total_ns, forced=TRACE_HEADER in headers and headers[TRACE_HEADER].strip() == "1")
            if reason is not None:
                sampler.admit(traces.Finished(
                    request_id=req.request_id, at=datetime.now(UTC), user_id=req.caller.user_id if req.caller else None,
                    bucket=req.bucket, operation=op, status=status, nbytes=req.bytes_in + req.bytes_out,
                    recorder=rec), reason)

    async def _fail(self, req: Request, exc: Exception) -> None:
        err = _as_s3_error(exc, req)
        if err.code == "NoSuchBucket":
            forget_bucket(req.bucket)
        if req.status:  # the response is under way: all we can do is cut the connection
            log.error("request %s failed after the response started: %s", req.request_id, exc)
            raise exc
        with contextlib.suppress(OSError, RuntimeError):
            await req.respond_error(err)


def settle_heap() -> None:
    """Take what start-up built (modules, the ORM's mappers, settings) out of the cyclic collector's sight:
    collected once, then frozen for the process's life.

    Requests leave no cycles (see ``Request.close``), yet the objects of the requests in flight that survive
    a young collection count toward the next full one, which would walk every object start-up made: a full
    collection that frees nothing, while every request in flight waits for it (the tail of PUT latency)."""
    configure_mappers()  # the ORM builds its attribute machinery at first use: now, so that it is frozen too
    gc.collect()
    gc.freeze()


def _as_s3_error(exc: Exception, req: Request) -> S3Error:
    if isinstance(exc, S3Error):
        return exc
    if isinstance(exc, CatalogError):
        fields = {k: str(v) for k, v in exc.extra.items()}
        if exc.s3_code == "NoSuchBucket":
            fields.setdefault("BucketName", req.bucket)
        if exc.s3_code == "NoSuchKey":
            fields.setdefault("Key", req.key)
        return S3Error(exc.s3_code, exc.message, exc.s3_status, **fields)
    if isinstance(exc, DomainError):
        return S3Error("InvalidRequest", exc.message, exc.status_code if exc.status_code < 500 else 400)
    if no_space(exc):  # a full file system: named, as RGW names it, and not retried blindly by clients
        log.error("no space left in request %s: %s", req.request_id, exc)
        return S3Error("InsufficientCapacity", "The storage has no space left for this write.", 507)
    if database_unreachable(exc):  # the catalog's database is out of reach: clients retry
        log.error("database unreachable in request %s: %s", req.request_id, exc)
        err = S3Error("SlowDown", "The catalog is unavailable for a moment. Please try again.", 503)
        err.headers.append((b"retry-after", b"1"))
        return err
    if isinstance(exc, TierUnavailable):  # the tier's volume is gone: clients retry later, as on S3's 503
        log.error("tier unavailable in request %s: %s", req.request_id, exc)
        return S3Error("ServiceUnavailable", "The storage tier is unavailable. Please try again later.", 503)
    if isinstance(exc, TierError):
        log.error("tier error in request %s: %s", req.request_id, exc, exc_info=True)
        return S3Error("InternalError", "The storage tier failed to complete the request. Please try again.", 500)
    log.exception("request %s failed", req.request_id)
    return S3Error("InternalError", "We encountered an internal error. Please try again.", 500)


async def _health(send: Send, extensions: list[Any]) -> None:
    report: dict[str, Any] = {"status": "ok", "service": "gateway"}
    for module in extensions:  # a domain's `health()` adds its section (e.g. reservations: limiter mode)
        section = getattr(module, "health", None)
        if section is not None:
            report[module.__name__.split(".")[1]] = section()
    body = json.dumps(report).encode()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def _metrics(scope: dict[str, Any], send: Send) -> None:
    """The gateway processes' metrics (summed over the processes sharing the port), for allowed scrapers."""
    client = scope.get("client")
    auth = next((v.decode("latin-1") for k, v in scope.get("headers", []) if k == b"authorization"), None)
    if metrics.may_scrape(client[0] if client else None, auth):
        metrics.flush()  # this process's own increments of the loop's turn, before its files are read
        status, body, ctype = 200, await run(metrics.exposition, ("gateway",)), metrics.CONTENT_TYPE.encode()
    else:
        status, body, ctype = 403, b"metrics are served to loopback clients or with the metrics token\n", b"text/plain"
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", ctype), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def create_app(extensions: Sequence[ModuleType] = (), install: Callable[[], None] = lambda: None,
               ) -> Gateway | TrustedProxies:
    """The gateway ASGI app: behind proxies named in ``TIERPILOT_TRUSTED_PROXIES``, the client is the address
    they report (what bucket policies' ``aws:SourceIp`` and the audit log see), from them only."""
    gateway = Gateway(extensions, install)
    trusted = get_settings().trusted_proxies
    return TrustedProxies(gateway, trusted) if trusted.strip() else gateway
