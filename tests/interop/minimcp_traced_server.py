"""A minimcp server traced with ``minimcp.engine.tracing``, for the tracing tests::

    python minimcp_traced_server.py SPANS.json

over stdio. Tools: ``echo`` and ``ask`` (which asks the client to sample: its answer's text).
Every span is written to SPANS.json at exit (tests/interop/otel_spans.py).
"""

import sys

from otel_spans import record_spans

from minimcp import Context, Server
from minimcp.engine.tracing import tracing

record_spans(sys.argv[1])
server = Server("minimcp-traced", middleware=[tracing()])


@server.tool()
def echo(text: str) -> str:
    """Say it back."""
    return f"minimcp says {text}"


@server.tool()
def ask(question: str, ctx: Context) -> str:
    """Ask the client's model."""
    return str(ctx.sample(question, max_tokens=20)["content"]["text"])


server.run()
