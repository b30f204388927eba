"""OTLP export of sampled requests: a gateway process with TIERPILOT_OTEL_ENDPOINT sends a traced request's
span and its phase spans to a real HTTP receiver; the protobuf it receives is decoded with the OTLP schema."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.gateway.conftest import Gateway, start_gateway, stop
from tests.waiting import wait_until


class _Collector(BaseHTTPRequestHandler):
    received: list[tuple[str, bytes]] = []

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        type(self).received.append((self.path, body))
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *_args: object) -> None:
        return


@pytest.fixture
def collector() -> Iterator[str]:
    _Collector.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_traced_request_is_exported_with_its_phases(gateway: Gateway, collector: str, db_url: str,
                                                      data_dir: Path) -> None:
    url, proc = start_gateway(db_url, data_dir / "obs-otel-gateway.log",
                              {"TIERPILOT_OTEL_ENDPOINT": collector, "OTEL_BSP_SCHEDULE_DELAY": "100",
                               "TIERPILOT_TRACE_SAMPLE_RATE": "0"})
    try:
        s3 = Gateway(url=url, proc=proc, log=gateway.log, users=gateway.users, tier_dirs={}).client("alice")
        s3.meta.events.register("before-sign.s3", lambda request, **_: request.headers.__setitem__(
            "X-Tierpilot-Trace", "1"))
        bucket = f"x-{uuid.uuid4().hex[:10]}"
        s3.create_bucket(Bucket=bucket)
        request_id = s3.put_object(Bucket=bucket, Key="k", Body=b"o" * 4096)["ResponseMetadata"]["RequestId"]
        seen: dict[str, list[object]] = {}

        def exported_put() -> list[object]:
            seen.clear()
            for path, body in list(_Collector.received):
                assert path == "/v1/traces"
                request = ExportTraceServiceRequest.FromString(body)
                for resource in request.resource_spans:
                    for scope in resource.scope_spans:
                        for span in scope.spans:
                            seen.setdefault(span.name, []).append(span)
            return [s for s in seen.get("PUT object", [])
                    if any(a.key == "tierpilot.request_id" and a.value.string_value == request_id
                           for a in s.attributes)]  # type: ignore[attr-defined]

        puts = wait_until(exported_put, message=lambda: f"no span of {request_id} reached the collector; "
                                                        f"got {sorted(seen)}")
        spans = seen
        parent = puts[0]
        children = [s for name in ("headers", "auth", "lookup", "admission", "transfer", "commit", "response")
                    for s in spans.get(name, []) if s.parent_span_id == parent.span_id]  # type: ignore[attr-defined]
        assert {s.name for s in children} == {"headers", "auth", "lookup", "admission", "transfer", "commit",  # type: ignore[attr-defined]
                                              "response"}
        for child in children:
            assert parent.start_time_unix_nano <= child.start_time_unix_nano  # type: ignore[attr-defined]
            assert child.end_time_unix_nano <= parent.end_time_unix_nano  # type: ignore[attr-defined]
    finally:
        stop(proc)
