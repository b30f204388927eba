"""uvicorn's HTTP protocol with what it lacks against slow clients: a deadline for each request's header
section, a cap on the connections still sending one, and a deadline for a response the client stopped reading.

uvicorn (0.3x–0.5x) times out only idle keep-alive connections: a connection that sends half a header
section, or nothing at all, is held for ever, and its ``limit_concurrency`` answers 503 to everyone once
such connections fill it. Here a connection must finish a request's header section within
``header_timeout_s`` of opening (or of the first byte of its next request), and when more than
``max_pending`` connections of this process are still sending one, the oldest is closed: a flood of
half-open connections makes room for new clients instead of shutting them out.

A client that stops reading a response fills the socket's buffers, and uvicorn's ``send`` then waits for
them to drain: for ever, holding the request's stream (and a plain ``close`` would wait for the buffers to
flush, for ever too). When writing stays paused for ``send_timeout_s``, the connection is aborted; the
application sees it through ``lost(scope)`` (uvicorn's ``send`` drops what comes after a disconnect without
telling). Request bodies are the application's to time (``kit.streaming.IdleReceive``).

``GuardedHttpToolsProtocol`` serves the gateway, ``ApiHttpToolsProtocol`` the API; each takes its limits from
the settings (module-level classes: uvicorn's workers import them by name).
"""

from __future__ import annotations

import asyncio
import weakref
from collections import OrderedDict
from collections.abc import MutableMapping
from typing import Any, ClassVar, cast

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from tierpilot.kit.settings import Settings, get_settings

CONNECTION_KEY = "tierpilot.connection"  # scope["extensions"][CONNECTION_KEY]: the transport, for ``lost``


def lost(scope: MutableMapping[str, Any]) -> bool:
    """Whether the request's connection is gone (aborted by the send time-out, or closed); False when the
    server is not this module's protocol."""
    transport = scope.get("extensions", {}).get(CONNECTION_KEY)
    return transport is not None and bool(transport.is_closing())


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """Pass as ``uvicorn.run(..., http=GuardedHttpToolsProtocol)``; limits from the gateway's settings."""

    # connections of this process still sending a header section, oldest first (one event loop per process)
    pending: ClassVar[OrderedDict[HttpToolsProtocol, None]] = OrderedDict()

    @staticmethod
    def limits(settings: Settings) -> tuple[float, int, float]:
        """(header time-out, pending connections, send time-out) of this server."""
        return (settings.gateway_header_timeout_s, settings.gateway_max_pending_connections,
                settings.gateway_send_timeout_s)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.header_timeout_s, self.max_pending, self.send_timeout_s = self.limits(get_settings())
        self._header_timer: asyncio.TimerHandle | None = None
        self._write_paused_at: float | None = None
        self._write_timer: asyncio.TimerHandle | None = None

    def _await_headers(self) -> None:
        if self._header_timer is not None:
            return  # the deadline runs from the request's first byte (or the connection's opening)
        self._header_timer = self.loop.call_later(self.header_timeout_s, self._header_timeout)
        pending = type(self).pending
        pending[self] = None
        while len(pending) > self.max_pending:
            oldest, _ = pending.popitem(last=False)
            assert isinstance(oldest, GuardedHttpToolsProtocol)
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
        extensions = cast(dict[str, Any], self.scope.setdefault("extensions", {}))
        extensions[CONNECTION_KEY] = self.transport
        super().on_headers_complete()
        self.cycle.transport = _HeldHeaders(self.transport, self.cycle)  # type: ignore[assignment]

    # One timer per time-out period, not per pause: a download pauses and resumes writing for every few
    # buffers; the timer checks, when it fires, whether writing has been paused since long enough.
    def pause_writing(self) -> None:
        super().pause_writing()
        self._write_paused_at = self.loop.time()
        if self._write_timer is None:
            self._write_timer = self.loop.call_at(self._write_paused_at + self.send_timeout_s, self._check_write)

    def resume_writing(self) -> None:
        self._write_paused_at = None
        super().resume_writing()

    def _check_write(self) -> None:
        self._write_timer = None
        if self._write_paused_at is None:
            return  # writing again: the next pause arms the timer
        due = self._write_paused_at + self.send_timeout_s
        if self.loop.time() >= due:
            self.transport.abort()  # close() would wait for the buffers the client never reads
        else:
            self._write_timer = self.loop.call_at(due, self._check_write)

    def connection_lost(self, exc: Exception | None) -> None:
        self._headers_done()
        if self._write_timer is not None:
            self._write_timer.cancel()
            self._write_timer = None
        self._write_paused_at = None
        super().connection_lost(exc)


class _HeldHeaders:
    """The connection as one response cycle writes to it: the status line and headers are held back until the
    body's first bytes and go out with them in one ``writelines`` (uvloop: one ``writev``, no copy), so a small
    answer is one system call and one segment (and wakes its client once) instead of two. Headers of a response
    without body bytes (HEAD, 304, an empty body) go when the response completes, or before a close.

    On this VM the write that wakes the waiting client was a third of a 1 KiB GET's Python CPU in py-spy, and
    the body's separate write and segment more.

    The cycle is held by a weak reference: the cycle holds this object as its transport, and a strong reference
    back made each request's cycle, scope and headers garbage for the cyclic collector (about 10 objects a
    request, the collector's runs and their pauses) instead of freed when the request ends.
    """

    __slots__ = ("_cycle", "_held", "_started", "_transport")

    def __init__(self, transport: asyncio.Transport, cycle: Any) -> None:
        self._transport = transport
        self._cycle = weakref.ref(cycle)
        self._held: bytes | None = None
        self._started = False
        done = cycle.on_response

        def on_response() -> None:
            self.flush()
            done()

        cycle.on_response = on_response

    def write(self, data: bytes) -> None:
        if self._held is not None:
            held, self._held = self._held, None
            self._transport.writelines((held, data))
        elif not self._started and _response_started(self._cycle()):  # the header block (a 100 Continue goes as is)
            self._started = True
            self._held = data
        else:
            self._transport.write(data)

    def flush(self) -> None:
        if self._held is not None:
            held, self._held = self._held, None
            self._transport.write(held)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def _response_started(cycle: Any) -> bool:
    return cycle is not None and bool(cycle.response_started)


class ApiHttpToolsProtocol(GuardedHttpToolsProtocol):
    """The same guards for `tierpilot api`, with the API's limits."""

    pending: ClassVar[OrderedDict[HttpToolsProtocol, None]] = OrderedDict()

    @staticmethod
    def limits(settings: Settings) -> tuple[float, int, float]:
        return settings.api_header_timeout_s, settings.api_max_pending_connections, settings.api_send_timeout_s
