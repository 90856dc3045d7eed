"""Old path of :mod:`minimcp.client.adapters` (``from minimcp.adapters import ...`` keeps working)."""

from .client.adapters import *  # noqa: F401,F403
