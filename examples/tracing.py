"""Tracing with OpenTelemetry: one trace through the client and the server.

Run it (the OpenTelemetry SDK records the spans: ``pip install opentelemetry-sdk``)::

    python examples/tracing.py

It starts itself as a stdio server (``--serve``) and calls it. Both sides trace every
request with ``tracing()``, and a console exporter prints each span as it ends, one line each:
the client's on stdout, the server's on stderr (a stdio server's stdout is the wire). The
server's span for a call is the child of the client's: the client sent its trace context in the
request's ``params._meta``. Replace the console exporter with an OTLP one to send the spans to
a collector (docs/how-to/trace-with-opentelemetry.md).
"""

import sys

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

import minimcp
from minimcp import Server
from minimcp.engine.tracing import tracing
from minimcp.errors import RPCError, ToolError


def short(number, digits):
    """An id in hex, cut to its first 8 digits: enough to tell the spans of one run apart."""
    return f"{number:0{digits}x}"[:8]


def one_line(span):
    """A span as one line (the console exporter's default is the span's whole JSON)."""
    parent = short(span.parent.span_id, 16) if span.parent else "-"
    line = (f"{span.kind.name:<8} {span.name:<26} trace {short(span.context.trace_id, 32)} "
            f"span {short(span.context.span_id, 16)} parent {parent}")
    error = span.attributes.get("error.type")
    return line + (f" error.type={error}" if error else "") + "\n"


def trace_to_console(service, out):
    """Make the spans of this process, as ``service``, and print each to ``out`` as it ends."""
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=out, formatter=one_line)))
    trace.set_tracer_provider(provider)


# -- the server side -------------------------------------------------------------------------

WEATHER = {"Kraków": "22°C, sunny", "London": "14°C, rain"}

server = Server("weather", middleware=[tracing()])


@server.tool()
def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    if city not in WEATHER:
        raise ToolError(f"no weather for {city}")
    return f"{city}: {WEATHER[city]}"


# -- the client side -------------------------------------------------------------------------

def main() -> None:
    trace_to_console("weather-client", sys.stdout)
    with trace.get_tracer("example").start_as_current_span("check the weather"):
        with minimcp.connect([sys.executable, __file__, "--serve"], middleware=[tracing()]) as client:
            client.call_tool("get_weather", {"city": "Kraków"})
            client.call_tool("get_weather", {"city": "Atlantis"})  # a tool error: an answer, isError
            try:
                client.call_tool("get_forecast", {"city": "Kraków"})  # no such tool: a JSON-RPC error
            except RPCError:
                pass


if __name__ == "__main__":
    if "--serve" in sys.argv:
        trace_to_console("weather-server", sys.stderr)
        server.run()
    else:
        main()
