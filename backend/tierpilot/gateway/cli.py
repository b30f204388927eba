"""`tierpilot gateway`: serve the S3 gateway (sub-commands such as `calibrate` hang off the same group)."""

from __future__ import annotations

import typer

from tierpilot.kit.settings import get_settings

gateway_app = typer.Typer(help="The S3 gateway.", invoke_without_command=True)


@gateway_app.callback()
def gateway(
    ctx: typer.Context,
    host: str | None = typer.Option(None, help="listen address (default: TIERPILOT_GATEWAY_HOST)"),
    port: int | None = typer.Option(None, help="listen port (default: TIERPILOT_GATEWAY_PORT)"),
    workers: int = typer.Option(1, help="gateway processes sharing the port"),
    log_level: str = typer.Option("info", help="uvicorn log level; 'warning' drops the per-request access log"),
) -> None:
    """Serve the S3-compatible gateway (without a sub-command)."""
    if ctx.invoked_subcommand is not None:
        return
    import logging

    import uvicorn

    from tierpilot.kit.httpserver import GuardedHttpToolsProtocol

    # the gateway's own access log (request id, user, operation, status, bytes, time) at info level
    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    s = get_settings()
    # uvicorn's httptools protocol plus a header deadline and a cap on half-open connections (kit/httpserver.py);
    # request bodies are timed by the app (RequestTimeout). uvicorn's own proxy headers would believe
    # X-Forwarded-For from 127.0.0.1: the app reads it only from TIERPILOT_TRUSTED_PROXIES (kit/proxies.py)
    uvicorn.run("tierpilot.app.gateway:create_app", factory=True, host=host or s.gateway_host,
                port=port or s.gateway_port, workers=workers, http=GuardedHttpToolsProtocol, loop="uvloop",
                proxy_headers=False,
                log_level=log_level, access_log=False, server_header=False, backlog=4096,
                timeout_keep_alive=30)

