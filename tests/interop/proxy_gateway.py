"""A minimcp proxy in front of three servers, for tests/test_proxy.py: server-everything over
stdio (``every__``), the official Python SDK's server over HTTP (``sdk__``, in the handshake
era, where its tools can ask the client) and a minimcp server in this process (``mini__``).

    python proxy_gateway.py PORT SDK_URL -- EVERYTHING_COMMAND ...

Serves Streamable HTTP at http://127.0.0.1:PORT/mcp until SIGTERM.
"""

import sys

from minimcp import Context, Server
from minimcp.integrations.proxy import ProxyServer

port, sdk_url = int(sys.argv[1]), sys.argv[2]
everything = sys.argv[sys.argv.index("--") + 1:]

mini = Server("mini")


@mini.tool()
def ask_model(question: str, ctx: Context) -> str:
    """Ask the caller's model."""
    return "model said " + ctx.sample(question, max_tokens=20)["content"]["text"]


@mini.tool()
def count(n: int, ctx: Context) -> str:
    """Count, with progress."""
    for i in range(1, n + 1):
        ctx.report_progress(i, n, f"step {i}")
    return f"counted to {n}"


@mini.resource("mini://hello")
def hello() -> str:
    """A greeting."""
    return "hello from mini"


@mini.prompt()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Hello {name}"


proxy = ProxyServer("gateway", start_timeout=30.0)
proxy.mount("every", everything, on_stderr=lambda line: None)
proxy.mount("sdk", sdk_url, protocol="2025-11-25")
proxy.mount("mini", mini)
proxy.run("http", port=port, quiet=True)
