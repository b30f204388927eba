"""Optional OpenTelemetry export of the sampled gateway requests (OTLP over HTTP).

On only when ``TIERPILOT_OTEL_ENDPOINT`` or the standard ``OTEL_EXPORTER_OTLP_ENDPOINT`` names a collector:
then each request whose trace the sampler keeps becomes one span (named after the S3 operation, with the
request id as an attribute) with one child span per phase, sent in batches by the SDK's background thread.
When neither is set the SDK is not even imported.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from tierpilot.kit.settings import get_settings
from tierpilot.kit.tracing import now_ns
from tierpilot.traces.service import Finished


def endpoint() -> str:
    """The collector's base URL, or "" when export is off."""
    return get_settings().otel_endpoint or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "")


class OtlpExport:
    """Turns finished requests into spans and hands them to a batching OTLP exporter."""

    def __init__(self, base_url: str, service: str = "tierpilot-gateway") -> None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        self._provider = TracerProvider(resource=Resource.create({"service.name": service}))
        exporter = OTLPSpanExporter(endpoint=base_url.rstrip("/") + "/v1/traces")
        self._provider.add_span_processor(BatchSpanProcessor(exporter))
        self._tracer = self._provider.get_tracer("tierpilot.gateway")

    def __call__(self, done: Finished) -> None:
        from opentelemetry import trace

        rec = done.recorder
        epoch0 = time.time_ns() - (now_ns() - rec.t0)  # the request's start on the wall clock
        attributes: dict[str, Any] = {"tierpilot.request_id": done.request_id, "http.response.status_code": done.status,
                                      "tierpilot.bytes": done.nbytes, "s3.operation": done.operation}
        span = self._tracer.start_span(done.operation, start_time=epoch0, attributes=attributes)
        context = trace.set_span_in_context(span)
        for name, start, duration in rec.phases():
            phase = self._tracer.start_span(name, context=context, start_time=epoch0 + start)
            phase.end(end_time=epoch0 + start + duration)
        span.end(end_time=epoch0 + rec.total_ns())

    def shutdown(self) -> None:
        self._provider.shutdown()


def exporter() -> Callable[[Finished], None] | None:
    """The process's OTLP export, or None when no collector is configured."""
    base = endpoint()
    return OtlpExport(base) if base else None
