"""The FastAPI app: JSON API under /api, the built dashboard at /."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from sqlalchemy import text
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tierpilot import __version__
from tierpilot.adoption.router import router as adoption_router
from tierpilot.app import wiring
from tierpilot.auth import service as auth_service
from tierpilot.auth.deps import SESSION_COOKIE
from tierpilot.auth.router import router as auth_router
from tierpilot.benchmarks.reference import router as reference_router
from tierpilot.benchmarks.router import router as benchmarks_router
from tierpilot.catalog.router import router as catalog_router
from tierpilot.events.router import router as events_router
from tierpilot.identity.router import router as identity_router
from tierpilot.integrity.router import router as integrity_router
from tierpilot.kit import metrics
from tierpilot.kit.db import CommitUnknown, get_engine, transaction
from tierpilot.kit.errors import DomainError, database_unreachable, no_space
from tierpilot.kit.inputs import check, json_safe
from tierpilot.kit.proxies import TrustedProxies
from tierpilot.kit.security_headers import SecurityHeaders
from tierpilot.kit.settings import get_settings
from tierpilot.kit.supervision import health_view
from tierpilot.lifecycle.router import router as lifecycle_router
from tierpilot.notifications.router import router as notifications_router
from tierpilot.overview.router import router as overview_router
from tierpilot.planner.router import router as planner_router
from tierpilot.projects.router import router as projects_router
from tierpilot.reservations.router import router as reservations_router
from tierpilot.restores.router import router as restores_router
from tierpilot.sharing.router import router as sharing_router
from tierpilot.spend.router import router as spend_router
from tierpilot.tiers.router import router as tiers_router
from tierpilot.traces import gauges as state_gauges
from tierpilot.traces.router import router as requests_router

health_router = APIRouter(tags=["health"])


def _check_database() -> str:
    try:
        with get_engine().connect() as conn:
            conn.execute(text("SELECT 1"))
        return "ok"
    except Exception as exc:  # reported, not raised: health must answer
        return f"error: {type(exc).__name__}: {exc}"[:300]


def _check_broker() -> str:
    from tierpilot.kit.jobs import broker_reachable

    return broker_reachable()


_LOOPBACK = frozenset({"127.0.0.1", "::1"})


def _sees_details(request: Request) -> bool:
    """Outside production anyone; in production loopback callers (probes on the host) and admins."""
    if get_settings().environment != "production":
        return True
    if request.client is not None and request.client.host in _LOOPBACK:
        return True
    auth = request.headers.get("authorization", "")
    token = auth[7:].strip() if auth.lower().startswith("bearer ") else request.cookies.get(SESSION_COOKIE)
    if not token:
        return False
    try:
        with transaction() as session:
            return auth_service.user_for_token(session, token).is_admin
    except Exception:  # an unknown token, or no database: the anonymous answer
        return False


@health_router.get("/health")
def health(request: Request) -> JSONResponse:
    """Database and broker reachability, and under `tierpilot up` its children; 503 when any is down.

    In production an anonymous caller gets the status only: versions and error texts help an attacker more
    than a load balancer."""
    database, broker = _check_database(), _check_broker()
    ok = database == "ok" and broker == "ok"
    body: dict[str, Any] = {"database": database, "broker": broker, "version": __version__}
    status_file = get_settings().supervisor_status_file
    if status_file:
        children_ok, body["supervisor"] = health_view(Path(status_file))
        ok = ok and children_ok
    if not _sees_details(request):
        body = {}
    return JSONResponse({"status": "ok" if ok else "degraded", **body}, status_code=200 if ok else 503)


# every domain's API, mounted under /api
ROUTERS = (health_router, auth_router, overview_router, reference_router, benchmarks_router, tiers_router,
           adoption_router, catalog_router, planner_router, reservations_router, restores_router, notifications_router,
           lifecycle_router, requests_router, spend_router, sharing_router, integrity_router, identity_router,
           projects_router, events_router)


def metrics_endpoint(request: Request) -> Response:
    """Prometheus exposition of the API processes and the worker's (same machine), for allowed scrapers."""
    if not metrics.may_scrape(request.client.host if request.client else None,
                              request.headers.get("authorization")):
        return JSONResponse({"detail": "metrics are served to loopback clients or with the metrics token"},
                            status_code=403)
    return Response(metrics.exposition(("api", "worker")), media_type=metrics.CONTENT_TYPE)


def _domain_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, DomainError)
    body = {"detail": exc.message, **jsonable_encoder(exc.extra)}
    return JSONResponse(json_safe(body), status_code=exc.status_code, headers=exc.headers)


def _fault(_request: Request, exc: Exception) -> JSONResponse:
    """What the API answers when something below it fails: a database out of reach or a commit that got no answer
    is a 503 the client retries, a full disk a 507 that says so, anything else a 500 without details."""
    if no_space(exc):
        return JSONResponse({"detail": "the storage has no space left for this change"}, status_code=507)
    if isinstance(exc, CommitUnknown) or database_unreachable(exc):
        return JSONResponse({"detail": "the database is unavailable for a moment; try again"}, status_code=503,
                            headers={"Retry-After": "1"})
    return JSONResponse({"detail": "internal error"}, status_code=500)


_ECHO_CHARS = 200  # of each input a 422 shows back
_ECHO_ERRORS = 20


def _short_input(value: Any) -> Any:
    """An input as a 422 echoes it: scalars as they are, long strings and anything nested cut short."""
    if value is None or isinstance(value, bool | int | float):
        return value
    text_value = value if isinstance(value, str) else repr(value)
    return text_value if len(text_value) <= _ECHO_CHARS else text_value[:_ECHO_CHARS] + "…"


def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    # an answer never grows with the input: a few errors, each with a short piece of what was sent
    errors = [{**e, "input": _short_input(e["input"])} if "input" in e else e for e in exc.errors()[:_ECHO_ERRORS]]
    parts = []
    for err in errors[:5]:
        loc = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
        parts.append(f"{loc}: {err.get('msg')}" if loc else str(err.get("msg")))
    # the errors echo the input: NaN, Infinity or a lone surrogate in it must not break the answer
    body = {"detail": "; ".join(parts) or "invalid request", "errors": jsonable_encoder(errors)}
    return JSONResponse(json_safe(body), status_code=422)


API_PREFIX = "/api"
_FORM_TYPES = ("multipart/form-data", "application/x-www-form-urlencoded")
_Operation = tuple[dict[tuple[str, str], Any], Any]


def _operation(request: Request) -> _Operation | None:
    """The OpenAPI parameters (by location and name) and JSON body schema of the request's operation."""
    route = request.scope.get("route")
    path = getattr(route, "path", None)
    if path is None:
        return None
    spec = request.app.openapi()
    op = spec.get("paths", {}).get(API_PREFIX + path, {}).get(request.method.lower())
    if op is None:
        return None
    params = {(p["in"], p["name"]): p.get("schema") for p in op.get("parameters", ())}
    contents = op.get("requestBody", {}).get("content", {})
    body = next((c.get("schema") for c in contents.values()), None)
    return params, body


async def _refuse_unstorable_input(request: Request) -> None:
    """Every route's first dependency: refuse what no input may carry (``kit.inputs``) with a 422 naming it."""
    operation = _operation(request)
    params, body_schema = operation or ({}, None)
    components = request.app.openapi().get("components", {}).get("schemas", {})
    errors: list[dict[str, Any]] = []
    for where, values in (("path", request.path_params.items()), ("query", request.query_params.multi_items())):
        for name, value in values:
            errors += check(value, params.get((where, name)), components, (where, name))
    content_type = request.headers.get("content-type", "")
    payload: Any = None
    if "json" in content_type and await request.body():
        with contextlib.suppress(ValueError):  # not JSON: the operation's own parsing answers
            payload = await request.json()
    elif body_schema is not None and content_type.startswith(_FORM_TYPES):
        fields: dict[str, list[Any]] = {}
        for name, value in (await request.form()).multi_items():
            fields.setdefault(name, []).append(value if isinstance(value, str) else None)
        payload = {name: values[0] if len(values) == 1 else values for name, values in fields.items()}
    errors += check(payload, body_schema, components, ("body",))
    if errors:
        raise RequestValidationError(errors)


class _BodyTooLarge(Exception):
    pass


class BodyLimit:
    """413 for a request body past ``max_bytes``, by its Content-Length or as it streams in, before a handler
    parses it. Multipart forms (file uploads) pass: their routes bound what they read themselves."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers", ()))
        if headers.get(b"content-type", b"").lower().startswith(b"multipart/form-data"):
            await self.app(scope, receive, send)
            return
        length = headers.get(b"content-length", b"")
        if length.isdigit() and int(length) > self.max_bytes:
            await self._refuse(send)
            return
        seen = 0
        started = False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_bytes:
                raise _BodyTooLarge
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except _BodyTooLarge:
            if not started:
                await self._refuse(send)

    async def _refuse(self, send: Send) -> None:
        await JSONResponse({"detail": f"the request body is larger than {self.max_bytes} bytes"},
                           status_code=413, headers={"connection": "close"})({"type": "http"}, _no_body, send)


async def _no_body() -> Message:
    return {"type": "http.disconnect"}


def _mount_frontend(app: FastAPI, dist: Path) -> None:
    """Serve the built React app; unknown non-API paths get index.html (client-side routes)."""
    index = dist / "index.html"

    @app.get("/{path:path}", include_in_schema=False)
    def spa(path: str) -> Response:
        if path.startswith("api/") or path == "api":
            return JSONResponse({"detail": "not found"}, status_code=404)
        candidate = (dist / path).resolve()
        if path and candidate.is_file() and dist.resolve() in candidate.parents:
            headers = {"cache-control": "public, max-age=31536000, immutable"} if "/assets/" in f"/{path}" else {}
            return FileResponse(candidate, headers=headers)
        if index.is_file():
            return FileResponse(index, headers={"cache-control": "no-cache"})
        return JSONResponse({"detail": "dashboard not built: run `make setup`"}, status_code=404)


def create_app() -> FastAPI:
    settings = get_settings()
    wiring.install()
    metrics.configure("api")
    metrics.register_live(state_gauges.collect)
    app = FastAPI(title="tierpilot", version=__version__, openapi_url="/api/openapi.json",
                  docs_url="/api/docs", redoc_url=None, dependencies=[Depends(_refuse_unstorable_input)])
    app.add_exception_handler(DomainError, _domain_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(Exception, _fault)
    for router in ROUTERS:
        app.include_router(router, prefix=API_PREFIX)
    app.add_api_route("/metrics", metrics_endpoint, methods=["GET"], include_in_schema=False)
    _mount_frontend(app, settings.frontend_dist)
    app.add_middleware(BodyLimit, max_bytes=settings.api_max_body_bytes)
    app.add_middleware(SecurityHeaders, api_prefix=API_PREFIX, docs_path=app.docs_url, hsts=settings.cookie_secure)
    # request.client is the client's address: X-Forwarded-For counts only from configured proxies
    app.add_middleware(TrustedProxies, trusted=settings.trusted_proxies)
    return app


def openapi_schema() -> dict[str, Any]:
    return create_app().openapi()


app = create_app()

if __name__ == "__main__":
    if "--openapi" in sys.argv:
        json.dump(openapi_schema(), sys.stdout, indent=2)
        sys.stdout.write("\n")
