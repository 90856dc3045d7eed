"""Spans kept in memory and written out as JSON when the process exits: the OpenTelemetry set-up
of every process in the tracing interop tests (tests/test_tracing.py), minimcp's and the official
SDK's alike, so each side's spans can be read back by the test: ``record_spans(path)``."""

import atexit
import json

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


def span_record(span):
    """One finished span as plain JSON data: ids in hex, as the W3C ``traceparent`` writes them."""
    return {
        "name": span.name,
        "kind": span.kind.name,
        "scope": span.instrumentation_scope.name if span.instrumentation_scope else None,
        "trace_id": format(span.context.trace_id, "032x"),
        "span_id": format(span.context.span_id, "016x"),
        "parent_id": format(span.parent.span_id, "016x") if span.parent else None,
        "parent_remote": span.parent.is_remote if span.parent else None,
        "attributes": dict(span.attributes or {}),
        "status": span.status.status_code.name,
        "description": span.status.description,
        "events": [event.name for event in span.events],
        "links": [format(link.context.span_id, "016x") for link in span.links],
    }


def record_spans(path):
    """Make the global tracer provider keep every span, and write them all to ``path`` (a JSON list)
    at exit. Returns the provider."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)

    def write():
        with open(path, "w", encoding="utf-8") as f:
            json.dump([span_record(span) for span in exporter.get_finished_spans()], f)

    atexit.register(write)
    return provider
