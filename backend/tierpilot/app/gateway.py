"""The gateway process's ASGI app (uvicorn factory): the S3 server with the domains' operations plugged in."""

from __future__ import annotations

from tierpilot.app import wiring
from tierpilot.gateway import app
from tierpilot.kit.proxies import TrustedProxies


def create_app() -> app.Gateway | TrustedProxies:
    return app.create_app(wiring.GATEWAY_EXTENSIONS, wiring.install)
