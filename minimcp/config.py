"""Host config files: find an MCP server by name, the way Claude Desktop, Claude Code,
Cursor and VS Code do. (Placeholder: the full module is being written.)"""

from typing import Optional

from .errors import MCPError


class ServerNotFound(MCPError, LookupError):
    """No config file names the server asked for; the message lists the files tried."""


def find_server(name: str, config: Optional[str] = None) -> dict:
    """Return the config entry of server ``name``: ``{"command": [...], "env", "cwd"}`` or ``{"url", "headers"}``."""
    raise ServerNotFound(f"no MCP server named {name!r}: host config files are not read yet")
