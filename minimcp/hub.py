"""Old path of :mod:`minimcp.client.hub` (``from minimcp.hub import ToolHub`` keeps working)."""

from .client.hub import ToolHub, qualified_names  # noqa: F401

__all__ = ["ToolHub", "qualified_names"]
