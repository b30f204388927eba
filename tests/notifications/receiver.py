"""A real webhook receiver on 127.0.0.1 (http.server in a thread), and the verification recipe of
docs/webhooks.md, taken from the doc itself so the two cannot drift apart."""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.servers import free_port

WEBHOOKS_DOC = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"


@dataclass
class Receiver:
    url: str
    answers: list[int]  # status codes to give, in order; 200 once they run out
    port: int = 0
    reply_body: bytes = b""  # sent with every answer (what a receiver might leak)
    reply_headers: dict[str, str] = field(default_factory=dict)
    received: list[dict[str, Any]] = field(default_factory=list)
    raw: list[bytes] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)


@contextmanager
def allow_listed(entries: str) -> Iterator[None]:
    """TIERPILOT_WEBHOOK_ALLOW_HOSTS is ``entries`` for the duration of the block (an admin's setting)."""
    from tierpilot.kit.settings import get_settings

    before = os.environ.get("TIERPILOT_WEBHOOK_ALLOW_HOSTS")
    os.environ["TIERPILOT_WEBHOOK_ALLOW_HOSTS"] = entries
    get_settings.cache_clear()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TIERPILOT_WEBHOOK_ALLOW_HOSTS", None)
        else:
            os.environ["TIERPILOT_WEBHOOK_ALLOW_HOSTS"] = before
        get_settings.cache_clear()


@contextmanager
def running_receiver(allow: bool = True) -> Iterator[Receiver]:
    """A receiver listening on a free 127.0.0.1 port for the duration of the block; ``allow``: its
    address is allow-listed (loopback is refused otherwise, as for any internal receiver)."""
    port = free_port()
    box = Receiver(url=f"http://127.0.0.1:{port}/hook", answers=[], port=port)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers["content-length"]))
            box.raw.append(body)
            box.received.append(json.loads(body))
            box.headers.append({k.lower(): v for k, v in self.headers.items()})
            status = box.answers.pop(0) if box.answers else 200
            self.send_response(status)
            for name, value in box.reply_headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(box.reply_body)))
            self.end_headers()
            self.wfile.write(box.reply_body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        if allow:
            with allow_listed(f"127.0.0.1:{port}"):
                yield box
        else:
            yield box
    finally:
        server.shutdown()
        server.server_close()


def documented_verify() -> Callable[..., bool]:
    """The `verify` function of the doc's Python snippet, executed as a receiver would paste it."""
    blocks = re.findall(r"```python\n(.*?)```", WEBHOOKS_DOC.read_text(), re.S)
    assert len(blocks) == 1, "docs/webhooks.md should hold one Python snippet"
    namespace: dict[str, Any] = {}
    exec(blocks[0], namespace)  # noqa: S102 - our own documentation, run as its readers would
    verify: Callable[..., bool] = namespace["verify"]
    return verify
