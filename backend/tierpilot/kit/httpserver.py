"""uvicorn's HTTP protocol with what it lacks against slow clients: a deadline for each request's header
section and a cap on the connections still sending one.

uvicorn (0.3x–0.5x) times out only idle keep-alive connections: a connection that sends half a header
section, or nothing at all, is held for ever, and its ``limit_concurrency`` answers 503 to everyone once
such connections fill it. Here a connection must finish a request's header section within
``header_timeout_s`` of opening (or of the first byte of its next request), and when more than
``max_pending`` connections of this process are still sending one, the oldest is closed: a flood of
half-open connections makes room for new clients instead of shutting them out. Request bodies are the
application's to time (``kit.streaming.IdleReceive``).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Any, ClassVar

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from tierpilot.kit.settings import get_settings


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """Pass as ``uvicorn.run(..., http=GuardedHttpToolsProtocol)``; limits from the gateway's settings."""

    # connections of this process still sending a header section, oldest first (one event loop per process)
    pending: ClassVar[OrderedDict[GuardedHttpToolsProtocol, None]] = OrderedDict()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        settings = get_settings()
        self.header_timeout_s = settings.gateway_header_timeout_s
        self.max_pending = settings.gateway_max_pending_connections
        self._header_timer: asyncio.TimerHandle | None = None

    def _await_headers(self) -> None:
        if self._header_timer is not None:
            return  # the deadline runs from the request's first byte (or the connection's opening)
        self._header_timer = self.loop.call_later(self.header_timeout_s, self._header_timeout)
        pending = type(self).pending
        pending[self] = None
        while len(pending) > self.max_pending:
            oldest, _ = pending.popitem(last=False)
            oldest._close_pending()

    def _headers_done(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        type(self).pending.pop(self, None)

    def _close_pending(self) -> None:
        self._headers_done()
        if not self.transport.is_closing():
            self.transport.close()

    def _header_timeout(self) -> None:
        self._header_timer = None
        self._close_pending()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._await_headers()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._await_headers()

    def on_headers_complete(self) -> None:
        self._headers_done()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._headers_done()
        super().connection_lost(exc)
