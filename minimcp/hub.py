"""Old path of :mod:`minimcp.client.hub` (``from minimcp.hub import ToolHub`` keeps working)."""

from .client.hub import ToolHub, qualified_names  # noqa: F401
from .errors import ServerStartError  # noqa: F401  (it lived here before errors.py)

__all__ = ["ToolHub", "qualified_names", "ServerStartError"]
