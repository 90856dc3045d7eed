"""The official MCP Python SDK as a traced stdio server (run in the SDK's venv)::

    SDK_PYTHON official_traced_server.py SPANS.json

One tool, ``echo``. The SDK makes a span for every request it answers (its
OpenTelemetryMiddleware, on by default), whose parent is the trace context in the request's
``_meta``; every span is written to SPANS.json when the client closes stdin
(tests/interop/otel_spans.py).
"""

import sys

from otel_spans import record_spans

record_spans(sys.argv[1])  # (before mcp loads: its tracer then finds this provider)

from mcp.server.mcpserver import MCPServer  # noqa: E402

server = MCPServer("sdk-traced")


@server.tool()
def echo(text: str) -> str:
    """Say it back."""
    return f"sdk says {text}"


server.run("stdio")
