"""Security headers on every response of the dashboard and API (an ASGI middleware at the API edge)."""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

# The built dashboard loads only its own scripts, styles, fonts and images (Vite inlines small ones as data:),
# and talks only to its own origin; nobody may frame it.
DASHBOARD_CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                 "font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
                 "form-action 'self'; frame-ancestors 'none'")
# JSON and downloads are never rendered as a page: nothing may load from them
API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
# Swagger UI comes from jsDelivr and starts with one inline script, allowed by its hash
DOCS_CSP = ("default-src 'self'; script-src 'self' https://cdn.jsdelivr.net {hashes}; "
            "style-src 'self' https://cdn.jsdelivr.net; img-src 'self' data: https://fastapi.tiangolo.com; "
            "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")

COMMON = (
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"strict-origin-when-cross-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
)
HSTS = (b"strict-transport-security", b"max-age=31536000")
_INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.S)


def script_hashes(html: bytes) -> str:
    """CSP source expressions for the page's inline scripts."""
    return " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(s).digest()).decode()}'"
                    for s in _INLINE_SCRIPT.findall(html))


class SecurityHeaders:
    """Adds the common headers and a content security policy to each HTTP response that has none of its own."""

    def __init__(self, app: ASGIApp, api_prefix: str = "/api", docs_path: str | None = "/api/docs",
                 hsts: bool = False) -> None:
        self.app, self.api_prefix, self.docs_path = app, api_prefix, docs_path
        # behind HTTPS (Secure cookies), browsers are told never to try plain HTTP for this host again
        self.extra: tuple[tuple[bytes, bytes], ...] = ((HSTS,) if hsts else ())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        if path == self.docs_path:
            await self._docs(scope, receive, send)
            return
        is_api = path == self.api_prefix or path.startswith(self.api_prefix + "/")
        csp = (API_CSP if is_api else DASHBOARD_CSP).encode()

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = _with(message.get("headers", []), csp, self.extra)
            await send(message)

        await self.app(scope, receive, send_with_headers)

    async def _docs(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The docs page is small: hold it back until its inline scripts can be hashed into the policy."""
        start: Message | None = None
        body = bytearray()

        async def hold(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            body.extend(message.get("body", b""))
            if message.get("more_body"):
                return
            assert start is not None
            csp = DOCS_CSP.format(hashes=script_hashes(bytes(body))).encode()
            start["headers"] = _with(start.get("headers", []), csp, self.extra)
            await send(start)
            await send({"type": "http.response.body", "body": bytes(body)})

        await self.app(scope, receive, hold)


def _with(headers: Iterable[tuple[bytes, bytes]], csp: bytes,
          extra: tuple[tuple[bytes, bytes], ...] = ()) -> list[tuple[bytes, bytes]]:
    out = list(headers)
    present = {name.lower() for name, _ in out}
    for name, value in (*COMMON, *extra, (b"content-security-policy", csp)):
        if name not in present:
            out.append((name, value))
    return out
