"""The FastAPI app: JSON API under /api, the built dashboard at /."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from sqlalchemy import text

from tierpilot import __version__, wiring
from tierpilot.auth.router import router as auth_router
from tierpilot.benchmarks import router as benchmarks_router
from tierpilot.catalog.router import router as catalog_router
from tierpilot.kit.db import get_engine
from tierpilot.kit.errors import DomainError
from tierpilot.kit.security_headers import SecurityHeaders
from tierpilot.kit.settings import get_settings
from tierpilot.kit.supervision import health_view
from tierpilot.lifecycle.router import router as lifecycle_router
from tierpilot.notifications.router import router as notifications_router
from tierpilot.overview import router as overview_router
from tierpilot.planner.router import router as planner_router
from tierpilot.pricing.router import router as pricing_router
from tierpilot.reservations.router import router as reservations_router
from tierpilot.restores.router import router as restores_router
from tierpilot.tiers.router import router as tiers_router

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


@health_router.get("/health")
def health() -> JSONResponse:
    """Database and broker reachability, and under `tierpilot up` its children; 503 when any is down."""
    database, broker = _check_database(), _check_broker()
    ok = database == "ok" and broker == "ok"
    body: dict[str, Any] = {"database": database, "broker": broker, "version": __version__}
    status_file = get_settings().supervisor_status_file
    if status_file:
        children_ok, body["supervisor"] = health_view(Path(status_file))
        ok = ok and children_ok
    return JSONResponse({"status": "ok" if ok else "degraded", **body}, status_code=200 if ok else 503)


# every domain's API, mounted under /api
ROUTERS = (health_router, auth_router, overview_router, benchmarks_router, tiers_router, catalog_router,
           pricing_router, planner_router, reservations_router, restores_router, notifications_router, lifecycle_router)


def _domain_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, DomainError)
    return JSONResponse({"detail": exc.message, **jsonable_encoder(exc.extra)}, status_code=exc.status_code)


def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()
    parts = []
    for err in errors[:5]:
        loc = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
        parts.append(f"{loc}: {err.get('msg')}" if loc else str(err.get("msg")))
    return JSONResponse({"detail": "; ".join(parts) or "invalid request", "errors": jsonable_encoder(errors)},
                        status_code=422)


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
    app = FastAPI(title="tierpilot", version=__version__, openapi_url="/api/openapi.json",
                  docs_url="/api/docs", redoc_url=None)
    app.add_exception_handler(DomainError, _domain_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    for router in ROUTERS:
        app.include_router(router, prefix="/api")
    _mount_frontend(app, settings.frontend_dist)
    app.add_middleware(SecurityHeaders, api_prefix="/api", docs_path=app.docs_url)
    return app


def openapi_schema() -> dict[str, Any]:
    return create_app().openapi()


app = create_app()

if __name__ == "__main__":
    if "--openapi" in sys.argv:
        json.dump(openapi_schema(), sys.stdout, indent=2)
        sys.stdout.write("\n")
