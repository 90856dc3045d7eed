"""The MCP server the Flask and Django mount tests serve (tests/test_mounts.py)."""

from minimcp import Context, Server

server = Server("mounted", version="1.0.0")


@server.tool()
def count(n: int, ctx: Context) -> str:
    """Count to n, reporting progress at each step (so the answer is an SSE stream)."""
    for i in range(1, n + 1):
        ctx.report_progress(i, n, f"step {i}")
    return f"counted to {n}"


@server.tool()
def hello(name: str) -> str:
    """Say hello."""
    return f"hello, {name}"
