"""The official SDK's contender: the echo tool on its high-level server, stdio transport.

``MCPServer`` in mcp>=2; it was called ``FastMCP`` before (mcp 1.x).
"""

try:
    from mcp.server.mcpserver import MCPServer
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as MCPServer

server = MCPServer("bench-echo")


@server.tool()
def echo(text: str) -> str:
    """Return the text."""
    return text


server.run()
