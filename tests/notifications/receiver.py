"""A real webhook receiver on 127.0.0.1 (http.server in a thread), and the verification recipe of
docs/webhooks.md, taken from the doc itself so the two cannot drift apart."""

from __future__ import annotations

import json
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
    received: list[dict[str, Any]] = field(default_factory=list)
    raw: list[bytes] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)


@contextmanager
def running_receiver() -> Iterator[Receiver]:
    """A receiver listening on a free 127.0.0.1 port for the duration of the block."""
    port = free_port()
    box = Receiver(url=f"http://127.0.0.1:{port}/hook", answers=[])

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers["content-length"]))
            box.raw.append(body)
            box.received.append(json.loads(body))
            box.headers.append({k.lower(): v for k, v in self.headers.items()})
            status = box.answers.pop(0) if box.answers else 200
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
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
