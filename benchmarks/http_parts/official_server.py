"""The official SDK's contender: the echo tool on ``MCPServer`` (``FastMCP`` in mcp 1.x), under uvicorn.

    benchmarks/.venv-mcp/bin/python benchmarks/http_parts/official_server.py PORT

Its fastest Streamable HTTP mode: ``stateless_http=True`` (no sessions) and
``json_response=True`` (plain JSON answers, no SSE). It serves the
2026-07-28 wire too (the session manager routes a request whose
``MCP-Protocol-Version`` is not a handshake version to its single-exchange
entry). The app is what ``server.run("streamable-http")`` would build; uvicorn
is started here only to turn its access log off, and the log level is
WARNING (the default, INFO, writes "Terminating session: None" to stderr
for every stateless request), as the other contenders' servers do not log
requests either.
"""

import sys

import uvicorn

try:
    from mcp.server.mcpserver import MCPServer
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as MCPServer

server = MCPServer("bench-echo", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    """Return the text."""
    return text


if __name__ == "__main__":
    app = server.streamable_http_app(json_response=True, stateless_http=True)
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False)
