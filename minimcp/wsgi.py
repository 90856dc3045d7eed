"""Old path of :mod:`minimcp.http.app` (``minimcp.wsgi.bearer_token_auth`` keeps working)."""

from .http.app import MCPApp  # noqa: F401
from .http.security import Unauthorized, bearer_token_auth  # noqa: F401

__all__ = ["MCPApp", "Unauthorized", "bearer_token_auth"]
