"""Old path of :mod:`minimcp.client.hub` (``from minimcp.hub import ToolHub`` keeps working)."""

from .client.config import parse_entry
from .client.hub import MAX_NAME, SEPARATOR, Target, ToolHub, qualified_names
from .errors import ServerStartError  # (it lived here before errors.py)

__all__ = ["ToolHub", "qualified_names", "ServerStartError", "MAX_NAME", "SEPARATOR", "Target", "parse_entry"]
